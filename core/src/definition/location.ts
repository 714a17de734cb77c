/**
 * How validation messages name a place in a definition: `tasks[2].errorHandling.strategy`.
 * The JSON Schema errors (parse.ts), the DAG checks (dag.ts) and the console's editor are written
 * this way.
 */
import type { MessageStyle } from './validation/describe.js';
import { formatPath as formatValuePath, type PathSegment } from './validation/path.js';
import { problemAt, type Problem, type ValidationCode } from './validation/problem.js';

export type { PathSegment };

/** The name of the definition itself in messages. */
export const DEFINITION_ROOT = 'definition';

/** Plain words for people writing definitions: `tasks[0].type: must be a string or an object`. */
export const DEFINITION_MESSAGES: MessageStyle = {
  root: DEFINITION_ROOT,
  values: 'plain',
  wording: 'people',
  unknownKey: 'is not a known property',
};

/** `['tasks', 2, 'name']` → `tasks[2].name`; the empty path is the definition itself. */
export function formatPath(segments: readonly PathSegment[]): string {
  return formatValuePath(segments) || DEFINITION_ROOT;
}

/** A problem at a place in a definition, `validation.invalid` unless said otherwise. */
export function problemIn(
  segments: readonly PathSegment[],
  message: string,
  code?: ValidationCode,
): Problem {
  return problemAt(formatPath(segments), message, code);
}
