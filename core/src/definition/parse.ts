/**
 * Reads a workflow definition from its JSON text: size, syntax, the bounds of `limits.ts` (before
 * anything walks the value recursively), case-insensitive keys, the JSON Schema emitted from
 * `spec/definition/` (generated/workflow-definition.schema.json), the size bounds, then the
 * graph and expression checks of `dag.ts`. Every problem is its own, with its code and place.
 */
import type { ValidateFunction } from 'ajv';
import { parse as parseJsonc, printParseErrorCode, type ParseError } from 'jsonc-parser';
import definitionSchema from '../../../generated/workflow-definition.schema.json' with { type: 'json' };
import { trellisSchemas } from './validation/ajv.js';
import { canonicalizeKeys } from './validation/canonical-keys.js';
import { placedProblems, validationErrorProblems } from './validation/describe.js';
import { distinctProblems, problemAt, type Problem } from './validation/problem.js';
import { checkGraph } from './dag.js';
import {
  defaultDefinitionLimits,
  sizeProblems,
  textSizeProblem,
  valueProblems,
  type DefinitionLimits,
} from './limits.js';
import { DEFINITION_MESSAGES, DEFINITION_ROOT } from './location.js';
import { checkSubworkflowTasks } from './subworkflows.js';
import { checkTestCases } from './test-cases.js';
import type { WorkflowDefinition } from './types.js';

export type ParseResult =
  { ok: true; definition: WorkflowDefinition } | { ok: false; problems: Problem[] };

/** Enough to fix a definition without flooding a response with thousands of lines. */
const MAX_ERRORS = 50;

/** Parses and validates a definition's JSON text within `limits` (the defaults when absent). */
export function parseDefinition(
  text: string,
  limits: DefinitionLimits = defaultDefinitionLimits,
): ParseResult {
  const tooLarge = textSizeProblem(text, limits);
  if (tooLarge !== null) return { ok: false, problems: [problemAt(DEFINITION_ROOT, tooLarge)] };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return {
      ok: false,
      problems: [
        problemAt(undefined, `definition is not valid JSON: ${describeSyntaxError(error, text)}`),
      ],
    };
  }
  return validateDefinition(value, limits);
}

/** Validates a definition already parsed from JSON (keys in any case) within `limits`. */
export function validateDefinition(
  value: unknown,
  limits: DefinitionLimits = defaultDefinitionLimits,
): ParseResult {
  const outOfBounds = valueProblems(value, limits);
  if (outOfBounds.length > 0) {
    return { ok: false, problems: limited(placedProblems(outOfBounds, DEFINITION_MESSAGES)) };
  }
  const canonical = canonicalizeKeys(value, definitionSchema);
  const validate = definitionValidator();
  const problems = placedProblems(canonical.problems, DEFINITION_MESSAGES);
  if (!validate(canonical.value)) {
    problems.push(
      ...validationErrorProblems(validate.errors, {
        ...DEFINITION_MESSAGES,
        knownKeysAt: canonical.knownKeysAt,
      }),
    );
  } else if (problems.length === 0) {
    const definition = canonical.value;
    problems.push(...placedProblems(sizeProblems(definition, limits), DEFINITION_MESSAGES));
    if (problems.length === 0) problems.push(...checkGraph(definition, limits.MaxDepth));
    if (problems.length === 0) problems.push(...checkSubworkflowTasks(definition));
    if (problems.length === 0) problems.push(...checkTestCases(definition));
    if (problems.length === 0) return { ok: true, definition };
  }
  return { ok: false, problems: limited(problems) };
}

/** The distinct problems, at most `MAX_ERRORS` of them and one saying how many more. */
export function limited(problems: readonly Problem[]): Problem[] {
  const unique = distinctProblems(problems);
  if (unique.length <= MAX_ERRORS) return unique;
  const more = problemAt(undefined, `... and ${unique.length - MAX_ERRORS} more problems`);
  return [...unique.slice(0, MAX_ERRORS), more];
}

let compiled: ValidateFunction<WorkflowDefinition> | undefined;

/** Compiled once, on first use. */
function definitionValidator(): ValidateFunction<WorkflowDefinition> {
  compiled ??= trellisSchemas.compile<WorkflowDefinition>(definitionSchema);
  return compiled;
}

/**
 * JSON.parse's messages do not always say where (V8: "Unexpected token ',', ... is not valid
 * JSON"), so a failed parse is diagnosed again with jsonc-parser, which reports the offset.
 */
function describeSyntaxError(error: unknown, text: string): string {
  const problems: ParseError[] = [];
  parseJsonc(text, problems, { disallowComments: true, allowTrailingComma: false });
  const first = problems[0];
  if (first === undefined) return error instanceof Error ? error.message : String(error);
  const problem = printParseErrorCode(first.error)
    .replace(/(?<=[a-z])(?=[A-Z])/g, ' ')
    .toLowerCase();
  const before = text.slice(0, first.offset);
  const line = before.split('\n').length;
  const column = before.length - before.lastIndexOf('\n');
  return `${problem} at line ${line}, column ${column} (position ${first.offset})`;
}
