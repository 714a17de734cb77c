import { isRefusedData } from '#store/constraint-errors.js';
import { Invalid } from '#definition/errors.js';

/**
 * Temporal retries a failed activity until it succeeds, which is right for a database that is
 * down or a worker that stops, and wrong for an error that comes back on every attempt: the run
 * would wait forever. These are the errors no retry can fix.
 */

/**
 * Why `error` will happen again however often the step is retried, in words for the execution's
 * message; null when a retry may succeed (a database outage, a worker shutting down...).
 */
export function permanentCause(error: unknown): string | null {
  if (error instanceof Invalid) return error.message;
  if (isRefusedData(error)) {
    const { message, code } = error as { message?: unknown; code?: unknown };
    return `the database refused the data: ${String(message)} [SQLSTATE ${String(code)}]`;
  }
  // Call stack exhausted: data nested deeper than the code walking it can go.
  if (error instanceof RangeError) return `the data is too large to handle: ${error.message}`;
  return null;
}
