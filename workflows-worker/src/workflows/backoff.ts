/**
 * Delays between retries of a task (docs/ARCHITECTURE.md#errors). Pure; `random` is injected so the
 * workflow passes its own `Math.random`, which Temporal seeds per run and replays identically.
 */
import type { BackoffStrategy, RetryPolicy } from '#definition/types.js';

/** What a task gets when its retry policy leaves a field out. */
export const retryDefaults = {
  maxRetries: 3,
  backoffStrategy: 'Fixed' as BackoffStrategy,
  initialDelayMilliseconds: 1000,
};

/** `Linear` grows by one initial delay per retry unless told otherwise; the others double. */
function defaultCoefficient(strategy: BackoffStrategy): number {
  return strategy === 'Linear' ? 1 : 2;
}

/**
 * The delay before retry number `retry` (1 for the first retry), in whole milliseconds:
 * - `Fixed`: the initial delay every time;
 * - `Linear`: initial × (1 + coefficient × (retry − 1)) — the coefficient is the step multiplier;
 * - `Exponential`: initial × coefficient^(retry − 1);
 * - `Jitter`: the exponential delay, capped, then drawn uniformly from its upper half
 *   ("equal jitter": spreads retries out while never collapsing to zero).
 * Every delay is capped by `maxDelayMilliseconds` when set.
 */
export function retryDelay(policy: RetryPolicy, retry: number, random: () => number): number {
  const strategy = policy.backoffStrategy ?? retryDefaults.backoffStrategy;
  const initial = policy.initialDelayMilliseconds ?? retryDefaults.initialDelayMilliseconds;
  const coefficient = policy.backoffCoefficient ?? defaultCoefficient(strategy);
  const step = Math.max(1, retry) - 1;
  let delay: number;
  switch (strategy) {
    case 'Fixed':
      delay = initial;
      break;
    case 'Linear':
      delay = initial * (1 + coefficient * step);
      break;
    case 'Exponential':
    case 'Jitter':
      delay = initial * coefficient ** step;
      break;
  }
  const cap = policy.maxDelayMilliseconds;
  if (cap !== undefined) delay = Math.min(delay, cap);
  if (strategy === 'Jitter') delay = delay / 2 + random() * (delay / 2);
  return Math.round(Math.min(delay, Number.MAX_SAFE_INTEGER));
}
