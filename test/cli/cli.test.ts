/**
 * The `trellis` command end to end: the CLI's own process (spawned, stdout and stderr pipes, as
 * in a CI job) against a real Trellis with a worker, checked by its output and exit codes and,
 * where it changes something, by what the API shows afterwards.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintToken, startTrellis, users, type Trellis } from '../support/harness.js';
import { addWorkflow } from '../support/engine-support.js';
import {
  cliEnvironment,
  cliFolder,
  runCli,
  sourceCommand,
  totalsWorkflow as totals,
  uniqueName,
  type CliResult,
} from '../support/cli.js';

let trellis: Trellis;
let folder: string;
let env: Record<string, string>;

beforeAll(async () => {
  trellis = await startTrellis({ worker: true });
  folder = await mkdtemp(path.join(tmpdir(), 'trellis-cli-test-'));
  env = {
    TRELLIS_URL: trellis.baseUrl,
    TRELLIS_USER: users.admin.username,
    TRELLIS_PASSWORD: users.admin.password,
  };
});
afterAll(async () => {
  await trellis?.stop();
  if (folder) await rm(folder, { recursive: true, force: true });
});

const trellisCli = (args: string[], extra: Record<string, string> = {}, input?: string) =>
  runCli(args, { env: { ...env, ...extra }, ...(input === undefined ? {} : { input }) });

/** Writes a definition file for the CLI to read. */
async function definitionFile(definition: object): Promise<string> {
  const file = path.join(folder, `${uniqueName('definition')}.json`);
  await writeFile(file, JSON.stringify(definition));
  return file;
}

/** Adds a workflow through the API and returns its id. */

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const lines = (text: string) => text.split('\n').filter((line) => line !== '');
const json = <T = unknown>(result: CliResult): T => JSON.parse(result.stdout) as T;
/** Shown with a failed expectation: what the command printed. */
const printed = (result: CliResult) => `exit ${result.code}\n${result.stdout}\n${result.stderr}`;

const failing = (name: string) => ({
  name,
  tasks: [
    { name: 'A', type: { plugin: 'Flow/NoOp' } },
    {
      name: 'B',
      type: { plugin: 'Flow/Log' },
      dependencies: ['A'],
      parameters: { message: "$[Outputs('A').missing.deeper + 1]" },
    },
    { name: 'C', type: { plugin: 'Flow/NoOp' }, dependencies: ['B'] },
  ],
});

describe('trellis --help', () => {
  it('explains the program, each command and the environment, and exits 0', async () => {
    const top = await runCli(['--help']);
    expect(top.code, printed(top)).toBe(0);
    expect(top.stdout).toContain('Usage: trellis [options] [command]');
    for (const text of [
      'workflows',
      'run',
      'executions',
      'approvals',
      'TRELLIS_URL',
      'TRELLIS_TOKEN',
    ]) {
      expect(top.stdout).toContain(text);
    }

    const run = await runCli(['run', '--help']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Usage: trellis run [options] <workflow>');
    expect(run.stdout).toMatch(/--input <key=value>/);
    expect(run.stdout).toMatch(/--follow/);
    // The options every command takes are listed with each.
    expect(run.stdout).toMatch(/Global Options:[\s\S]*--url <url>[\s\S]*--json/);

    const logs = await runCli(['executions', 'logs', '--help']);
    expect(logs.stdout).toContain(
      'Usage: trellis executions logs [options] <workflow> <execution>',
    );
    const version = await runCli(['--version']);
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('refuses an unknown command or option with exit code 2 and says so on stderr', async () => {
    const unknown = await runCli(['workflows', 'lst']);
    expect(unknown.code).toBe(2);
    expect(unknown.stdout).toBe('');
    expect(unknown.stderr).toContain("unknown command 'lst'");

    const badInput = await trellisCli(['run', 'Anything', '--input', 'novalue']);
    expect(badInput.code).toBe(2);
    expect(badInput.stderr).toContain('Write it as key=value.');

    const badStatus = await trellisCli(['executions', 'list', 'Anything', '--status', 'Done']);
    expect(badStatus.code).toBe(2);
    expect(badStatus.stderr).toMatch(/Allowed choices are Pending, Running, Paused/);
  });

  it('ends quietly when its reader stops reading (`trellis --help | head -1`)', async () => {
    const [program, ...first] = sourceCommand;
    const child = spawn(program, [...first, '--help'], {
      cwd: cliFolder,
      env: cliEnvironment(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // The reader is gone before the first line: every write the command makes fails with EPIPE.
    child.stdout.destroy();
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const code = await new Promise((resolve) => child.on('close', resolve));
    expect(stderr).toBe('');
    expect(code).toBe(0);
  });
});

describe('trellis workflows', () => {
  it('adds, lists, shows, updates and deletes a workflow', async () => {
    const name = uniqueName('cli-round-trip');
    const definition = {
      name,
      tasks: [{ name: 'Say', type: { plugin: 'Flow/Log' }, parameters: { message: 'one' } }],
    };
    const add = await trellisCli(['workflows', 'add', '-f', await definitionFile(definition)]);
    expect(add.code, printed(add)).toBe(0);
    expect(add.stdout).toContain(`Workflow "${name}" was created.`);
    const id = /id ([0-9a-f-]{36})/.exec(add.stdout)?.[1];
    expect(id).toMatch(uuid);
    expect(
      (
        await trellis.admin.GET('/workflows/{workflowId}', {
          params: { path: { workflowId: id! } },
        })
      ).name,
    ).toBe(name);

    const list = await trellisCli(['workflows', 'list']);
    expect(list.code).toBe(0);
    const [header, ...rows] = lines(list.stdout);
    expect(header).toMatch(/^ID\s+NAME\s+MODIFIED$/);
    expect(rows.find((row) => row.includes(name))).toMatch(
      new RegExp(`^${id}\\s+${name}\\s+\\d{4}-`),
    );

    const listed = json<{ id: string; name: string }[]>(
      await trellisCli(['workflows', 'list', '--json']),
    );
    expect(listed).toContainEqual(expect.objectContaining({ id, name }));

    // By name or by id: the definition, indented, ready to edit and send back.
    const show = await trellisCli(['workflows', 'show', name]);
    expect(show.code).toBe(0);
    expect(JSON.parse(show.stdout)).toEqual(definition);
    expect(show.stdout).toContain('\n  "tasks": [');
    const detail = json<{ id: string; workflow: string }>(
      await trellisCli(['workflows', 'show', id!, '--json']),
    );
    expect(detail).toMatchObject({ id, name, workflow: JSON.stringify(definition) });

    // Update from standard input.
    const changed = {
      ...definition,
      tasks: [{ ...definition.tasks[0], parameters: { message: 'two' } }],
    };
    const update = await trellisCli(
      ['workflows', 'update', name, '-f', '-'],
      {},
      JSON.stringify(changed),
    );
    expect(update.code, printed(update)).toBe(0);
    expect(update.stdout).toMatch(/updated/i);
    const stored = await trellis.admin.GET('/workflows/{workflowId}', {
      params: { path: { workflowId: id! } },
    });
    expect(JSON.parse(stored.workflow)).toEqual(changed);

    // A second workflow of the same name: the server's 409, as JSON on stderr for scripts.
    const file = await definitionFile(definition);
    const duplicate = await trellisCli(['workflows', 'add', '-f', file, '--json']);
    expect(duplicate.code).toBe(1);
    expect(duplicate.stdout).toBe('');
    expect(JSON.parse(duplicate.stderr)).toMatchObject({
      status: 409,
      errors: [{ code: 'workflow.name_taken' }],
    });

    const remove = await trellisCli(['workflows', 'delete', name, '--json']);
    expect(remove.code, printed(remove)).toBe(0);
    expect(json(remove)).toMatchObject({ id, messages: [expect.stringMatching(/deleted/i)] });
    const after = json<{ id: string }[]>(await trellisCli(['workflows', 'list', '--json']));
    expect(after.map((workflow) => workflow.id)).not.toContain(id);

    const again = await trellisCli(['workflows', 'add', '-f', file, '--json']);
    expect(again.code, printed(again)).toBe(0);
    const readded = json<{ id: string; name: string; messages: string[] }>(again);
    expect(readded).toMatchObject({ name, messages: [`Workflow "${name}" was created.`] });
    expect(readded.id).not.toBe(id);
  });

  it('refuses an update that breaks the declared inputs unless --accept-breaking is given', async () => {
    const name = uniqueName('cli-breaking');
    const definition = {
      name,
      inputs: { amount: { type: 'number' } },
      tasks: [{ name: 'Say', type: { plugin: 'Flow/Log' }, parameters: { message: 'one' } }],
    };
    expect(
      (await trellisCli(['workflows', 'add', '-f', await definitionFile(definition)])).code,
    ).toBe(0);
    const file = await definitionFile({ ...definition, inputs: {} });

    const refused = await trellisCli(['workflows', 'update', name, '-f', file]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/\(HTTP 409\)/);
    expect(refused.stderr).toContain('inputs.amount: is no longer declared');

    const accepted = await trellisCli([
      'workflows',
      'update',
      name,
      '-f',
      file,
      '--accept-breaking',
    ]);
    expect(accepted.code, printed(accepted)).toBe(0);
    expect(lines(accepted.stdout)).toEqual([
      `Workflow "${name}" was updated (revision 2).`,
      'Breaking changes accepted: inputs.amount is no longer declared.',
    ]);
  });

  it('prints the server\u2019s messages for a definition it refuses, and exits 1', async () => {
    const file = await definitionFile({ name: uniqueName('cli-invalid'), tasks: [{ name: 'X' }] });
    const add = await trellisCli(['workflows', 'add', '-f', file]);
    expect(add.code).toBe(1);
    expect(add.stdout).toBe('');
    expect(add.stderr).toMatch(/^error: .*\(HTTP 400\)/);
    expect(add.stderr).toMatch(/tasks\[0\].*type/);
  });
});

describe('trellis run', () => {
  it('--follow shows each task\u2019s progress, then the outputs, and exits 0 for a completed run', async () => {
    const name = uniqueName('cli-totals');
    const workflowId = await addWorkflow(trellis.admin, totals(name));

    const run = await trellisCli([
      'run',
      name,
      '--input',
      'values=[1,2,3]',
      '-i',
      'factor=2',
      '--follow',
    ]);

    expect(run.code, printed(run)).toBe(0);
    expect(run.stderr).toBe('');
    // Not a terminal: plain lines, one per change, no colours or cursor movement.
    expect(run.stdout).not.toContain('\u001b');
    const shown = lines(run.stdout);
    expect(shown[0]).toBe('Execution Running');
    const sum = shown.findIndex((line) => /^\[1\/2\] Sum Completed in \d+ ms\.$/.test(line));
    const say = shown.findIndex((line) => /^\[2\/2\] Say Completed in \d+ ms\.$/.test(line));
    // The final line carries the execution's message, as the event stream gives it.
    const done = shown.findIndex((line) => /^Execution Completed(: .+)?$/.test(line));
    expect(sum).toBeGreaterThanOrEqual(0);
    expect(say).toBeGreaterThan(sum);
    expect(done).toBeGreaterThan(say);
    expect(shown[done + 1]).toMatch(/^Completed in /);
    expect(run.stdout).toContain('Outputs:\n{\n  "total": 12\n}\n');

    const [execution] = await trellis.admin.GET('/workflows/{workflowId}/executions', {
      params: { path: { workflowId } },
    });
    const detail = await trellis.admin.GET('/workflows/{workflowId}/executions/{executionId}', {
      params: { path: { workflowId, executionId: execution!.id } },
    });
    expect(detail).toMatchObject({ status: 'Completed', inputs: { values: [1, 2, 3], factor: 2 } });
  });

  it('--follow exits non-zero for a failing run, naming the task and its error', async () => {
    const name = uniqueName('cli-failing');
    await addWorkflow(trellis.admin, failing(name));

    const run = await trellisCli(['run', name, '--follow']);

    expect(run.code, printed(run)).toBe(3);
    const shown = lines(run.stdout);
    expect(shown.some((line) => /^\[1\/3\] A Completed in \d+ ms\.$/.test(line))).toBe(true);
    expect(shown).toContain(
      "[2/3] B Failed: cannot add null and the number 1 in $[Outputs('A').missing.deeper + 1]",
    );
    expect(shown.some((line) => /^\[3\/3\] C Skipped/.test(line))).toBe(true);
    expect(shown).toContain("Execution Failed: Task 'B' failed.");
    expect(shown).toContain(
      "  B: Failed: cannot add null and the number 1 in $[Outputs('A').missing.deeper + 1]",
    );
  });

  it('prints the new execution id without --follow, and the started run as JSON with --json', async () => {
    const name = uniqueName('cli-start');
    const workflowId = await addWorkflow(trellis.admin, totals(name));
    const inputsFile = path.join(folder, `${name}.inputs.json`);
    await writeFile(inputsFile, JSON.stringify({ values: [5], factor: 3 }));

    const run = await trellisCli([
      'run',
      workflowId,
      '--inputs-file',
      inputsFile,
      '-i',
      'factor=4',
    ]);
    expect(run.code, printed(run)).toBe(0);
    const executionId = run.stdout.trim();
    expect(executionId).toMatch(uuid);
    const finished = await trellis.admin.waitForExecution(workflowId, executionId);
    expect(finished).toMatchObject({ status: 'Completed', outputs: { total: 20 } });

    const started = json<{ workflowId: string; executionId: string; startedAt: string }>(
      await trellisCli(['run', name, '--json', '-i', 'values=[1]']),
    );
    expect(started).toMatchObject({ workflowId, executionId: expect.stringMatching(uuid) });

    const followed = await trellisCli(['run', name, '--json', '--follow', '-i', 'values=[2]']);
    expect(followed.code, printed(followed)).toBe(0);
    expect(json(followed)).toMatchObject({
      workflowId,
      status: 'Completed',
      outputs: { total: 20 },
      tasks: [
        { name: 'Sum', status: 'Completed' },
        { name: 'Say', status: 'Completed' },
      ],
    });
  });

  it('prints the server\u2019s messages for bad inputs and starts nothing', async () => {
    const name = uniqueName('cli-bad-inputs');
    const workflowId = await addWorkflow(trellis.admin, totals(name));

    const run = await trellisCli(['run', name, '-i', 'values=oops', '-i', 'extra=1', '--follow']);

    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('error: the server refused the request (HTTP 400):');
    expect(run.stderr).toContain('  - body.inputs.values: must be an array, not the string "oops"');
    expect(run.stderr).toMatch(/ {2}- body\.inputs\.extra: /);
    const executions = await trellis.admin.GET('/workflows/{workflowId}/executions', {
      params: { path: { workflowId } },
    });
    expect(executions).toEqual([]);
  });
});

describe('errors', () => {
  it('an unknown workflow: the server\u2019s 404 message for an id, the CLI\u2019s for a name', async () => {
    const missing = '00000000-0000-4000-8000-000000000000';
    const byId = await trellisCli(['run', missing]);
    expect(byId.code).toBe(1);
    expect(byId.stdout).toBe('');
    expect(byId.stderr).toBe(`error: Workflow "${missing}" was not found. (HTTP 404)\n`);

    const byName = await trellisCli(['workflows', 'show', uniqueName('no-such-workflow')]);
    expect(byName.code).toBe(1);
    expect(byName.stderr).toMatch(/^error: No workflow is named "no-such-workflow-.*"\.\nhint: /);

    // For scripts: the error envelope's messages and codes as JSON on stderr, stdout empty.
    const scripted = await trellisCli(['workflows', 'show', missing, '--json']);
    expect(scripted.code).toBe(1);
    expect(scripted.stdout).toBe('');
    expect(JSON.parse(scripted.stderr)).toMatchObject({
      succeeded: false,
      status: 404,
      messages: [`Workflow "${missing}" was not found.`],
      errors: [{ code: 'workflow.not_found' }],
    });
  });

  it('bad or missing credentials: the server\u2019s 401 message and how to give credentials', async () => {
    const wrong = await trellisCli(['workflows', 'list'], { TRELLIS_PASSWORD: 'wrong' });
    expect(wrong.code).toBe(1);
    expect(wrong.stdout).toBe('');
    expect(wrong.stderr).toContain('error: Invalid username or password. (HTTP 401)');
    expect(wrong.stderr).toContain('hint: Give credentials with TRELLIS_USER and TRELLIS_PASSWORD');

    const none = await runCli(['workflows', 'list'], { env: { TRELLIS_URL: trellis.baseUrl } });
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/^error: .*\(HTTP 401\)/);

    // A role that does not reach workflows: 403, the server's message.
    const plugins = await runCli(['workflows', 'list'], {
      env: {
        TRELLIS_URL: trellis.baseUrl,
        TRELLIS_USER: users.plugins.username,
        TRELLIS_PASSWORD: users.plugins.password,
      },
    });
    expect(plugins.code).toBe(1);
    expect(plugins.stderr).toMatch(/^error: .*admin, workflow.*\(HTTP 403\)/);
  });

  it('a Bearer token from TRELLIS_TOKEN (or --token over TRELLIS_USER) is sent', async () => {
    const token = await mintToken({ roles: ['workflow'] });
    const name = uniqueName('cli-bearer');
    await addWorkflow(trellis.admin, {
      name,
      tasks: [{ name: 'N', type: { plugin: 'Flow/NoOp' } }],
    });

    const byEnv = await runCli(['workflows', 'list', '--json'], {
      env: { TRELLIS_URL: trellis.baseUrl, TRELLIS_TOKEN: token },
    });
    expect(byEnv.code, printed(byEnv)).toBe(0);
    expect(json<{ name: string }[]>(byEnv).map((w) => w.name)).toContain(name);

    const byFlag = await trellisCli(['workflows', 'list', '--json', '--token', token]);
    expect(byFlag.code, printed(byFlag)).toBe(0);
    const expired = await mintToken({ roles: ['workflow'], expiresInSeconds: -60 });
    const refused = await trellisCli(['workflows', 'list', '--token', expired]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('(HTTP 401)');
  });

  it('a server that cannot be reached: says so and what to check', async () => {
    // A port that was just free: nothing listens there.
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise((resolve) => server.close(resolve));
    const url = `http://127.0.0.1:${port}`;

    const result = await trellisCli(['workflows', 'list'], { TRELLIS_URL: url });

    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(
      `error: Cannot reach Trellis at ${url}: connect ECONNREFUSED 127.0.0.1:${port}.\n` +
        'hint: Check TRELLIS_URL (or --url) and that the server is running there.\n',
    );
  });
});

describe('trellis executions', () => {
  it('lists, shows, prints the logs of and reruns an execution; refuses to cancel a finished one', async () => {
    const name = uniqueName('cli-executions');
    const workflowId = await addWorkflow(trellis.admin, totals(name));
    const first = await trellisCli(['run', name, '-i', 'values=[1,1]', '--follow']);
    expect(first.code, printed(first)).toBe(0);
    const [execution] = await trellis.admin.GET('/workflows/{workflowId}/executions', {
      params: { path: { workflowId } },
    });
    const executionId = execution!.id;

    const list = await trellisCli(['executions', 'list', name]);
    expect(list.code).toBe(0);
    expect(lines(list.stdout)[1]).toMatch(new RegExp(`^${executionId}\\s+Completed\\s+\\d{4}-`));
    expect(
      json(await trellisCli(['executions', 'list', name, '--json', '--status', 'Completed'])),
    ).toEqual([expect.objectContaining({ id: executionId, status: 'Completed' })]);
    expect(
      json(await trellisCli(['executions', 'list', name, '--json', '--status', 'Failed'])),
    ).toEqual([]);

    const show = await trellisCli(['executions', 'show', name, executionId]);
    expect(show.code).toBe(0);
    expect(show.stdout).toMatch(/^Status\s+Completed$/m);
    expect(show.stdout).toMatch(/^Outputs\s+\{"total":20\}$/m);
    expect(show.stdout).toMatch(/^TASK\s+STATUS\s+ATTEMPTS\s+STARTED/m);
    expect(show.stdout).toMatch(/^Sum\s+Completed\s+1\s+\d{4}-/m);
    expect(show.stdout).toMatch(/^Say\s+Completed/m);

    const logs = await trellisCli(['executions', 'logs', name, executionId]);
    expect(logs.code).toBe(0);
    expect(logs.stdout).toMatch(/ Info +Say sum is 2$/m);
    expect(logs.stdout).toMatch(/ Info +execution Execution started/m);
    const sayLogs = json<{ message: string; taskName: string }[]>(
      await trellisCli(['executions', 'logs', name, executionId, '--task', 'Say', '--json']),
    );
    expect(sayLogs.map((entry) => entry.message)).toContain('sum is 2');
    expect(new Set(sayLogs.map((entry) => entry.taskName))).toEqual(new Set(['Say']));

    const cancel = await trellisCli(['executions', 'cancel', name, executionId]);
    expect(cancel.code).toBe(1);
    expect(cancel.stderr).toContain('(HTTP 409)');

    const rerun = await trellisCli([
      'executions',
      'rerun',
      name,
      executionId,
      '--from-task',
      'Sum',
      '-i',
      'values=[5]',
      '--follow',
    ]);
    expect(rerun.code, printed(rerun)).toBe(0);
    expect(rerun.stdout).toContain('"total": 50');
    const executions = await trellis.admin.GET('/workflows/{workflowId}/executions', {
      params: { path: { workflowId } },
    });
    expect(executions).toHaveLength(2);
    const again = await trellis.admin.GET('/workflows/{workflowId}/executions/{executionId}', {
      params: { path: { workflowId, executionId: executions[0]!.id } },
    });
    expect(again.rerunOf).toBe(executionId);
  });

  it('cancels a running execution; following it then exits 4', async () => {
    const name = uniqueName('cli-cancel');
    await addWorkflow(trellis.admin, {
      name,
      tasks: [
        { name: 'Long', type: { plugin: 'Flow/Delay' }, parameters: { milliseconds: 60_000 } },
      ],
    });
    const started = await trellisCli(['run', name]);
    const executionId = started.stdout.trim();
    const watching = trellisCli(['executions', 'watch', name, executionId]);

    const cancel = await trellisCli(['executions', 'cancel', name, executionId]);
    expect(cancel.code, printed(cancel)).toBe(0);
    expect(cancel.stdout).toContain(`Cancellation of execution "${executionId}" was requested.`);

    const watched = await watching;
    expect(watched.code, printed(watched)).toBe(4);
    expect(lines(watched.stdout)).toContainEqual(
      expect.stringMatching(/^Execution Canceled(: .+)?$/),
    );
  });
});

describe('trellis approvals', () => {
  const gated = (name: string) => ({
    name,
    tasks: [
      { name: 'Prepare', type: { plugin: 'Flow/NoOp' } },
      {
        name: 'Gate',
        type: { plugin: 'Flow/NoOp' },
        dependencies: ['Prepare'],
        manualApproval: { enabled: true, comment: 'Check the numbers' },
      },
      { name: 'Publish', type: { plugin: 'Flow/NoOp' }, dependencies: ['Gate'] },
    ],
  });

  async function pausedRun(name: string) {
    const workflowId = await addWorkflow(trellis.admin, gated(name));
    const started = await trellisCli(['run', name]);
    const executionId = started.stdout.trim();
    // Followed from the start, as a CI job would.
    const following = trellisCli(['executions', 'watch', name, executionId]);
    await trellis.admin.waitForExecution(workflowId, executionId, { until: ['Paused'] });
    return { workflowId, executionId, following };
  }

  it('lists an execution\u2019s approvals and approves one by its task\u2019s name; the run completes', async () => {
    const name = uniqueName('cli-approve');
    const { workflowId, executionId, following } = await pausedRun(name);

    const list = await trellisCli(['approvals', 'list', name, executionId]);
    expect(list.code, printed(list)).toBe(0);
    expect(lines(list.stdout)[1]).toMatch(
      /^[0-9a-f-]{36}\s+Gate\s+Pending\s+\d{4}-.*Check the numbers$/,
    );

    // The inbox: every workflow's approvals waiting for a decision.
    const inbox = await trellisCli(['approvals', 'list', '--status', 'Pending', '--json']);
    expect(inbox.code, printed(inbox)).toBe(0);
    expect(json<{ workflowId: string; executionId: string }[]>(inbox)).toContainEqual(
      expect.objectContaining({ workflowId, executionId, taskName: 'Gate', status: 'Pending' }),
    );

    const approve = await trellisCli([
      'approvals',
      'approve',
      name,
      executionId,
      'Gate',
      '--reason',
      'checked twice',
    ]);
    expect(approve.code, printed(approve)).toBe(0);
    expect(approve.stdout).toMatch(/^Approval ".*" of task "Gate" was approved\.$/m);
    const [decided] = await trellis.admin.GET(
      '/workflows/{workflowId}/executions/{executionId}/approvals',
      { params: { path: { workflowId, executionId } } },
    );
    expect(decided).toMatchObject({
      status: 'Approved',
      decidedBy: 'admin',
      reason: 'checked twice',
    });

    const followed = await following;
    expect(followed.code, printed(followed)).toBe(0);
    expect(followed.stdout).toContain(
      `Gate waits for approval: trellis approvals approve ${workflowId} ${executionId} Gate`,
    );
    expect(followed.stdout).toContain('Gate was approved');
    expect(lines(followed.stdout)).toContainEqual(
      expect.stringMatching(/^Execution Completed(: .+)?$/),
    );

    const again = await trellisCli(['approvals', 'approve', name, executionId, 'Gate']);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('(HTTP 409)');
  });

  it('rejects an approval by id with a reason; the run fails', async () => {
    const name = uniqueName('cli-reject');
    const { workflowId, executionId, following } = await pausedRun(name);
    const [approval] = json<{ id: string; status: string }[]>(
      await trellisCli([
        'approvals',
        'list',
        workflowId,
        executionId,
        '--json',
        '--status',
        'Pending',
      ]),
    );

    const reject = await trellisCli([
      'approvals',
      'reject',
      name,
      executionId,
      approval!.id,
      '--reason',
      'numbers look wrong',
      '--json',
    ]);
    expect(reject.code, printed(reject)).toBe(0);
    expect(json(reject)).toMatchObject({
      approvalId: approval!.id,
      messages: [expect.stringMatching(/was rejected/)],
    });

    const followed = await following;
    expect(followed.code, printed(followed)).toBe(3);
    expect(followed.stdout).toContain('Gate was rejected');
    expect(followed.stdout).toMatch(/Gate Failed: Rejected by admin/);

    const unknownTask = await trellisCli(['approvals', 'approve', name, executionId, 'Publish']);
    expect(unknownTask.code).toBe(1);
    expect(unknownTask.stderr).toContain(
      `Execution ${executionId} has no approval for a task named "Publish".`,
    );
  });
});
