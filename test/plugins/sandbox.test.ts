/**
 * Issue 16: a user with the workflow role cannot take the service down through a task. The
 * built-ins that evaluate what a user wrote (Data/Json's JSONata, its regular expressions) run in a
 * sandbox process with time and memory limits; a package stored with bad entries fails its
 * attempt; errors in task logs show the plugin's own frames, not the server's. Each attack runs
 * beside an ordinary run, while `/version` is asked every 100 ms.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as pluginRepository from '#store/plugin-repository.js';
import { installRoot } from '#platform/install-root.js';
import { sha256Hex } from '#plugin-host/package.js';
import { rawPackageEntries, rawTarball } from '../support/plugin-packages.js';
import { startTrellis, type Trellis } from '../support/harness.js';
import {
  definition,
  noop,
  ordinaryRun,
  run,
  start,
  taskLogEntries,
  tasksOf,
  whileAskingVersion,
} from '../support/engine-support.js';

let trellis: Trellis;

beforeAll(async () => {
  trellis = await startTrellis({ worker: true });
});
afterAll(async () => {
  await trellis?.stop();
});

/** Runs the attacking tasks beside an ordinary run; the API must answer within a second. */
async function attack(tasks: Array<Record<string, unknown>>) {
  const ordinary = await start(trellis.admin, ordinaryRun());
  const { result, slowestMs } = await whileAskingVersion(trellis, () =>
    run(trellis, definition(tasks)),
  );
  expect(slowestMs).toBeLessThan(1000);
  const finished = await trellis.admin.waitForExecution(ordinary.workflowId, ordinary.executionId, {
    timeoutMs: 60_000,
  });
  expect(finished.status).toBe('Completed');
  expect(result.execution.status).toBe('Failed');
  return { ...result, tasks: await tasksOf(trellis.admin, result.workflowId, result.executionId) };
}

const json = (name: string, expression: string, extra: Record<string, unknown> = {}) => ({
  name,
  type: { plugin: 'Data/Json' },
  parameters: { expression, input: {} },
  ...extra,
});

const retryOnce = {
  errorHandling: {
    strategy: 'Retry',
    retryPolicy: { maxRetries: 1, backoffStrategy: 'Fixed', initialDelayMilliseconds: 100 },
  },
};

/** How long an attempt ran, from the task row. */
const ranFor = (task: { startTime: string | null; endTime: string | null }) =>
  Date.parse(task.endTime!) - Date.parse(task.startTime!);

describe('a Data/Json task cannot take the service down', () => {
  it('an expression that allocates past what V8 allows fails on the memory limit, retried once, not in a crash loop (finding 1)', async () => {
    const { tasks } = await attack([json('Pad', '$length($pad("a", 150000000))', retryOnce)]);
    expect(tasks.Pad!.status).toBe('Failed');
    expect(tasks.Pad!.message).toMatch(
      /^Failed after 2 attempts: Plugin "Data\/Json" 1\.0\.0 went over its memory limit of \d+ MB \(Plugins\.Sandbox\.MemoryMb\)\.$/,
    );
  });

  it('a catastrophic regular expression is stopped at the task timeout (finding 3)', async () => {
    const { tasks } = await attack([
      json('Regex', '$contains("aaaaaaaaaaaaaaaaaaaaaaaaaaaaa!", /^(a|a)*$/)', {
        timeoutMilliseconds: 1000,
      }),
    ]);
    expect(tasks.Regex).toMatchObject({
      status: 'Failed',
      message: 'Failed: Timed out after 1000 ms.',
    });
    expect(ranFor(tasks.Regex!)).toBeLessThan(1000 + 1500);
  });

  it('deep recursion and an endless loop are stopped at their timeouts, side by side (finding 3)', async () => {
    const { tasks } = await attack([
      json('Recursion', '($f := function($n){ $n = 0 ? 0 : $f($n - 1) }; $f(1500000))', {
        timeoutMilliseconds: 1000,
      }),
      json('Endless', '$sum([1..1000000].($sum([1..1000000])))', { timeoutMilliseconds: 1500 }),
    ]);
    expect(tasks.Recursion).toMatchObject({
      status: 'Failed',
      message: 'Failed: Timed out after 1000 ms.',
    });
    expect(tasks.Endless).toMatchObject({
      status: 'Failed',
      message: 'Failed: Timed out after 1500 ms.',
    });
    expect(ranFor(tasks.Recursion!)).toBeLessThan(1000 + 1500);
    expect(ranFor(tasks.Endless!)).toBeLessThan(1500 + 1500);
  });

  it("a failing plugin's log entry shows its message and its own frames, no server paths (finding 8)", async () => {
    const { workflowId, executionId, execution } = await run(
      trellis,
      definition([json('Broken', '$number("not a number")')]),
    );
    expect(execution.status).toBe('Failed');
    const task = (await tasksOf(trellis.admin, workflowId, executionId)).Broken!;
    expect(task.message).toMatch(/^Failed: expression failed: .*cast/i);
    const failure = (await taskLogEntries(trellis.admin, workflowId, executionId, task.id)).find(
      (entry) => entry.level === 'Error',
    )!;
    expect(failure.exception).toMatch(
      /^(Error|NonRetryableError): expression failed: .*\n {4}at .*\(?index\.js:\d+:\d+\)?/,
    );
    for (const leak of [
      'file:',
      installRoot,
      trellis.config.DataDirectory,
      'node:internal',
      'runner',
    ]) {
      expect(failure.exception).not.toContain(leak);
    }
  });
});

describe("Trellis's own expressions", () => {
  it('refuse to resolve parameters past 16 MiB, failing the task without retrying', async () => {
    const { tasks } = await attack([
      // Half a megabyte of output (in strings under Definitions.MaxStringLength)...
      { name: 'Big', type: noop, parameters: { parts: Array(10).fill('x'.repeat(50_000)) } },
      // ...referenced forty times: twenty megabytes to build, copy and send.
      {
        name: 'Copies',
        type: noop,
        dependencies: ['Big'],
        parameters: { copies: Array(40).fill("$[Outputs('Big').parts]") },
        ...retryOnce,
      },
    ]);
    expect(tasks.Big!.status).toBe('Completed');
    expect(tasks.Copies).toMatchObject({
      status: 'Failed',
      message: 'Failed: the parameters would resolve to more than 16 MiB of values',
    });
  });
});

describe('a stored package that does not unpack', () => {
  it('fails the attempt without retrying, naming the entry, and the service stays up (finding 2)', async () => {
    // Stored as an older Trellis let it in: straight into the table, past today's install checks.
    const bytes = rawTarball([
      ...rawPackageEntries('Test/Stored', '1.0.0'),
      { path: '../escaped', content: 'x' },
      { path: 'sub/../../escaped-too', content: 'x' },
      { path: 'passwd', type: 'Link', linkpath: '/etc/passwd' },
    ]);
    await pluginRepository.insert(trellis.db, {
      type: 'Test/Stored',
      version: '1.0.0',
      description: 'A package with entries outside its folder',
      specifications: '[]',
      parametersSchema: '{}',
      source: 'registry',
      sha256: sha256Hex(bytes),
      package: bytes,
    });
    const { tasks } = await attack([
      { name: 'Stored', type: { plugin: 'Test/Stored' }, ...retryOnce },
    ]);
    expect(tasks.Stored!.status).toBe('Failed');
    expect(tasks.Stored!.message).toMatch(/^Failed: .*"\.\.\/escaped"/);
  });
});
