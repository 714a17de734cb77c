import { setTimeout as sleep } from 'node:timers/promises';
import { Unavailable } from '#definition/errors.js';
import type { Logger } from './logging.js';

export interface WaitOptions {
  /** What is being reached, for messages: "PostgreSQL at db:5432". */
  what: string;
  /** How long to keep trying (`Startup.WaitSeconds`); 0 tries once. */
  waitSeconds: number;
  /** What to check when it never answers, ending the final message. */
  advice: string;
  /** Whether an error means "not reachable yet" (retried) rather than a mistake (thrown at once). */
  retryable: (error: unknown) => boolean;
  logger: Logger;
  /** Aborting stops the wait at once with the signal's reason. */
  signal?: AbortSignal;
  /** First pause between tries; doubles up to `maxDelayMs`. */
  firstDelayMs?: number;
  maxDelayMs?: number;
}

/**
 * Tries `attempt` until it succeeds, as a process starting beside its dependencies needs (in a
 * compose file or a Kubernetes pod, PostgreSQL and Temporal often come up after Trellis): a
 * retryable failure waits with exponential backoff, logging one line per try, until
 * `waitSeconds` have passed; then it fails with an `Unavailable` that says what to check.
 */
export async function waitUntilReachable<T>(
  attempt: () => Promise<T>,
  options: WaitOptions,
): Promise<T> {
  const { what, waitSeconds, logger, signal } = options;
  const started = Date.now();
  const deadline = started + waitSeconds * 1000;
  let delay = options.firstDelayMs ?? 500;
  for (let tries = 1; ; tries++) {
    signal?.throwIfAborted();
    try {
      const result = await attempt();
      if (tries > 1) {
        logger.info({ tries, waitedMs: Date.now() - started }, `${what} answered`);
      }
      return result;
    } catch (error) {
      if (!options.retryable(error)) throw error;
      const reason = error instanceof Error ? error.message : String(error);
      const left = deadline - Date.now();
      if (left <= 0) {
        const waited = Math.round((Date.now() - started) / 1000);
        throw new Unavailable(
          `${what} did not answer in ${waited} s (${tries} ${tries === 1 ? 'try' : 'tries'}, ` +
            `Startup.WaitSeconds is ${waitSeconds}): ${reason}. ${options.advice}`,
          { cause: error },
        );
      }
      const pause = Math.min(delay, left);
      logger.warn(
        { tries, retryInMs: pause, waitedMs: Date.now() - started, waitSeconds },
        `${what} is not reachable yet (${reason}); trying again in ${(pause / 1000).toFixed(1)} s`,
      );
      await sleep(pause, undefined, { signal });
      delay = Math.min(delay * 2, options.maxDelayMs ?? 5_000);
    }
  }
}
