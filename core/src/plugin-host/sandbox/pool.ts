import { PluginRuntimeError } from '../failures.js';
import { abortReason, SandboxProcess, type SandboxJob, type SandboxLogger } from './process.js';
import type { SandboxSettings } from './sandbox-settings.js';
import { spawnOptions, type SpawnOptions } from './spawn.js';

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
 *
 * The sandbox's limits come from `sandbox-settings.ts`, a process's command line from `spawn.ts`,
 * one process and its attempt live in `process.ts`; this file shares the processes between runs.
 */

export interface SandboxPool {
  /** Runs one attempt in a sandbox process; resolves with the plugin's output. */
  run(job: SandboxJob): Promise<unknown>;
  /** Stops every sandbox process; attempts still running fail. */
  close(): Promise<void>;
}

/** An attempt waiting for its run's turn at a sandbox. */
interface Ticket {
  run: string;
  admit(): void;
  refuse(error: Error): void;
}

export function createSandboxPool(settings: SandboxSettings, logger?: SandboxLogger): SandboxPool {
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
