import { executionEventsChannel } from '#store/execution-event-repository.js';
import type { Listen } from '#store/notifications.js';
import type { Logger } from '#platform/logging.js';

/**
 * Wakes whoever follows an execution in this API process when PostgreSQL says it has new events:
 * one LISTEN (one connection) for the whole process, fanned out in memory to the streams and
 * waits of each execution. A wake is only a hint to read again; readers also read every poll
 * interval, so a lost notification delays an event, never loses it.
 */
export interface ExecutionEventHub {
  /** Follows one execution until `signal` aborts or the hub closes. */
  follow(executionId: string, signal?: AbortSignal): ExecutionFollower;
  /**
   * Runs `read` for a follower of an execution, sharing it with the followers that ask for the
   * same `key` while it runs: 500 streams of 50 runs make 50 queries a notification, not 500. A
   * read started before a notification is never shared with one asked for after it, so a
   * follower woken by a notification gets what it announced.
   */
  shared<T>(executionId: string, key: string, read: () => Promise<T>): Promise<T>;
  /** Ends every follower (their `wait` resolves `false`); the API closes it before it stops. */
  close(): Promise<void>;
}

export interface ExecutionFollower {
  /**
   * Resolves `true` once the execution may have new events (at once when it may have had some
   * since the last call; the first call too), or after `ms` anyway; `false` once the follower has
   * ended (its signal aborted, or the hub closed).
   */
  wait(ms: number): Promise<boolean>;
  /** Whether the follower has ended. */
  readonly ended: boolean;
  /** Aborted when the follower ends. */
  readonly signal: AbortSignal;
  /** Stops following; frees everything it held. */
  stop(): void;
}

export function createExecutionEventHub(listen: Listen, logger: Logger): ExecutionEventHub {
  const followers = new Map<string, Set<Follower>>();
  /** Notifications seen per followed execution, and gaps (which may hide any), so far. */
  const notified = new Map<string, number>();
  let gaps = 0;
  /** Reads under way, by execution, notifications seen when they started, and key. */
  const reads = new Map<string, Promise<unknown>>();
  const closing = new AbortController();
  let listening: Promise<() => Promise<void>> | undefined;

  const wakeAll = () => {
    gaps += 1;
    for (const set of followers.values()) for (const follower of set) follower.wake();
  };
  const startListening = () =>
    (listening ??= listen(executionEventsChannel, {
      onNotify: (executionId) => {
        const set = followers.get(executionId);
        if (!set) return;
        notified.set(executionId, (notified.get(executionId) ?? 0) + 1);
        for (const follower of set) follower.wake();
      },
      // Notifications may have been missed while there was no connection: everyone reads again.
      onGap: wakeAll,
    }));

  return {
    follow(executionId, signal) {
      const follower = new Follower(AbortSignal.any([closing.signal, ...(signal ? [signal] : [])]));
      let set = followers.get(executionId);
      if (!set) followers.set(executionId, (set = new Set()));
      set.add(follower);
      follower.onEnd(() => {
        set.delete(follower);
        if (set.size === 0 && followers.get(executionId) === set) {
          followers.delete(executionId);
          notified.delete(executionId);
        }
      });
      void startListening().catch((error: unknown) =>
        logger.warn({ err: error }, 'cannot listen for execution events; streams poll'),
      );
      return follower;
    },
    shared<T>(executionId: string, key: string, read: () => Promise<T>): Promise<T> {
      const at = `${executionId}\n${notified.get(executionId) ?? 0}\n${gaps}\n${key}`;
      let running = reads.get(at) as Promise<T> | undefined;
      if (!running) {
        running = read();
        reads.set(at, running);
        const done = () => reads.delete(at);
        running.then(done, done);
      }
      return running;
    },
    async close() {
      closing.abort();
      const stop = await listening?.catch(() => undefined);
      listening = undefined;
      await stop?.();
    },
  };
}

class Follower implements ExecutionFollower {
  #woken = true;
  #resolve: ((value: boolean) => void) | undefined;
  #ended = false;
  readonly #onEnd: (() => void)[] = [];
  readonly #controller = new AbortController();

  constructor(signal: AbortSignal) {
    const end = () => this.stop();
    if (signal.aborted) end();
    else signal.addEventListener('abort', end, { once: true, signal: this.#controller.signal });
  }

  get ended(): boolean {
    return this.#ended;
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  onEnd(callback: () => void): void {
    if (this.#ended) callback();
    else this.#onEnd.push(callback);
  }

  wake(): void {
    this.#woken = true;
    this.#settle(true);
  }

  wait(ms: number): Promise<boolean> {
    if (this.#ended) return Promise.resolve(false);
    if (this.#woken) {
      this.#woken = false;
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.#settle(true), ms);
      this.#resolve = (value) => {
        clearTimeout(timer);
        this.#woken = false;
        resolve(value);
      };
    });
  }

  stop(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#controller.abort();
    this.#settle(false);
    for (const callback of this.#onEnd.splice(0)) callback();
  }

  #settle(value: boolean): void {
    const resolve = this.#resolve;
    this.#resolve = undefined;
    resolve?.(value);
  }
}
