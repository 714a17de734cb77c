/**
 * `trellis run --dry-run [--mock task=<json>]`: the CLI's own process against a real Trellis with
 * a worker; what the run did is checked through the API.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loopbackAllowed, startTrellis, users, type Trellis } from '../support/harness.js';
import { addWorkflow, tasksOf, taskLogs } from '../support/engine-support.js';
import { runCli, uniqueName, type CliResult } from '../support/cli.js';

let trellis: Trellis;
let env: Record<string, string>;
const server = createServer((req, res) => {
  calls += 1;
  res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
});
let calls = 0;
let url: string;

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  trellis = await startTrellis({ worker: true, config: loopbackAllowed });
  env = {
    TRELLIS_URL: trellis.baseUrl,
    TRELLIS_USER: users.admin.username,
    TRELLIS_PASSWORD: users.admin.password,
  };
});
afterAll(async () => {
  await trellis?.stop();
  await new Promise((resolve) => server.close(resolve));
});

const trellisCli = (args: string[]) => runCli(args, { env });
const lines = (text: string) => text.split('\n').filter((line) => line !== '');
const printed = (result: CliResult) => `exit ${result.code}\n${result.stdout}\n${result.stderr}`;

describe('trellis run --dry-run', () => {
  it('starts a dry run with the mocks given, which calls nothing and completes', async () => {
    const name = uniqueName('cli-dry');
    const workflowId = await addWorkflow(trellis.admin, {
      name,
      tasks: [{ name: 'Call', type: { plugin: 'Net/Http' }, parameters: { url } }],
    });
    const mock = { status: 201, statusText: 'Created', ok: true, url, headers: {}, body: 'x' };

    const run = await trellisCli([
      'run',
      name,
      '--dry-run',
      '--mock',
      `Call=${JSON.stringify(mock)}`,
      '--follow',
    ]);

    expect(run.code, printed(run)).toBe(0);
    expect(lines(run.stdout)[0]).toBe(
      'Dry run: pure tasks run; every other task returns an output and performs nothing.',
    );
    expect(calls).toBe(0);
    const [execution] = await trellis.admin.GET('/workflows/{workflowId}/executions', {
      params: { path: { workflowId } },
    });
    expect(execution).toMatchObject({ status: 'Completed', dryRun: true });
    const tasks = await tasksOf(trellis.admin, workflowId, execution!.id);
    expect(await taskLogs(trellis.admin, workflowId, execution!.id, tasks.Call!.id)).toContain(
      "Dry run: output from the request's mock; Net/Http (effects: calls) was not run.",
    );
  });

  it('refuses --mock without --dry-run, a mock that is not JSON, and a mock of no task', async () => {
    const name = uniqueName('cli-dry-bad');
    await addWorkflow(trellis.admin, {
      name,
      tasks: [{ name: 'Call', type: { plugin: 'Net/Http' }, parameters: { url } }],
    });

    const withoutDryRun = await trellisCli(['run', name, '--mock', 'Call={}']);
    expect(withoutDryRun.code, printed(withoutDryRun)).not.toBe(0);
    expect(withoutDryRun.stderr).toContain('--mock is only for a dry run');

    const notJson = await trellisCli(['run', name, '--dry-run', '--mock', 'Call=oops']);
    expect(notJson.code, printed(notJson)).not.toBe(0);
    expect(notJson.stderr).toContain('The output of Call is not JSON');

    const noTask = await trellisCli(['run', name, '--dry-run', '--mock', 'Cal={}']);
    expect(noTask.code, printed(noTask)).not.toBe(0);
    expect(noTask.stderr).toContain('body.mocks.Cal');
    expect(calls).toBe(0);
  });
});
