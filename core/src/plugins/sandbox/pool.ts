import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, readFile, realpath } from 'node:fs/promises';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import type { TrellisConfig } from '../../config/types.js';
import type { LogLevel } from '../../db/tables.js';
import { installPath } from '../../install-root.js';
import type { PluginContext, PluginLogger } from '../contract.js';
import { outputNotJson, outputTooLarge, PluginRuntimeError } from '../failures.js';
import { formatBytes } from '../../format-bytes.js';

/**
 * Sandbox processes (README, "What a plugin can reach"). Every plugin that is not a trivially
 * bounded built-in runs its attempts in a Node process of its own, one attempt at a time, kept
 * warm for the next attempt of the same package: the worker's event loop never runs its code, and
 * whatever the code does, the worker stops it from outside:
 *
 * - memory: the heap is capped by `--max-old-space-size` and, on Linux, the resident size is
 *   watched (heap plus `RESIDENT_ALLOWANCE_MB` for Node itself and off-heap buffers);
 * - time: at the task's own timeout (its signal) or, without one, at `Plugins.Sandbox.TimeoutMilliseconds`;
 * - a process that dies (V8's fatal errors, `process.exit`) fails only its attempt.
 *
 * Third-party packages also run under Node's permission model: they read their own package, the
 * host's `node_modules` and `Plugins.StorageRoot`, write only there, start no process unless
 * `Plugins.AllowProcessExecution`, load no native addon, and get an empty environment.
 *
 * Why processes and not worker threads: measured on Node 20, a worker thread with
 * `resourceLimits` does not contain V8's fatal errors ("invalid size", a large array past the
 * heap limit): they abort the whole process. A warm process costs about 0.2 ms per attempt.
 */

export type SandboxProfile = 'builtin' | 'third-party';

export interface SandboxSettings {
  memoryMb: number;
  /** Time limit of an attempt whose task sets none. */
  timeoutMilliseconds: number;
  maxProcesses: number;
  /** Processes the attempts of one run may hold at once; absent: `maxProcesses`. */
  maxProcessesPerRun?: number;
  maxOutputBytes: number;
  storageRoot: string;
  allowProcessExecution: boolean;
}

export function sandboxSettings(config: Pick<TrellisConfig, 'Plugins'>): SandboxSettings {
  const { Plugins } = config;
  return {
    memoryMb: Plugins.Sandbox.MemoryMb,
    timeoutMilliseconds: Plugins.Sandbox.TimeoutMilliseconds,
    maxProcesses: Plugins.Sandbox.MaxProcesses,
    maxProcessesPerRun:
      Plugins.Sandbox.MaxProcessesPerRun ??
      Math.max(1, Math.floor(Plugins.Sandbox.MaxProcesses / 2)),
    maxOutputBytes: Plugins.MaxOutputBytes,
    storageRoot: path.resolve(Plugins.StorageRoot),
    allowProcessExecution: Plugins.AllowProcessExecution,
  };
}

/** One attempt, as the sandbox runs it. */
export interface SandboxJob {
  /** `Plugin "<type>" <version>`, for messages. */
  name: string;
  profile: SandboxProfile;
  /** The unpacked package. */
  directory: string;
  /** The entry module, relative to `directory`. */
  entry: string;
  parameters: Record<string, unknown>;
  specifications: Readonly<Record<string, unknown>>;
  task: PluginContext['task'];
  host: PluginContext['host'];
  /** The call's trace context, handed on to the plugin (tracing on). */
  trace?: PluginContext['trace'];
  logger: PluginLogger;
  heartbeat: (details?: unknown) => void;
  signal: AbortSignal;
  /** The task's own time limit, enforced through `signal`; absent: the sandbox's. */
  timeoutMilliseconds?: number;
}

export interface SandboxPool {
  /** Runs one attempt in a sandbox process; resolves with the plugin's output. */
  run(job: SandboxJob): Promise<unknown>;
  /** Stops every sandbox process; attempts still running fail. */
  close(): Promise<void>;
}

interface PoolLogger {
  warn(details: object, message: string): void;
}

/** The module every sandbox process runs. */
const childScript = installPath('core', 'src', 'plugins', 'sandbox', 'child.js');
/** An idle process is stopped after this long. */
const IDLE_MS = 30_000;
/** After an abort, a plugin has this long to settle before its process is killed. */
const ABORT_GRACE_MS = 1000;
/** How often a process's resident size is read (Linux). */
const MEMORY_POLL_MS = 200;
/** Resident memory a sandbox may hold beyond its heap limit: Node itself, buffers. */
const RESIDENT_ALLOWANCE_MB = 128;
/** Log entries one attempt may write; the rest are dropped (one warning says so). */
const MAX_LOG_ENTRIES = 10_000;
const LOG_LEVELS = new Set<string>(['Trace', 'Debug', 'Info', 'Warning', 'Error', 'Critical']);
/** Node 22.13+ and 23.5+ name the permission model `--permission`; Node 20 only knows the old flag. */
const permissionFlag = process.allowedNodeEnvironmentFlags.has('--permission')
  ? '--permission'
  : '--experimental-permission';

/** An attempt waiting for its run's turn at a sandbox. */
interface Ticket {
  run: string;
  admit(): void;
  refuse(error: Error): void;
}

export function createSandboxPool(settings: SandboxSettings, logger?: PoolLogger): SandboxPool {
  const processes = new Set<SandboxProcess>();
  let wake: Array<() => void> = [];
  let closed = false;
  let nextId = 1;
  const stopping = () => new PluginRuntimeError('The worker is stopping its plugin sandboxes');

  // Turns at a sandbox, shared between runs: at most `maxProcesses` attempts hold one, at most
  // `perRun` of them of one run, and a freed turn goes to the waiting attempt whose run holds
  // the fewest (the longest waiting among those). A run's slow attempts (a call to a server that
  // takes its time) thus leave room for other runs, which never queue behind them. Another level
  // (a project's share above its runs') would rank tickets by that level's holdings first.
  const perRun = Math.min(settings.maxProcessesPerRun ?? Infinity, settings.maxProcesses);
  const queue: Ticket[] = [];
  const holding = new Map<string, number>();
  let admitted = 0;
  const held = (run: string) => holding.get(run) ?? 0;

  const admitWaiting = () => {
    while (admitted < settings.maxProcesses) {
      let next: Ticket | undefined;
      for (const ticket of queue) {
        const count = held(ticket.run);
        if (count < perRun && (next === undefined || count < held(next.run))) next = ticket;
      }
      if (next === undefined) return;
      queue.splice(queue.indexOf(next), 1);
      holding.set(next.run, held(next.run) + 1);
      admitted += 1;
      next.admit();
    }
  };
  const leave = (run: string) => {
    admitted -= 1;
    if (held(run) > 1) holding.set(run, held(run) - 1);
    else holding.delete(run);
    admitWaiting();
  };
  const turn = (job: SandboxJob) =>
    new Promise<void>((resolve, reject) => {
      job.signal.throwIfAborted();
      const onAbort = () => {
        queue.splice(queue.indexOf(ticket), 1);
        reject(abortReason(job.signal));
      };
      const ticket: Ticket = {
        run: job.task.executionId,
        admit: () => {
          job.signal.removeEventListener('abort', onAbort);
          resolve();
        },
        refuse: (error) => {
          job.signal.removeEventListener('abort', onAbort);
          reject(error);
        },
      };
      job.signal.addEventListener('abort', onAbort, { once: true });
      queue.push(ticket);
      admitWaiting();
    });

  const notify = () => {
    const waiting = wake;
    wake = [];
    for (const resume of waiting) resume();
  };
  const forget = (sandbox: SandboxProcess) => {
    processes.delete(sandbox);
    notify();
  };

  let starting = 0;

  async function run(job: SandboxJob): Promise<unknown> {
    if (closed) throw stopping();
    await turn(job);
    try {
      return await runInProcess(job);
    } finally {
      leave(job.task.executionId);
    }
  }

  // A process is given its attempt in the same turn it is found free or made, so two attempts can
  // never be handed the same process. An admitted attempt finds one soon: admissions never exceed
  // the processes there may be, so it waits only for one still settling an answered (aborted)
  // attempt, or stopping.
  async function runInProcess(job: SandboxJob): Promise<unknown> {
    const key = `${job.profile}\n${job.directory}`;
    for (;;) {
      if (closed) throw stopping();
      job.signal.throwIfAborted();
      const idle = [...processes].filter((sandbox) => sandbox.idle);
      const warm = idle.find((sandbox) => sandbox.key === key);
      if (warm) return warm.run(job, nextId++);
      const full = () => processes.size + starting >= settings.maxProcesses;
      if (full() && idle[0]) void idle[0].stop();
      if (!full()) {
        starting += 1;
        let options: SpawnOptions;
        try {
          options = await spawnOptions(job, settings);
        } finally {
          starting -= 1;
        }
        if (closed) throw stopping();
        const sandbox = new SandboxProcess(key, options, settings, {
          onExit: forget,
          onIdle: notify,
          logger,
        });
        processes.add(sandbox);
        return sandbox.run(job, nextId++);
      }
      // Every process is busy or stopping: wait for one to be free (or the attempt aborted).
      await new Promise<void>((resolve) => {
        const abort = () => resolve();
        wake.push(() => {
          job.signal.removeEventListener('abort', abort);
          resolve();
        });
        job.signal.addEventListener('abort', abort, { once: true });
      });
    }
  }

  return {
    run,
    async close() {
      closed = true;
      for (const ticket of queue.splice(0)) ticket.refuse(stopping());
      const exits = [...processes].map((sandbox) => sandbox.stop());
      notify();
      await Promise.all(exits);
    },
  };
}

interface SpawnOptions {
  args: string[];
  env: NodeJS.ProcessEnv;
  cwd: string;
}

async function spawnOptions(job: SandboxJob, settings: SandboxSettings): Promise<SpawnOptions> {
  const heap = [`--max-old-space-size=${settings.memoryMb}`];
  if (job.profile === 'builtin') {
    // Trusted code evaluating untrusted input: limits, and what it reached in process. Not the
    // worker's NODE_OPTIONS, though: an --inspect or a loader there is the worker's, not its own.
    const { NODE_OPTIONS: _, ...env } = process.env;
    return { args: [...heap, childScript], env, cwd: process.cwd() };
  }
  // What a third-party plugin is given must exist before the sandbox starts: it may not create it.
  await mkdir(settings.storageRoot, { recursive: true });
  const cache = path.dirname(job.directory);
  const readable = await withRealPaths([
    childScript,
    job.directory,
    // Bare imports resolve through the cache's link to the host's packages.
    path.join(cache, 'node_modules'),
    installPath('node_modules'),
    settings.storageRoot,
  ]);
  return {
    args: [
      ...heap,
      permissionFlag,
      '--disable-warning=ExperimentalWarning',
      ...readable.map((folder) => `--allow-fs-read=${folder}`),
      ...(await withRealPaths([settings.storageRoot])).map((f) => `--allow-fs-write=${f}`),
      // The watchdog thread (child.js); plugin code cannot start threads.
      '--allow-worker',
      ...(settings.allowProcessExecution ? ['--allow-child-process'] : []),
      childScript,
      'third-party',
    ],
    env: settings.allowProcessExecution && process.env.PATH ? { PATH: process.env.PATH } : {},
    cwd: job.directory,
  };
}

/** The paths and, where they differ, where their links lead (the permission model checks both). */
async function withRealPaths(paths: string[]): Promise<string[]> {
  const real = await Promise.all(paths.map((item) => realpath(item).catch(() => item)));
  return [...new Set([...paths, ...real])];
}

type StopReason = 'memory' | 'time' | 'protocol' | 'idle' | 'aborted' | 'closed';

interface Attempt {
  id: number;
  job: SandboxJob;
  resolve(output: unknown): void;
  reject(error: unknown): void;
  /** The caller has its answer (output, failure or the abort's reason). */
  answered: boolean;
  logs: number;
  /** Timers to clear and listeners to remove when the attempt ends. */
  cleanups: Array<() => void>;
}

/** One sandbox process and the attempt it runs. */
class SandboxProcess {
  readonly key: string;
  private readonly child: ChildProcess;
  private readonly input: Writable;
  private attempt: Attempt | null = null;
  private stopped: StopReason | null = null;
  private exited = false;
  private readonly exit: Promise<void>;
  private stderrTail = '';
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private idleTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly memoryPoll: ReturnType<typeof setInterval> | undefined;
  private readonly maxLineBytes: number;

  constructor(
    key: string,
    options: SpawnOptions,
    private readonly settings: SandboxSettings,
    private readonly events: {
      onExit(sandbox: SandboxProcess): void;
      onIdle(): void;
      logger: PoolLogger | undefined;
    },
  ) {
    this.key = key;
    this.maxLineBytes = settings.maxOutputBytes + 1024 * 1024;
    this.child = spawn(process.execPath, options.args, {
      cwd: options.cwd,
      env: options.env,
      stdio: ['pipe', 'ignore', 'pipe', 'pipe'],
    });
    const [stdin, , stderr, messages] = this.child.stdio as unknown as [
      Writable,
      null,
      Readable,
      Readable,
    ];
    this.input = stdin;
    // Every stream gets an error listener: a dying child must never raise an unhandled 'error'.
    stdin.on('error', () => {});
    stderr.on('error', () => {});
    messages.on('error', () => {});
    stderr.on('data', (chunk: Buffer) => {
      this.stderrTail = (this.stderrTail + chunk.toString('utf8')).slice(-8192);
    });
    messages.on('data', (chunk: Buffer) => this.receive(chunk));
    this.exit = new Promise((resolve) => {
      this.child.on('error', (error) => this.exited || this.onExit(null, null, error, resolve));
      this.child.on('close', (code, signal) => this.onExit(code, signal, undefined, resolve));
    });
    this.memoryPoll =
      process.platform === 'linux'
        ? setInterval(() => void this.checkMemory(), MEMORY_POLL_MS)
        : undefined;
    this.memoryPoll?.unref();
  }

  get idle(): boolean {
    return this.attempt === null && this.stopped === null && !this.exited;
  }

  run(job: SandboxJob, id: number): Promise<unknown> {
    // Aborted while it waited for this process: it never starts, and the process stays free.
    if (job.signal.aborted) {
      this.rest();
      return Promise.reject(abortReason(job.signal));
    }
    clearTimeout(this.idleTimer);
    this.ref(true);
    return new Promise((resolve, reject) => {
      const attempt: Attempt = { id, job, resolve, reject, answered: false, logs: 0, cleanups: [] };
      this.attempt = attempt;
      const after = (milliseconds: number, then: () => void) => {
        const timer = setTimeout(then, milliseconds);
        attempt.cleanups.push(() => clearTimeout(timer));
      };
      // The plugin's signal fired (cancel, the task's timeout) or the sandbox's time limit passed:
      // the caller has its answer at once, and the plugin a moment to stop (a database plugin to
      // cancel its statement on the server) before its process is killed.
      const stopAttempt = (failure: Error, reason: StopReason) => {
        this.answer(attempt, () => reject(failure));
        this.send({ type: 'abort', id, message: failure.message });
        after(ABORT_GRACE_MS, () => void this.stop(reason));
      };
      if (job.timeoutMilliseconds === undefined) {
        after(this.settings.timeoutMilliseconds, () =>
          stopAttempt(this.timeLimitPassed(job), 'time'),
        );
      }
      const onAbort = () => stopAttempt(abortReason(job.signal), 'aborted');
      if (job.signal.aborted) onAbort();
      else job.signal.addEventListener('abort', onAbort, { once: true });
      attempt.cleanups.push(() => job.signal.removeEventListener('abort', onAbort));
      this.send({
        type: 'run',
        id,
        name: job.name,
        module: path.join(job.directory, job.entry),
        parameters: job.parameters,
        specifications: job.specifications,
        task: job.task,
        host: job.host,
        ...(job.trace && { trace: job.trace }),
        maxOutputBytes: this.settings.maxOutputBytes,
      });
    });
  }

  /** Kills the process (at once: a busy plugin never reads a polite request). */
  stop(reason: StopReason = 'closed'): Promise<void> {
    this.stopped ??= reason;
    if (!this.exited) {
      // Whoever awaits the exit keeps this process alive until it is seen.
      this.ref(true);
      this.child.kill('SIGKILL');
    }
    return this.exit;
  }

  private send(message: Record<string, unknown>): void {
    if (!this.exited) this.input.write(`${JSON.stringify(message)}\n`);
  }

  private ref(busy: boolean): void {
    const handles = [this.child, ...this.child.stdio] as Array<{
      ref?(): void;
      unref?(): void;
    } | null>;
    for (const handle of handles) {
      if (busy) handle?.ref?.();
      else handle?.unref?.();
    }
  }

  /** Splits the child's messages into lines, refusing any line longer than `maxLineBytes`. */
  private receive(chunk: Buffer): void {
    let start = 0;
    for (let newline = chunk.indexOf(10); newline !== -1; newline = chunk.indexOf(10, start)) {
      const line = Buffer.concat([...this.pending, chunk.subarray(start, newline)]);
      this.pending = [];
      this.pendingBytes = 0;
      start = newline + 1;
      if (line.length > this.maxLineBytes) return this.violation(this.tooLong());
      this.handle(line.toString('utf8'));
      if (this.stopped) return;
    }
    const rest = chunk.subarray(start);
    this.pendingBytes += rest.length;
    if (this.pendingBytes > this.maxLineBytes) return this.violation(this.tooLong());
    if (rest.length > 0) this.pending.push(rest);
  }

  private tooLong(): string {
    return `sent a message over ${formatBytes(this.maxLineBytes)}`;
  }

  private handle(line: string): void {
    let message: Record<string, unknown>;
    try {
      message = JSON.parse(line) as Record<string, unknown>;
    } catch {
      return this.violation('sent a message that is not JSON');
    }
    const attempt = this.attempt;
    // Messages of another attempt (a plugin writing to the channel itself) are ignored.
    if (attempt === null || message.id !== attempt.id) return;
    const { job } = attempt;
    switch (message.type) {
      case 'log':
        return this.log(attempt, message);
      case 'heartbeat':
        if (!attempt.answered) job.heartbeat(message.details ?? undefined);
        return;
      case 'result':
        return this.finish(attempt, () => attempt.resolve(message.output));
      case 'output-not-json':
        return this.finish(attempt, () =>
          attempt.reject(outputNotJson(job.name, String(message.message))),
        );
      case 'output-too-large':
        return this.finish(attempt, () =>
          attempt.reject(
            outputTooLarge(job.name, Number(message.size), this.settings.maxOutputBytes),
          ),
        );
      case 'failure':
        return this.finish(attempt, () => attempt.reject(thrownError(message.error)));
      default:
        return this.violation(`sent a message of unknown type ${JSON.stringify(message.type)}`);
    }
  }

  private log(attempt: Attempt, message: Record<string, unknown>): void {
    if (attempt.answered) return;
    attempt.logs += 1;
    const { logger } = attempt.job;
    if (attempt.logs === MAX_LOG_ENTRIES + 1) {
      logger.warning(`Further log entries of this attempt were dropped (over ${MAX_LOG_ENTRIES}).`);
    }
    if (attempt.logs > MAX_LOG_ENTRIES) return;
    const level = LOG_LEVELS.has(String(message.level)) ? (message.level as LogLevel) : 'Info';
    logger.log(
      level,
      String(message.message),
      typeof message.exception === 'string' ? message.exception : undefined,
    );
  }

  private answer(attempt: Attempt, settle: () => void): void {
    if (attempt.answered) return;
    attempt.answered = true;
    settle();
  }

  /** The attempt is over and the process free for the next one. */
  private finish(attempt: Attempt, settle: () => void): void {
    this.answer(attempt, settle);
    this.endAttempt(attempt);
    this.rest();
  }

  /** Free for the next attempt: it no longer holds the worker open, and ends if left idle. */
  private rest(): void {
    if (this.stopped !== null || this.exited) return;
    this.ref(false);
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => void this.stop('idle'), IDLE_MS);
    this.idleTimer.unref();
    this.events.onIdle();
  }

  private endAttempt(attempt: Attempt): void {
    for (const cleanup of attempt.cleanups.splice(0)) cleanup();
    if (this.attempt === attempt) this.attempt = null;
  }

  private violation(detail: string): void {
    const attempt = this.attempt;
    void this.stop('protocol');
    if (attempt) {
      this.answer(attempt, () =>
        attempt.reject(
          new PluginRuntimeError(`${attempt.job.name} broke the sandbox protocol: it ${detail}`),
        ),
      );
    }
  }

  private async checkMemory(): Promise<void> {
    const pid = this.child.pid;
    if (pid === undefined || this.exited) return;
    const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
    const kilobytes = Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? 0);
    if (kilobytes > (this.settings.memoryMb + RESIDENT_ALLOWANCE_MB) * 1024)
      void this.stop('memory');
  }

  private onExit(
    code: number | null,
    signal: NodeJS.Signals | null,
    error: Error | undefined,
    resolve: () => void,
  ): void {
    if (this.exited) return;
    this.exited = true;
    clearInterval(this.memoryPoll);
    clearTimeout(this.idleTimer);
    const attempt = this.attempt;
    if (attempt) {
      this.endAttempt(attempt);
      this.answer(attempt, () =>
        attempt.reject(this.exitFailure(attempt.job, code, signal, error)),
      );
    }
    const expected =
      this.stopped === 'idle' || this.stopped === 'closed' || this.stopped === 'aborted';
    if (!expected && (attempt || code !== 0)) {
      this.events.logger?.warn(
        {
          plugin: attempt?.job.name,
          code,
          signal,
          reason: this.stopped,
          stderr: this.stderrTail,
          err: error,
        },
        'A plugin sandbox process ended',
      );
    }
    this.events.onExit(this);
    resolve();
  }

  private timeLimitPassed({ name }: SandboxJob): PluginRuntimeError {
    return new PluginRuntimeError(
      `${name} took longer than its time limit of ${this.settings.timeoutMilliseconds} ms (Plugins.Sandbox.TimeoutMilliseconds, for a task without timeoutMilliseconds)`,
    );
  }

  private exitFailure(
    job: SandboxJob,
    code: number | null,
    signal: NodeJS.Signals | null,
    error: Error | undefined,
  ): PluginRuntimeError {
    const { name } = job;
    if (this.stopped === 'memory' || outOfMemory.test(this.stderrTail)) {
      return new PluginRuntimeError(
        `${name} went over its memory limit of ${this.settings.memoryMb} MB (Plugins.Sandbox.MemoryMb)`,
      );
    }
    if (this.stopped === 'closed') {
      return new PluginRuntimeError(
        `${name} was stopped: the worker is stopping its plugin sandboxes`,
      );
    }
    if (error) return new PluginRuntimeError(`${name} could not start a sandbox: ${error.message}`);
    const how = code !== null ? `exit code ${code}` : `signal ${signal}`;
    return new PluginRuntimeError(`${name} stopped its sandbox (${how})`);
  }
}

/** What V8 prints when an allocation cannot be had: the heap limit, or a size it never allows. */
const outOfMemory =
  /heap out of memory|Allocation failed|invalid (size|table size|array length) error/i;

/** An error a plugin threw, as the sandbox reported it; a permission refusal said plainly. */
function thrownError(reported: unknown): Error {
  const details = (typeof reported === 'object' && reported !== null ? reported : {}) as Record<
    string,
    unknown
  >;
  const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
  let message = text(details.message) ?? 'the plugin failed';
  let nonRetryable = details.nonRetryable === true;
  if (details.code === 'ERR_ACCESS_DENIED') {
    message = deniedMessage(text(details.permission), text(details.resource));
    nonRetryable = true;
  }
  const error = new Error(message);
  error.name = text(details.name) ?? 'Error';
  error.stack = text(details.stack) ?? `${error.name}: ${message}`;
  return Object.assign(error, { nonRetryable });
}

function deniedMessage(permission: string | undefined, resource: string | undefined): string {
  const what = resource ? ` ${resource}` : '';
  switch (permission) {
    case 'FileSystemRead':
      return `The plugin sandbox denied reading${what}: a third-party plugin may read only its own package and Plugins.StorageRoot`;
    case 'FileSystemWrite':
      return `The plugin sandbox denied writing${what}: a third-party plugin may write only under Plugins.StorageRoot`;
    case 'ChildProcess':
      return 'The plugin sandbox denied starting a process: Plugins.AllowProcessExecution is false';
    case 'WorkerThreads':
      return 'The plugin sandbox denied starting a worker thread';
    default:
      return `The plugin sandbox denied ${permission ?? 'an operation'}${what}`;
  }
}

/** Why a signal fired, as an Error (the caller's own reason when it gave one). */
function abortReason(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason : new DOMException(String(reason), 'AbortError');
}
