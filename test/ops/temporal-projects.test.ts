/**
 * Projects in Temporal, as an operator sees them: every run carries its project's name in the
 * `TrellisProject` search attribute and in its details, whatever started it (the API, a
 * schedule, a subworkflow task, a forEach task's chunk), so `TrellisProject="<name>"` lists one
 * project's runs. A project mapped to a namespace of its own (`Projects.Namespaces`) runs there,
 * its runs canceled and approved there too, while `default`'s stay in `Temporal.Namespace`.
 */
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { executionWorkflowId, scheduleId } from '#protocol/ids.js';
import { TrellisProject } from '#protocol/search-attributes.js';
import type { TrellisClient } from '../../sdk/src/index.js';
import { basicAs, clientIn, startTrellis, type Trellis } from '../support/harness.js';
import { testServices } from '../support/services.js';
import {
  addWorkflow,
  approvalsOncePaused,
  decideApproval,
  definition,
  delay,
  eventually,
  noop,
  start,
  untilStatuses,
} from '../support/engine-support.js';

let trellis: Trellis;
let temporal: Client;
let project: string;
let inProject: TrellisClient;
/** A project mapped to a namespace of its own, and a client of that namespace. */
let partner: { name: string; client: TrellisClient; temporal: Client };

beforeAll(async () => {
  const { temporalAddress } = testServices();
  const namespace = `trellis-partner-${randomUUID().slice(0, 8)}`;
  const connection = await Connection.connect({ address: temporalAddress });
  await connection.workflowService.registerNamespace({
    namespace,
    workflowExecutionRetentionPeriod: msToTs('1 day'),
  });
  await connection.close();
  const partnerName = `partner-${randomUUID().slice(0, 8)}`;
  trellis = await startTrellis({
    worker: true,
    config: { Projects: { Namespaces: { [partnerName]: namespace } } },
  });
  temporal = trellis.temporal.client;
  project = `ops-${randomUUID().slice(0, 8)}`;
  await trellis.admin.POST('/projects', { body: { name: project } });
  inProject = clientIn(trellis, basicAs('admin'), project);
  await trellis.admin.POST('/projects', { body: { name: partnerName } });
  partner = {
    name: partnerName,
    client: clientIn(trellis, basicAs('admin'), partnerName),
    temporal: new Client({ connection: trellis.temporal.connection, namespace }),
  };
});
afterAll(async () => {
  await trellis?.stop();
});

/** The Temporal workflow ids of the runs listed by `query`, once they are `count`. */
async function listed(client: Client, query: string, count: number): Promise<string[]> {
  return eventually(async () => {
    const ids: string[] = [];
    for await (const run of client.workflow.list({ query })) ids.push(run.workflowId);
    expect(ids).toHaveLength(count);
    return ids.sort();
  });
}

describe('TrellisProject', () => {
  it("is set on the runs the API, a schedule, a subworkflow and a forEach start, with the project's name", async () => {
    const called = await addWorkflow(inProject, definition([{ name: 'Inner', type: noop }]));
    const { workflowId, executionId } = await start(
      inProject,
      definition([
        { name: 'Call', workflow: called },
        { name: 'Each', type: noop, forEach: { items: '[1, 2]' }, dependencies: ['Call'] },
      ]),
    );
    const finished = await inProject.waitForExecution(workflowId, executionId, {
      timeoutMs: 30_000,
    });
    expect(finished.status).toBe('Completed');
    const description = await temporal.workflow
      .getHandle(executionWorkflowId(executionId))
      .describe();
    expect(description.typedSearchAttributes.get(TrellisProject)).toBe(project);
    expect(await description.staticDetails()).toContain(`Project: ${project}`);

    const { triggerId } = await inProject.POST('/workflows/{workflowId}/triggers', {
      params: { path: { workflowId: called } },
      body: {
        workflowId: called,
        type: 'TimeBased',
        status: 'DeActive',
        properties: { cron: '0 0 1 1 *' },
      },
    });
    const schedule = temporal.schedule.getHandle(scheduleId(triggerId));
    const { action } = await schedule.describe();
    expect(action.type === 'startWorkflow' && action.staticDetails).toContain(
      `Project: ${project}`,
    );
    await schedule.trigger();

    // The run, its subworkflow's child, its forEach chunk, and the scheduled run.
    const runs = await listed(temporal, `TrellisProject="${project}"`, 4);
    expect(runs).toContain(executionWorkflowId(executionId));
    expect(runs.filter((id) => id.startsWith('trellis-foreach-'))).toHaveLength(1);
    expect(runs.filter((id) => id.startsWith('trellis-scheduled-'))).toHaveLength(1);
  });

  it('is "default" on the runs of a client that names no project', async () => {
    const { workflowId, executionId } = await start(
      trellis.admin,
      definition([{ name: 'Only', type: noop }]),
    );
    await trellis.admin.waitForExecution(workflowId, executionId);
    const description = await temporal.workflow
      .getHandle(executionWorkflowId(executionId))
      .describe();
    expect(description.typedSearchAttributes.get(TrellisProject)).toBe('default');
  });
});

describe('a project mapped to a namespace of its own', () => {
  it('runs there with its TrellisProject; a default run stays in Temporal.Namespace', async () => {
    const called = await addWorkflow(partner.client, definition([{ name: 'Inner', type: noop }]));
    const { workflowId, executionId } = await start(
      partner.client,
      definition([{ name: 'Call', workflow: called }]),
    );
    const finished = await partner.client.waitForExecution(workflowId, executionId, {
      timeoutMs: 30_000,
    });
    expect(finished.status).toBe('Completed');
    const runs = await listed(partner.temporal, `TrellisProject="${partner.name}"`, 2);
    expect(runs).toContain(executionWorkflowId(executionId));
    await expect(
      temporal.workflow.getHandle(executionWorkflowId(executionId)).describe(),
    ).rejects.toThrow(/not found/i);

    const other = await start(trellis.admin, definition([{ name: 'Only', type: noop }]));
    await trellis.admin.waitForExecution(other.workflowId, other.executionId);
    // The run records its end in Trellis a moment before its Temporal workflow closes.
    await eventually(async () =>
      expect(
        (await temporal.workflow.getHandle(executionWorkflowId(other.executionId)).describe())
          .status.name,
      ).toBe('COMPLETED'),
    );
  });

  it('has its runs canceled and approved there, and its schedules there', async () => {
    const waiting = await start(partner.client, definition([{ name: 'Wait', ...delay(60_000) }]));
    await untilStatuses(partner.client, waiting.workflowId, waiting.executionId, {
      Wait: 'Running',
    });
    await partner.client.POST('/workflows/{workflowId}/executions/{executionId}/cancel', {
      params: { path: waiting },
    });
    expect(
      (await partner.client.waitForExecution(waiting.workflowId, waiting.executionId)).status,
    ).toBe('Canceled');

    const gated = await start(
      partner.client,
      definition([{ name: 'Gate', type: noop, manualApproval: { enabled: true, comment: 'Go?' } }]),
    );
    const [approval] = await approvalsOncePaused(
      partner.client,
      gated.workflowId,
      gated.executionId,
    );
    await decideApproval(
      partner.client,
      gated.workflowId,
      gated.executionId,
      approval!.id,
      'approve',
    );
    expect(
      (await partner.client.waitForExecution(gated.workflowId, gated.executionId)).status,
    ).toBe('Completed');

    const { triggerId } = await partner.client.POST('/workflows/{workflowId}/triggers', {
      params: { path: { workflowId: gated.workflowId } },
      body: {
        workflowId: gated.workflowId,
        type: 'TimeBased',
        status: 'DeActive',
        properties: { cron: '0 0 1 1 *' },
      },
    });
    await partner.temporal.schedule.getHandle(scheduleId(triggerId)).describe();
    await expect(temporal.schedule.getHandle(scheduleId(triggerId)).describe()).rejects.toThrow();
  });
});
