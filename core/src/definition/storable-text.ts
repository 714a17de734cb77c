/**
 * Text PostgreSQL cannot store. A `text` column refuses the NUL character (SQLSTATE 22021) and a
 * `jsonb` value refuses its escape `\u0000` (22P05) and an unpaired UTF-16 surrogate (22P02);
 * the driver would also turn an unpaired surrogate in a `text` value into U+FFFD on the way,
 * so what came back would not be what was given.
 *
 * What a user sends is refused (`unstorableCharacter`, at the API); what a task produces is
 * written with each such character replaced by U+FFFD, the replacement character
 * (`storableText`, `storableJson`), so that a plugin's output or log message never stops a run.
 */

/** A NUL, or a surrogate that is not half of a pair. */
const UNSTORABLE = /\0|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const UNSTORABLE_ALL = new RegExp(UNSTORABLE.source, 'g');

/**
 * The same characters as JSON.stringify writes them: `\u0000` and, for an unpaired surrogate,
 * `\udXXX` (paired ones are written as they are). A backslash counts only when an even number of
 * backslashes precedes it, so the text `\\u0000` (an escaped backslash, then `u0000`) is left alone.
 */
const UNSTORABLE_ESCAPES = /(?<!\\)((?:\\\\)*)\\u(?:0000|[dD][89a-fA-F][0-9a-fA-F]{2})/g;

/** The replacement for each character PostgreSQL cannot store (U+FFFD). */
export const REPLACEMENT_CHARACTER = '\uFFFD';

/** What is wrong with a string PostgreSQL cannot store, in words; null when it can be stored. */
export function unstorableCharacter(text: string): string | null {
  const found = UNSTORABLE.exec(text);
  if (found === null) return null;
  if (found[0] === '\0') return 'contains a NUL character (\\u0000), which cannot be stored';
  const code = found[0].charCodeAt(0).toString(16);
  return `contains an unpaired UTF-16 surrogate (\\u${code}), which cannot be stored`;
}

/** The text with every character PostgreSQL cannot store replaced by U+FFFD. */
export function storableText(text: string): string {
  return UNSTORABLE.test(text) ? text.replace(UNSTORABLE_ALL, REPLACEMENT_CHARACTER) : text;
}

/**
 * A value as JSON text for a `jsonb` column, with every character PostgreSQL cannot store
 * replaced by U+FFFD, in keys and strings alike. Everything else is exactly JSON.stringify's.
 */
export function storableJson(value: unknown): string {
  const json = JSON.stringify(value);
  return json.includes('\\u') ? json.replace(UNSTORABLE_ESCAPES, '$1\\ufffd') : json;
}
