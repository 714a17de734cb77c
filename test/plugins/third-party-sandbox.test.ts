/**
 * What a third-party plugin can reach (README, "What a plugin can reach"): it runs in a sandbox
 * process of its own with no environment, reads only its package and writes only under
 * `Plugins.StorageRoot`, starts no process, and is stopped at its time and memory limits. Every
 * attempt of the hostile plugin below fails with a message saying why, beside an ordinary run,
 * while the API keeps answering.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildRegistry } from '#plugin-host/registry.js';
import { writeTestPackage } from '../support/plugin-packages.js';
import { startTrellis, type Trellis } from '../support/harness.js';
import {
  definition,
  ordinaryRun,
  run,
  start,
  taskLogEntries,
  taskLogs,
  tasksOf,
  whileAskingVersion,
} from '../support/engine-support.js';

const hostile = { type: 'Test/Hostile', version: '1.0.0' } as const;

const source = `import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import path from 'node:path';

export async function execute(parameters, context) {
  switch (parameters.mode) {
    case 'env':
      return { keys: Object.keys(process.env) };
    case 'read':
      return { length: readFileSync(parameters.path).length };
    case 'list':
      return { names: readdirSync(parameters.path) };
    case 'storage': {
      const file = path.join(context.host.storageRoot, 'hostile-note.txt');
      writeFileSync(file, 'kept');
      return { text: readFileSync(file, 'utf8') };
    }
    case 'spawn': {
      const result = spawnSync('/bin/sh', ['-c', 'echo escaped']);
      if (result.error) throw result.error;
      return { stdout: String(result.stdout) };
    }
    case 'loop':
      for (;;) {}
    case 'allocate': {
      const kept = [];
      for (;;) kept.push(new Array(100000).fill(kept.length));
    }
    case 'buffers': {
      const kept = [];
      for (;;) kept.push(Buffer.alloc(32 * 1024 * 1024, kept.length));
    }
    case 'kill':
      process.kill(process.ppid, 'SIGKILL');
      return {};
    case 'exit':
      process.exit(3);
    case 'secret':
      context.logger.info('signing in with ' + context.specifications.token);
      throw new Error('the server refused the token ' + context.specifications.token);
  }
  throw new Error('unknown mode ' + parameters.mode);
}
`;

let trellis: Trellis;
let root: string;
const marker = 'TRELLIS_SANDBOX_TEST_MARKER';

beforeAll(async () => {
  // The worker runs in this process: what its environment holds, a plugin must not see.
  process.env[marker] = 'visible-to-the-worker-only';
  root = await mkdtemp(path.join(tmpdir(), 'trellis-hostile-'));
  const folder = await writeTestPackage(
    {
      ...hostile,
      specifications: [
        { key: 'token', type: 'string', required: false, secret: true, description: 'A secret' },
      ],
    },
    source,
    path.join(root, 'sources'),
  );
  await buildRegistry(path.join(root, 'index'), [folder]);
  trellis = await startTrellis({
    worker: true,
    config: {
      Plugins: {
        Registry: path.join(root, 'index'),
        Sandbox: { TimeoutMilliseconds: 3000, MemoryMb: 128 },
      },
    },
  });
  await trellis.admin.POST('/plugins', { body: { Type: hostile.type, Version: hostile.version } });
});
afterAll(async () => {
  await trellis?.stop();
  delete process.env[marker];
  if (root) await rm(root, { recursive: true, force: true });
});

const task = (name: string, parameters: Record<string, unknown>, extra = {}) => ({
  name,
  type: { plugin: hostile.type, specifications: { token: 'tok-3f9a-very-secret' } },
  parameters,
  ...extra,
});

/** Runs the tasks beside an ordinary run, the API answering within a second throughout. */
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
  return { ...result, tasks: await tasksOf(trellis.admin, result.workflowId, result.executionId) };
}

const accessDenied = (what: string) => new RegExp(`^Failed: The plugin sandbox denied ${what}`);

describe('a third-party plugin in its sandbox', () => {
  it('sees no environment variable of the worker', async () => {
    const { workflowId, executionId, execution, tasks } = await attack([
      task('Env', { mode: 'env' }),
      {
        name: 'Show',
        type: { plugin: 'Flow/Log' },
        dependencies: ['Env'],
        parameters: { message: "keys: $[Outputs('Env').keys]" },
      },
    ]);
    expect(execution.status).toBe('Completed');
    expect(await taskLogs(trellis.admin, workflowId, executionId, tasks.Show!.id)).toContain(
      'keys: []',
    );
    expect(process.env[marker]).toBeDefined();
  });

  it('reads and writes under the storage root it is given', async () => {
    const { tasks } = await attack([task('Storage', { mode: 'storage' })]);
    expect(tasks.Storage).toMatchObject({ status: 'Completed' });
  });

  it('cannot read the data directory, other files or other packages', async () => {
    const secretFile = path.join(trellis.config.DataDirectory, 'secret.txt');
    await writeFile(secretFile, 'database password');
    const { execution, tasks } = await attack([
      task('DataFile', { mode: 'read', path: secretFile }),
      task('Passwd', { mode: 'read', path: '/etc/passwd' }),
      task('Cache', { mode: 'list', path: trellis.config.Plugins.CacheDirectory }),
    ]);
    expect(execution.status).toBe('Failed');
    for (const name of ['DataFile', 'Passwd', 'Cache']) {
      expect(tasks[name]!.status).toBe('Failed');
      expect(tasks[name]!.message).toMatch(accessDenied('reading'));
    }
  });

  it('starts no process unless Plugins.AllowProcessExecution is true', async () => {
    const { tasks } = await attack([task('Spawn', { mode: 'spawn' })]);
    expect(tasks.Spawn!.status).toBe('Failed');
    expect(tasks.Spawn!.message).toMatch(accessDenied('starting a process'));
    expect(tasks.Spawn!.message).toContain('Plugins.AllowProcessExecution');
  });

  it('is stopped at the task timeout, or at the sandbox time limit without one', async () => {
    const { tasks } = await attack([
      task('Timed', { mode: 'loop' }, { timeoutMilliseconds: 1000 }),
      task('Untimed', { mode: 'loop' }),
    ]);
    expect(tasks.Timed).toMatchObject({
      status: 'Failed',
      message: 'Failed: Timed out after 1000 ms.',
    });
    expect(tasks.Untimed!.status).toBe('Failed');
    expect(tasks.Untimed!.message).toMatch(
      /^Failed: Plugin "Test\/Hostile" 1\.0\.0 took longer than its time limit of 3000 ms \(Plugins\.Sandbox\.TimeoutMilliseconds/,
    );
  });

  it('is stopped at the memory limit, on the heap and off it', async () => {
    const { tasks } = await attack([
      task('Heap', { mode: 'allocate' }),
      task('Buffers', { mode: 'buffers' }),
    ]);
    for (const name of ['Heap', 'Buffers']) {
      expect(tasks[name]!.status).toBe('Failed');
      expect(tasks[name]!.message).toBe(
        'Failed: Plugin "Test/Hostile" 1.0.0 went over its memory limit of 128 MB (Plugins.Sandbox.MemoryMb).',
      );
    }
  });

  it('cannot signal the worker, and a sandbox that exits fails only its attempt', async () => {
    const { tasks } = await attack([
      task('Kill', { mode: 'kill' }),
      task('Exit', { mode: 'exit' }),
    ]);
    expect(tasks.Kill!.status).toBe('Failed');
    expect(tasks.Kill!.message).toMatch(/process\.kill is not available in the plugin sandbox/);
    expect(tasks.Exit!.status).toBe('Failed');
    expect(tasks.Exit!.message).toBe(
      'Failed: Plugin "Test/Hostile" 1.0.0 stopped its sandbox (exit code 3).',
    );
  });

  it('has its secret settings redacted from its log, its error message and its stack (finding 8)', async () => {
    const { workflowId, executionId, tasks } = await attack([task('Secret', { mode: 'secret' })]);
    expect(tasks.Secret!.message).toBe('Failed: the server refused the token ********.');
    const entries = await taskLogEntries(trellis.admin, workflowId, executionId, tasks.Secret!.id);
    expect(entries.map((entry) => entry.message)).toContain('signing in with ********');
    const failure = entries.find((entry) => entry.level === 'Error')!;
    expect(failure.exception).toMatch(
      /^Error: the server refused the token \*{8}\n {4}at (Module\.)?execute \(index\.js:\d+:\d+\)$/,
    );
    expect(JSON.stringify(entries)).not.toContain('tok-3f9a-very-secret');
  });
});
