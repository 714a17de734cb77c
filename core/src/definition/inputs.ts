/**
 * The inputs a definition declares (`inputs`), and the values a run is given for them: each
 * given value must be declared and have the declared JSON type, every required input must be
 * given, and defaults fill the rest. Pure: no Node, no database.
 */
import { formatPath, type PathSegment } from './validation/path.js';
import { isOfJsonType } from './validation/json-type.js';
import { didYouMean, suggestionsFor } from './suggestions.js';
import { problemAt, withSuggestions, type Problem } from './validation/problem.js';
import type { InputType, WorkflowDefinition } from './types.js';

export type InputsResult =
  { ok: true; inputs: Record<string, unknown> } | { ok: false; problems: Problem[] };

/**
 * Resolves the values given to a run against the declared inputs. `at` is where the values came
 * from in the request (`body.inputs`), so that each problem names its input; `declarer` is what
 * declares them, named when it declares none.
 */
export function resolveInputs(
  definition: Pick<WorkflowDefinition, 'inputs'>,
  given: Record<string, unknown> | undefined,
  at: readonly PathSegment[],
  declarer: 'workflow' | 'approval' = 'workflow',
): InputsResult {
  const declared = definition.inputs ?? {};
  const values = given ?? {};
  const problems: Problem[] = [];
  const inputs: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(values)) {
    const declaration = Object.hasOwn(declared, name) ? declared[name] : undefined;
    const where = formatPath([...at, name]);
    if (declaration === undefined) {
      const known = Object.keys(declared);
      const near = suggestionsFor(name, known);
      const listed =
        known.length > 0 ? `declared: ${known.join(', ')}` : `the ${declarer} declares none`;
      problems.push(
        withSuggestions(
          problemAt(
            where,
            `is not a declared input (${listed})${didYouMean(near)}`,
            'validation.unknown',
          ),
          near,
        ),
      );
      continue;
    }
    const problem = typeProblem(declaration.type, value);
    if (problem !== null) problems.push(problemAt(where, problem));
    else inputs[name] = value;
  }
  for (const [name, declaration] of Object.entries(declared)) {
    if (Object.hasOwn(values, name)) continue;
    if (declaration.default !== undefined) inputs[name] = declaration.default;
    else if (declaration.required === true) {
      problems.push(
        problemAt(
          formatPath([...at, name]),
          `is required (${declaration.type})`,
          'validation.required',
        ),
      );
    }
  }
  return problems.length > 0 ? { ok: false, problems } : { ok: true, inputs };
}

/**
 * Problems of the declarations themselves: a default must have its input's type. `at` is where
 * the declarations are in the definition (a workflow's `inputs`, an approval's).
 */
export function checkInputDeclarations(
  definition: Pick<WorkflowDefinition, 'inputs'>,
  at: readonly PathSegment[] = ['inputs'],
): Problem[] {
  const problems: Problem[] = [];
  for (const [name, declaration] of Object.entries(definition.inputs ?? {})) {
    if (declaration.default === undefined) continue;
    const problem = typeProblem(declaration.type, declaration.default);
    if (problem !== null) problems.push(problemAt(formatPath([...at, name, 'default']), problem));
  }
  return problems;
}

/** Why a value is not of a JSON type, or null when it is. */
function typeProblem(type: InputType, value: unknown): string | null {
  return isOfJsonType(type, value)
    ? null
    : `must be ${article(type)} ${type}, not ${describe(value)}`;
}

function article(type: InputType): string {
  return type === 'integer' || type === 'object' || type === 'array' ? 'an' : 'a';
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  return `the ${typeof value} ${JSON.stringify(value)}`;
}
