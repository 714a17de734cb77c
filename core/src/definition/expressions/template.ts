/**
 * Templates: the `$[ ... ]` expressions inside a string, and the one expression of a condition.
 */

export type TemplatePart = { text: string } | { expression: string };

export class TemplateSyntaxError extends Error {}

/** Text (an expression, a value) as messages show it: a huge one is cut short. */
export function shorten(text: string): string {
  return text.length <= 200 ? text : `${text.slice(0, 200)}…`;
}

/**
 * Splits a string into literal text and `$[ ... ]` expressions. The closing `]` is the one that
 * balances the opening bracket, ignoring brackets inside quoted strings, so `$[Outputs('A')[0]]`
 * and `$[Outputs('A')['x]']]` are single expressions.
 */
export function splitTemplate(text: string): TemplatePart[] {
  const parts: TemplatePart[] = [];
  let literalStart = 0;
  let index = text.indexOf('$[');
  while (index !== -1) {
    const end = findClosingBracket(text, index + 2);
    if (end === -1) {
      throw new TemplateSyntaxError(`unterminated $[ at character ${index}: missing ]`);
    }
    if (index > literalStart) parts.push({ text: text.slice(literalStart, index) });
    const expression = text.slice(index + 2, end).trim();
    if (expression === '') throw new TemplateSyntaxError(`empty $[ ] at character ${index}`);
    parts.push({ expression });
    literalStart = end + 1;
    index = text.indexOf('$[', literalStart);
  }
  if (literalStart < text.length) parts.push({ text: text.slice(literalStart) });
  return parts;
}

function findClosingBracket(text: string, from: number): number {
  let depth = 0;
  let quote: string | null = null;
  for (let i = from; i < text.length; i++) {
    const char = text[i];
    if (quote !== null) {
      if (char === '\\') i++;
      else if (char === quote) quote = null;
    } else if (char === "'" || char === '"') {
      quote = char;
    } else if (char === '[') {
      depth++;
    } else if (char === ']') {
      if (depth === 0) return i;
      depth--;
    }
  }
  return -1;
}

/** The expression inside a string that is exactly one `$[ ... ]`, or null. */
export function soleExpression(parts: TemplatePart[]): string | null {
  const [only, ...rest] = parts;
  return only !== undefined && rest.length === 0 && 'expression' in only ? only.expression : null;
}

/** A condition may be written bare (`a == 1`) or wrapped (`$[a == 1]`). */
export function unwrapCondition(condition: string): string {
  const text = condition.trim();
  if (!text.includes('$[')) return text;
  const sole = soleExpression(splitTemplate(text));
  if (sole === null) {
    throw new TemplateSyntaxError('a condition must be one expression, with or without $[ ]');
  }
  return sole;
}
