import { spawn } from 'node:child_process';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { writeTestPackage } from '../../../../test/support/plugin-packages.js';
import { createRecordingLogger } from '../../../../test/support/plugin-folder.js';
import { createSandboxPool, type SandboxPool } from './pool.js';
import type { SandboxJob } from './process.js';
import type { SandboxSettings } from './sandbox-settings.js';

const storageRoot = path.join(os.tmpdir(), `trellis-sandbox-test-${process.pid}`);
await mkdir(storageRoot, { recursive: true });

const source = `import { writeSync, writeFileSync, readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { Worker } from 'node:worker_threads';

export async function execute(parameters, context) {
  switch (parameters.mode) {
    case 'pid': return { pid: process.pid };
    case 'beat': context.heartbeat({ done: 1 }); context.logger.error('hm', 'detail'); return {};
    case 'own-file': return { size: readFileSync('plugin.json').length };
    case 'env': return { keys: Object.keys(process.env) };
    case 'loop':
      if (parameters.pidFile) writeFileSync(parameters.pidFile, String(process.pid));
      for (;;) {}
    case 'wait':
      return new Promise((resolve) =>
        context.signal.addEventListener('abort', () => resolve({ stopped: true })),
      );
    case 'log':
      for (let i = 0; i < parameters.count; i++) context.logger.info('line ' + i);
      return {};
    case 'forge':
      writeSync(3, '{"type":"result","id":999999,"output":"forged"}\\n');
      return { real: true };
    case 'garbage': writeSync(3, 'not json\\n'); return {};
    case 'flood': writeSync(3, 'x'.repeat(parameters.size)); return {};
    case 'big': return 'x'.repeat(parameters.size);
    case 'heap': { const kept = []; for (;;) kept.push(new Array(100000).fill(kept.length)); }
    case 'rss': { const kept = []; for (;;) kept.push(Buffer.alloc(16 * 1024 * 1024, 1)); }
    case 'exit': process.exit(5);
    case 'stray': setTimeout(() => { throw new Error('late'); }, 10); return { ok: true };
    case 'worker': new Worker('1', { eval: true }); return {};
    case 'kill': process.kill(process.ppid, 'SIGTERM'); return {};
    case 'spawn': return { status: spawnSync(process.execPath, ['-e', '']).status };
  }
}
`;
const folder = await writeTestPackage({ type: 'Test/Sandbox', version: '1.0.0' }, source);
const other = await writeTestPackage({ type: 'Test/Other', version: '1.0.0' }, source);

const settings = (overrides: Partial<SandboxSettings> = {}): SandboxSettings => ({
  memoryMb: 64,
  timeoutMilliseconds: 10_000,
  maxProcesses: 2,
  maxOutputBytes: 64 * 1024,
  storageRoot,
  allowProcessExecution: false,
  ...overrides,
});

const name = 'Plugin "Test/Sandbox" 1.0.0';

function job(parameters: Record<string, unknown>, extra: Partial<SandboxJob> = {}): SandboxJob {
  return {
    name,
    profile: 'third-party',
    directory: folder,
    entry: 'index.js',
    parameters,
    specifications: {},
    task: { name: 'test', executionId: 'test', attempt: 1, idempotencyKey: 'test:test:1' },
    host: {
      storageRoot,
      allowProcessExecution: false,
      network: { denyCidrs: [], trellisEndpoints: [], allowCidrs: [], defaultDenyCidrs: [] },
      trellisDatabase: null,
    },
    logger: createRecordingLogger(),
    heartbeat: () => {},
    signal: new AbortController().signal,
    ...extra,
  };
}

const pools: SandboxPool[] = [];
const pool = (overrides: Partial<SandboxSettings> = {}) => {
  const created = createSandboxPool(settings(overrides));
  pools.push(created);
  return created;
};
afterAll(async () => {
  await Promise.all(pools.map((created) => created.close()));
  await rm(storageRoot, { recursive: true, force: true });
});

describe('the sandbox pool', () => {
  it('keeps a process warm for the next attempt of the same package, one per package', async () => {
    const sandboxes = pool();
    const first = (await sandboxes.run(job({ mode: 'pid' }))) as { pid: number };
    expect(await sandboxes.run(job({ mode: 'pid' }))).toEqual(first);
    expect(first.pid).not.toBe(process.pid);
    const another = (await sandboxes.run(job({ mode: 'pid' }, { directory: other }))) as {
      pid: number;
    };
    expect(another.pid).not.toBe(first.pid);
  });

  it('answers an abort at once, and reuses the process when the plugin stops in time', async () => {
    // One process: the next attempt waits for it to be free again.
    const sandboxes = pool({ maxProcesses: 1 });
    const { pid } = (await sandboxes.run(job({ mode: 'pid' }))) as { pid: number };
    const controller = new AbortController();
    const waiting = sandboxes.run(job({ mode: 'wait' }, { signal: controller.signal }));
    setTimeout(() => controller.abort(new Error('canceled by the user')), 100);
    await expect(waiting).rejects.toThrow('canceled by the user');
    expect(await sandboxes.run(job({ mode: 'pid' }))).toEqual({ pid });
  });

  it('kills a plugin that ignores the abort, and the next attempt gets a new process', async () => {
    const sandboxes = pool();
    const { pid } = (await sandboxes.run(job({ mode: 'pid' }))) as { pid: number };
    const controller = new AbortController();
    const looping = sandboxes.run(job({ mode: 'loop' }, { signal: controller.signal }));
    setTimeout(() => controller.abort(new Error('timed out')), 100);
    const started = Date.now();
    await expect(looping).rejects.toThrow('timed out');
    expect(Date.now() - started).toBeLessThan(1000);
    expect(await sandboxes.run(job({ mode: 'pid' }))).not.toEqual({ pid });
  });

  it('stops an attempt without a task timeout at its own time limit', async () => {
    await expect(pool({ timeoutMilliseconds: 300 }).run(job({ mode: 'loop' }))).rejects.toThrow(
      `${name} took longer than its time limit of 300 ms (Plugins.Sandbox.TimeoutMilliseconds, for a task without timeoutMilliseconds)`,
    );
  });

  it('stops a plugin at the memory limit, on its heap and off it (resident size)', async () => {
    const memory = `${name} went over its memory limit of 64 MB (Plugins.Sandbox.MemoryMb)`;
    await expect(pool().run(job({ mode: 'heap' }))).rejects.toThrow(memory);
    if (process.platform === 'linux') {
      await expect(pool().run(job({ mode: 'rss' }))).rejects.toThrow(memory);
    }
  });

  it('fails only the attempt of a plugin that ends its process, even after its attempt', async () => {
    const sandboxes = pool();
    await expect(sandboxes.run(job({ mode: 'exit' }))).rejects.toThrow(
      `${name} stopped its sandbox (exit code 5)`,
    );
    const { pid } = (await sandboxes.run(job({ mode: 'pid' }))) as { pid: number };
    // An error thrown after the attempt ended takes its process down, not the next attempt.
    expect(await sandboxes.run(job({ mode: 'stray' }))).toEqual({ ok: true });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await sandboxes.run(job({ mode: 'pid' }))).not.toEqual({ pid });
  });

  it('checks what the plugin sends: output size, lines, JSON, and whose attempt it is', async () => {
    const sandboxes = pool();
    await expect(sandboxes.run(job({ mode: 'big', size: 100_000 }))).rejects.toThrow(
      `${name} returned 97.7 KiB of output, over the 64.0 KiB limit (Plugins.MaxOutputBytes)`,
    );
    expect(await sandboxes.run(job({ mode: 'forge' }))).toEqual({ real: true });
    await expect(sandboxes.run(job({ mode: 'garbage' }))).rejects.toThrow(
      `${name} broke the sandbox protocol: it sent a message that is not JSON`,
    );
    await expect(sandboxes.run(job({ mode: 'flood', size: 2 * 1024 * 1024 }))).rejects.toThrow(
      `${name} broke the sandbox protocol: it sent a message over 1.1 MiB`,
    );
  });

  it('passes heartbeats and log entries on to the attempt', async () => {
    const beats: unknown[] = [];
    const logger = createRecordingLogger();
    await pool().run(
      job({ mode: 'beat' }, { logger, heartbeat: (details) => beats.push(details) }),
    );
    expect(beats).toEqual([{ done: 1 }]);
    expect(logger.entries).toEqual([{ level: 'Error', message: 'hm', exception: 'detail' }]);
  });

  it('keeps at most 10,000 log entries of an attempt', async () => {
    const logger = createRecordingLogger();
    await pool().run(job({ mode: 'log', count: 10_050 }, { logger }));
    expect(logger.entries).toHaveLength(10_001);
    expect(logger.entries.at(-1)).toEqual({
      level: 'Warning',
      message: 'Further log entries of this attempt were dropped (over 10000).',
    });
  });

  it('gives a third-party plugin its own package, no environment, no threads, no signals', async () => {
    const sandboxes = pool();
    expect(await sandboxes.run(job({ mode: 'own-file' }))).toMatchObject({
      size: expect.any(Number),
    });
    expect(await sandboxes.run(job({ mode: 'env' }))).toEqual({ keys: [] });
    const worker = sandboxes.run(job({ mode: 'worker' }));
    await expect(worker).rejects.toThrow('The plugin sandbox denied starting a worker thread');
    await expect(worker).rejects.toMatchObject({ nonRetryable: true });
    await expect(sandboxes.run(job({ mode: 'kill' }))).rejects.toThrow(
      'process.kill is not available in the plugin sandbox',
    );
    await expect(sandboxes.run(job({ mode: 'spawn' }))).rejects.toThrow(
      'The plugin sandbox denied starting a process: Plugins.AllowProcessExecution is false',
    );
    expect(await pool({ allowProcessExecution: true }).run(job({ mode: 'spawn' }))).toEqual({
      status: 0,
    });
  });

  it('runs a built-in without the permission model, with the worker environment', async () => {
    const { keys } = (await pool().run(job({ mode: 'env' }, { profile: 'builtin' }))) as {
      keys: string[];
    };
    expect(keys).toContain('PATH');
  });

  it('waits for a free process when all are busy', async () => {
    const sandboxes = pool({ maxProcesses: 1 });
    const controller = new AbortController();
    const busy = sandboxes.run(job({ mode: 'wait' }, { signal: controller.signal }));
    busy.catch(() => {});
    const queued = sandboxes.run(job({ mode: 'pid' }, { directory: other }));
    await new Promise((resolve) => setTimeout(resolve, 300));
    controller.abort(new Error('done waiting'));
    expect(await queued).toMatchObject({ pid: expect.any(Number) });
  });

  it('gives each process one attempt at a time, however many arrive at once', async () => {
    const sandboxes = pool({ maxProcesses: 2 });
    const outcomes = (await Promise.all(
      Array.from({ length: 8 }, () => sandboxes.run(job({ mode: 'pid' }))),
    )) as Array<{ pid: number }>;
    expect(new Set(outcomes.map((outcome) => outcome.pid)).size).toBeLessThanOrEqual(2);
  });

  /** The task of a run's attempt, as the runner passes it. */
  const attemptOf = (executionId: string, attempt: number) => ({
    name: 'test',
    executionId,
    attempt,
    idempotencyKey: `${executionId}:test:${attempt}`,
  });

  it('holds a run to its share, and gives a freed process to the run holding the fewest', async () => {
    const sandboxes = pool({ maxProcesses: 2, maxProcessesPerRun: 2 });
    const of = (run: string, mode: string, signal?: AbortSignal) =>
      sandboxes.run(job({ mode }, { task: attemptOf(run, 1), ...(signal && { signal }) }));
    const first = new AbortController();
    const second = new AbortController();
    const slow = [of('A', 'wait', first.signal), of('A', 'wait', second.signal)];
    for (const attempt of slow) attempt.catch(() => {});
    await new Promise((resolve) => setTimeout(resolve, 300));
    const order: string[] = [];
    const third = of('A', 'pid').then(() => order.push('A'));
    const other = of('B', 'pid').then(() => order.push('B'));
    first.abort(new Error('done'));
    await Promise.all([third, other]);
    // B asked after A's third attempt, and went first: A already held a process.
    expect(order).toEqual(['B', 'A']);
    second.abort(new Error('done'));

    const shared = pool({ maxProcesses: 2, maxProcessesPerRun: 1 });
    const holding = new AbortController();
    const held = shared.run(
      job({ mode: 'wait' }, { task: attemptOf('A', 1), signal: holding.signal }),
    );
    held.catch(() => {});
    let secondOfA = false;
    const waiting = shared
      .run(job({ mode: 'pid' }, { task: attemptOf('A', 2) }))
      .then(() => (secondOfA = true));
    expect(await shared.run(job({ mode: 'pid' }, { task: attemptOf('B', 1) }))).toMatchObject({
      pid: expect.any(Number),
    });
    expect(secondOfA).toBe(false);
    holding.abort(new Error('done'));
    await waiting;
    expect(secondOfA).toBe(true);
  });

  it('stops an idle process of another package to make room', async () => {
    const sandboxes = pool({ maxProcesses: 1 });
    const first = await sandboxes.run(job({ mode: 'pid' }));
    const second = await sandboxes.run(job({ mode: 'pid' }, { directory: other }));
    expect(second).not.toEqual(first);
    expect(await sandboxes.run(job({ mode: 'pid' }, { directory: other }))).toEqual(second);
  });

  it('ends a sandbox whose worker died, even while its plugin loops', async () => {
    const pidFile = path.join(storageRoot, `loop-${Date.now()}.pid`);
    const script = path.join(storageRoot, 'orphan.ts');
    const poolModule = fileURLToPath(new URL('./pool.ts', import.meta.url));
    await writeFile(
      script,
      `import { createSandboxPool } from ${JSON.stringify(poolModule)};
const pool = createSandboxPool(${JSON.stringify(settings())});
void pool.run({ ...${JSON.stringify({ ...job({ mode: 'loop', pidFile }), logger: undefined, signal: undefined, heartbeat: undefined })},
  logger: { log() {}, trace() {}, debug() {}, info() {}, warning() {}, error() {}, critical() {} },
  heartbeat() {}, signal: new AbortController().signal });
`,
    );
    const worker = spawn(process.execPath, ['--import', 'tsx', script], { stdio: 'ignore' });
    const sandboxPid = Number(await poll(() => readFile(pidFile, 'utf8')));
    worker.kill('SIGKILL');
    await poll(async () => {
      try {
        process.kill(sandboxPid, 0);
      } catch {
        return true;
      }
      throw new Error(`sandbox ${sandboxPid} still runs`);
    });
  });
});

async function poll<T>(check: () => Promise<T>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}
