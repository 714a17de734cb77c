/**
 * Projects in Temporal, as an operator sees them: every run carries its project's name in the
 * `TrellisProject` search attribute and in its details, whatever started it (the API, a
 * schedule, a subworkflow task, a forEach task's chunk), so `TrellisProject="<name>"` lists one
 * project's runs and nothing of another's.
 */
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { executionWorkflowId, scheduleId } from '#protocol/ids.js';
import { TrellisProject } from '#protocol/search-attributes.js';
import type { TrellisClient } from '../../sdk/src/index.js';
import { basicAs, clientIn, startTrellis, type Trellis } from '../support/harness.js';
import { addWorkflow, definition, eventually, noop, start } from '../support/engine-support.js';

let trellis: Trellis;
let temporal: Client;
let project: string;
let inProject: TrellisClient;

beforeAll(async () => {
  trellis = await startTrellis({ worker: true });
  temporal = trellis.temporal.client;
  project = `ops-${randomUUID().slice(0, 8)}`;
  await trellis.admin.POST('/projects', { body: { name: project } });
  inProject = clientIn(trellis, basicAs('admin'), project);
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
