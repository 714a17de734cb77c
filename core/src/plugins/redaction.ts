import { REDACTED } from './settings.js';

/**
 * Keeping a run's secret setting values out of what the run records: its output (which later
 * tasks read and may print), its error message (the task's message) and stack (the log's
 * exception). Plugin logs go through the same `redactText`.
 */

/** `text` with every occurrence of every secret replaced by `"********"`. */
export function redactText(text: string, secrets: readonly string[]): string {
  return secrets.reduce((result, secret) => result.split(secret).join(REDACTED), text);
}

/** A JSON value with the secrets replaced in every string and every key. */
export function redactOutput(value: unknown, secrets: readonly string[]): unknown {
  if (secrets.length === 0) return value;
  if (typeof value === 'string') return redactText(value, secrets);
  if (Array.isArray(value)) return value.map((item) => redactOutput(item, secrets));
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [
        redactText(key, secrets),
        redactOutput(item, secrets),
      ]),
    );
  }
  return value;
}

/** The error a plugin threw, with the secrets replaced in its message and stack (in place). */
export function redactError<T>(error: T, secrets: readonly string[]): T {
  if (secrets.length === 0 || !(error instanceof Error)) return error;
  error.message = redactText(error.message, secrets);
  if (error.stack !== undefined) error.stack = redactText(error.stack, secrets);
  return error;
}
