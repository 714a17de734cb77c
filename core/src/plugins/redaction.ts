import { REDACTED } from './settings.js';

/**
 * Keeping a run's secret setting values out of what the run records: its output (which later
 * tasks read and may print), its error message (the task's message) and stack (the log's
 * exception). Plugin logs go through the same `secretRedactor`.
 *
 * Text is often cut before it gets here (a plugin keeps the start of a response body, the sandbox
 * caps a log entry), and a cut secret no longer matches whole: so any run of `SECRET_RUN` or more
 * characters of a secret is replaced too, wherever it appears.
 */

/** The shortest piece of a secret that is redacted on its own. */
export const SECRET_RUN = 8;

/**
 * Replaces every occurrence of every secret, and every run of `SECRET_RUN` or more characters of
 * one, by `"********"`.
 */
export function secretRedactor(secrets: readonly string[]): (text: string) => string {
  const pieces = secretPieces(secrets);
  return (text) => {
    const whole = secrets.reduce((result, secret) => result.split(secret).join(REDACTED), text);
    return pieces.size === 0 ? whole : withoutPieces(whole, pieces);
  };
}

// Every SECRET_RUN-character substring of every secret: a longer run holds several.
function secretPieces(secrets: readonly string[]): Set<string> {
  const pieces = new Set<string>();
  for (const secret of secrets) {
    for (let start = 0; start + SECRET_RUN <= secret.length; start++) {
      pieces.add(secret.slice(start, start + SECRET_RUN));
    }
  }
  pieces.delete(REDACTED);
  return pieces;
}

// Overlapping and adjacent pieces make one stretch, replaced by one marker.
function withoutPieces(text: string, pieces: ReadonlySet<string>): string {
  const kept: string[] = [];
  let keptFrom = 0;
  let stretchEnd = -1;
  for (let start = 0; start + SECRET_RUN <= text.length; start++) {
    if (!pieces.has(text.slice(start, start + SECRET_RUN))) continue;
    if (start > stretchEnd) {
      kept.push(text.slice(keptFrom, start), REDACTED);
    }
    stretchEnd = start + SECRET_RUN;
    keptFrom = stretchEnd;
  }
  if (keptFrom === 0) return text;
  kept.push(text.slice(keptFrom));
  return kept.join('');
}

/** A JSON value with the secrets replaced in every string and every key. */
export function redactOutput(value: unknown, secrets: readonly string[]): unknown {
  if (secrets.length === 0) return value;
  const redact = secretRedactor(secrets);
  const visit = (item: unknown): unknown => {
    if (typeof item === 'string') return redact(item);
    if (Array.isArray(item)) return item.map(visit);
    if (typeof item === 'object' && item !== null) {
      return Object.fromEntries(
        Object.entries(item).map(([key, inner]) => [redact(key), visit(inner)]),
      );
    }
    return item;
  };
  return visit(value);
}

/** The error a plugin threw, with the secrets replaced in its message and stack (in place). */
export function redactError<T>(error: T, secrets: readonly string[]): T {
  if (secrets.length === 0 || !(error instanceof Error)) return error;
  const redact = secretRedactor(secrets);
  error.message = redact(error.message);
  if (error.stack !== undefined) error.stack = redact(error.stack);
  return error;
}
