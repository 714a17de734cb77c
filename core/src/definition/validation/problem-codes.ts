/**
 * The stable codes of validation problems. Every validation message of Trellis reads
 * `<place>: <problem>` (describe.ts writes them); the place becomes the problem's `path` and
 * the problem's wording, which describe.ts and the input checks keep fixed, its code:
 *
 * - `validation.required`: a required field or input is missing;
 * - `validation.unknown`: a field or input that is not known;
 * - `validation.enum`: a value that is not one of the allowed ones;
 * - `validation.invalid`: any other problem (wrong type, format, range, graph, expression).
 *
 * Pure: no Node, no Ajv.
 */

const PLACE = /^([^\s:]+): (.*)$/s;

/** The code, place and message of one validation message. */
export function validationProblem(message: string): {
  code: string;
  message: string;
  path?: string;
} {
  const placed = PLACE.exec(message);
  const path = placed?.[1];
  const problem = placed?.[2] ?? message;
  // A definition's problems are nested (`body.definition: tasks[0].name: ...`): the innermost.
  let wording = problem;
  for (let inner = PLACE.exec(wording); inner; inner = PLACE.exec(wording))
    wording = inner[2] ?? '';
  return { code: codeOf(wording), message, ...(path === undefined ? {} : { path }) };
}

function codeOf(wording: string): string {
  if (/^is required\b/.test(wording)) return 'validation.required';
  if (/^is not (allowed|a known property|a declared input)\b/.test(wording)) {
    return 'validation.unknown';
  }
  if (/^must be one of\b/.test(wording)) return 'validation.enum';
  return 'validation.invalid';
}
