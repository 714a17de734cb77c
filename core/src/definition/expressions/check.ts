/** Checking a definition's expressions, with a message for the user about the first problem. */
import { ExpressionTooDeep, MAX_TREE_DEPTH, parsedDepth } from './parse.js';
import { splitTemplate, TemplateSyntaxError, unwrapCondition } from './template.js';

/**
 * Checks a condition (bare, or wrapped in one `$[ ]`), its syntax tree at most `maxDepth` deep.
 * Returns a message for the user, or null when it is valid.
 */
export function checkExpression(expression: string, maxDepth = MAX_TREE_DEPTH): string | null {
  return problemOf(() => parseWithin(unwrapCondition(expression), maxDepth));
}

/** Checks every `$[ ... ]` in a string (trees at most `maxDepth` deep); the first problem, or null. */
export function checkTemplate(text: string, maxDepth = MAX_TREE_DEPTH): string | null {
  return problemOf(() => {
    for (const part of splitTemplate(text)) {
      if ('expression' in part) parseWithin(part.expression, maxDepth);
    }
  });
}

function parseWithin(expression: string, maxDepth: number): void {
  let depth: number;
  try {
    depth = parsedDepth(expression);
  } catch (error) {
    if (!(error instanceof ExpressionTooDeep)) throw error;
    depth = error.depth;
  }
  if (depth > maxDepth) {
    const tooDeep = new ExpressionTooDeep(expression, depth);
    throw new TemplateSyntaxError(
      `${tooDeep.message}, over the limit of ${maxDepth} (Definitions.MaxDepth)`,
    );
  }
}

/**
 * Checks one of the definition's `outputs`: a bare expression, or text with `$[ ... ]` in it.
 * Returns the first problem, or null.
 */
export function checkOutputExpression(text: string): string | null {
  return text.includes('$[') ? checkTemplate(text) : checkExpression(text);
}

function problemOf(check: () => unknown): string | null {
  try {
    check();
    return null;
  } catch (error) {
    if (error instanceof TemplateSyntaxError) return error.message;
    throw error;
  }
}
