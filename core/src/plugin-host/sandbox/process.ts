import type { ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import type { LogLevel } from '#store/tables.js';
import { formatBytes } from '#definition/format-bytes.js';
import type { PluginContext, PluginLogger } from '../contract.js';
import { outputNotJson, outputTooLarge, PluginRuntimeError } from '../failures.js';
import type { SandboxProfile, SandboxSettings } from './sandbox-settings.js';
import { spawnSandbox, type SpawnOptions } from './spawn.js';

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

/** Where a sandbox process reports an end nobody asked for. */
export interface SandboxLogger {
  warn(details: object, message: string): void;
}

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
export class SandboxProcess {
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
      logger: SandboxLogger | undefined;
    },
  ) {
    this.key = key;
    this.maxLineBytes = settings.maxOutputBytes + 1024 * 1024;
    this.child = spawnSandbox(options);
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
export function abortReason(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason : new DOMException(String(reason), 'AbortError');
}
