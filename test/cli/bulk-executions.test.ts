/**
 * `trellis executions rerun|cancel` in bulk, the real command against a real Trellis: a dry run
 * that shows which failures it would rerun on which revision and changes nothing, a refusal to
 * act without `--yes` off a terminal, the rerun on the latest revision, and a cancel of a run.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TrellisClient } from '../../sdk/src/index.js';
import { basicAs, clientIn, startTrellis, users, type Trellis } from '../support/harness.js';
import { addWorkflow, delay, untilStatuses } from '../support/engine-support.js';
import { runCli, uniqueName, type CliResult } from '../support/cli.js';

let trellis: Trellis;
let client: TrellisClient;
let env: Record<string, string>;

beforeAll(async () => {
  trellis = await startTrellis({ worker: true });
  const project = uniqueName('cli-bulk');
  await trellis.admin.POST('/projects', { body: { name: project } });
  client = clientIn(trellis, basicAs('admin'), project);
  env = {
    TRELLIS_URL: trellis.baseUrl,
    TRELLIS_USER: users.admin.username,
    TRELLIS_PASSWORD: users.admin.password,
    TRELLIS_PROJECT: project,
  };
});
afterAll(async () => {
  await trellis?.stop();
});

const trellisCli = (args: string[]) => runCli(args, { env });
const printed = (result: CliResult) => `exit ${result.code}\n${result.stdout}\n${result.stderr}`;

/** B fails reading an output A does not have (revision 1); revision 2 logs a plain message. */
const reporting = (name: string, message: string) => ({
  name,
  tasks: [
    { name: 'A', type: { plugin: 'Flow/NoOp' } },
    { name: 'B', type: { plugin: 'Flow/Log' }, dependencies: ['A'], parameters: { message } },
  ],
});

async function failedRun(workflowId: string): Promise<string> {
  const { executionId } = await client.POST('/workflows/{workflowId}/executions', {
    params: { path: { workflowId } },
    body: { workflowId },
  });
  expect((await client.waitForExecution(workflowId, executionId)).status).toBe('Failed');
  return executionId;
}

const executionsOf = async (workflowId: string) =>
  client.GET('/executions', { params: { query: { workflowId } } });

describe('trellis executions rerun (bulk)', () => {
  it('previews with --dry-run, refuses without --yes, and reruns the failures on the latest revision', async () => {
    const name = uniqueName('Report');
    const workflowId = await addWorkflow(
      client,
      reporting(name, "$[Outputs('A').missing.deeper + 1]"),
    );
    const failures = [await failedRun(workflowId), await failedRun(workflowId)];
    await client.PUT('/workflows/{workflowId}', {
      params: { path: { workflowId } },
      body: { workflowId, definition: JSON.stringify(reporting(name, 'fixed')) },
    });

    const selection = ['executions', 'rerun', name, '--status', 'Failed', '--since', '1h'];
    const dryRun = await trellisCli([...selection, '--latest', '--dry-run']);
    expect(dryRun.code, printed(dryRun)).toBe(0);
    for (const id of failures) {
      expect(dryRun.stdout).toMatch(
        new RegExp(`${id}\\s+${name}\\s+Failed\\s+would rerun\\s+1 → 2`),
      );
    }
    expect(dryRun.stdout).toContain('2 executions selected: 2 would be rerun, 0 skipped.');
    expect(await executionsOf(workflowId)).toHaveLength(2);

    const unconfirmed = await trellisCli([...selection, '--latest']);
    expect(unconfirmed.code, printed(unconfirmed)).toBe(1);
    expect(unconfirmed.stderr).toContain('Nothing was done: 2 executions would be rerun.');
    expect(unconfirmed.stderr).toContain('Add --yes');
    expect(await executionsOf(workflowId)).toHaveLength(2);

    const done = await trellisCli([...selection, '--latest', '--yes', '--json']);
    expect(done.code, printed(done)).toBe(0);
    const answer = JSON.parse(done.stdout) as {
      preview: boolean;
      counts: { acted: number };
      executions: { executionId: string; newExecutionId: string; rerunRevision: number }[];
    };
    expect(answer).toMatchObject({ preview: false, counts: { acted: 2 } });
    expect(answer.executions.map((item) => item.executionId).sort()).toEqual([...failures].sort());
    for (const item of answer.executions) {
      expect(await client.waitForExecution(workflowId, item.newExecutionId)).toMatchObject({
        status: 'Completed',
        revision: 2,
        rerunOf: item.executionId,
      });
    }
  });

  it('says how to select when nothing is selected, and refuses bulk options beside an id', async () => {
    const none = await trellisCli(['executions', 'rerun']);
    expect(none.code, printed(none)).toBe(2);
    expect(none.stderr).toContain('Say which executions');
    const mixed = await trellisCli(['executions', 'cancel', 'Any', 'some-id', '--yes']);
    expect(mixed.code, printed(mixed)).toBe(2);
    expect(mixed.stderr).toContain('--yes select executions in bulk');
  });
});

describe('trellis executions cancel (bulk)', () => {
  it('cancels the running executions named by --id, skipping one that is over', async () => {
    const workflowId = await addWorkflow(client, {
      name: uniqueName('Waiting'),
      tasks: [{ name: 'Wait', ...delay(120_000) }],
    });
    const { executionId: running } = await client.POST('/workflows/{workflowId}/executions', {
      params: { path: { workflowId } },
      body: { workflowId },
    });
    await untilStatuses(client, workflowId, running, { Wait: 'Running' });
    const over = await failedRun(
      await addWorkflow(client, reporting(uniqueName('Over'), "$[Outputs('A').x.y + 1]")),
    );
    const result = await trellisCli(['executions', 'cancel', '--id', running, over, '--yes']);
    expect(result.code, printed(result)).toBe(0);
    expect(result.stdout).toMatch(new RegExp(`${running}\\s+\\S+\\s+Running\\s+cancel requested`));
    expect(result.stdout).toMatch(new RegExp(`${over}\\s+\\S+\\s+Failed\\s+skipped\\s+Execution`));
    expect(result.stdout).toContain('2 executions selected: 1 canceled, 1 skipped.');
    expect(await client.waitForExecution(workflowId, running)).toMatchObject({
      status: 'Canceled',
    });
  });
});
