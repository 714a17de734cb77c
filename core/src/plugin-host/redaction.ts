import { REDACTED } from './settings.js';

/**
 * Keeping a run's secret setting values out of what the run records: its output (which later
 * tasks read and may print), its error message (the task's message) and stack (the log's
 * exception). Plugin logs go through the same `secretRedactor`.
 *
 * Text is often cut before it gets here (a plugin keeps the start of a response body, the sandbox
 * caps a log entry): a cut keeps a secret's start (text cut after it) or its end (text cut before
 * it), which no longer matches whole. So a run of `SECRET_RUN` or more characters that begins or
 * ends a secret is replaced too. A piece from a secret's middle, which only two cuts leave, is
 * not: a connection string's host, or the words of a URL, say nothing of its password and are
 * what an error message needs.
 */

/** The shortest start or end of a secret that is redacted on its own. */
export const SECRET_RUN = 8;

/**
 * Replaces every occurrence of every secret, and of every run of `SECRET_RUN` or more characters
 * that starts or ends one, by `"********"` (overlapping or adjacent stretches become one).
 */
export function secretRedactor(secrets: readonly string[]): (text: string) => string {
  const candidates = secrets.filter((secret) => secret.length > 0 && secret !== REDACTED);
  return (text) => {
    const stretches: Array<[number, number]> = [];
    for (const secret of candidates) collectStretches(text, secret, stretches);
    return stretches.length === 0 ? text : replaceStretches(text, stretches);
  };
}

// Where `secret`, or a run of SECRET_RUN or more of its first or last characters, appears.
function collectStretches(text: string, secret: string, into: Array<[number, number]>): void {
  if (secret.length < SECRET_RUN) {
    for (let at = text.indexOf(secret); at !== -1; at = text.indexOf(secret, at + 1)) {
      into.push([at, at + secret.length]);
    }
    return;
  }
  const head = secret.slice(0, SECRET_RUN);
  for (let at = text.indexOf(head); at !== -1; at = text.indexOf(head, at + 1)) {
    let length = SECRET_RUN;
    while (length < secret.length && text[at + length] === secret[length]) length++;
    into.push([at, at + length]);
  }
  const tail = secret.slice(-SECRET_RUN);
  for (let at = text.indexOf(tail); at !== -1; at = text.indexOf(tail, at + 1)) {
    let start = at;
    const end = at + SECRET_RUN;
    let from = secret.length - SECRET_RUN;
    while (from > 0 && start > 0 && text[start - 1] === secret[from - 1]) {
      start--;
      from--;
    }
    into.push([start, end]);
  }
}

function replaceStretches(text: string, stretches: Array<[number, number]>): string {
  stretches.sort((a, b) => a[0] - b[0]);
  const kept: string[] = [];
  let keptFrom = -1;
  for (const [start, end] of stretches) {
    if (start > keptFrom) kept.push(text.slice(Math.max(keptFrom, 0), start), REDACTED);
    keptFrom = Math.max(keptFrom, end);
  }
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
