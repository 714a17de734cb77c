/**
 * The one place every request's values are checked for what no field of the API can take:
 * text PostgreSQL cannot store (a NUL, an unpaired surrogate; see core/src/definition/storable-text.ts)
 * in any string or key of the body, the path or the query, and a body nested deeper than
 * `Server.MaxBodyDepth` (JSON.parse reads any depth; the code after it recurses). It runs after
 * the body is parsed and before the request is validated, so no handler ever sees such a value.
 */
import type { Operation } from 'openapi-backend';
import { unstorableCharacter } from '#definition/storable-text.js';
import type { ValidationProblem } from '#definition/validation/describe.js';
import { jsonLimitProblems } from '#definition/validation/json-limits.js';

export interface RequestValues {
  /** The request path as received (percent-encoded). */
  path: string;
  query: Record<string, unknown>;
  body: unknown;
}

/** Each problem's path starts with its section: `path`, `query` or `requestBody`. */
export function requestValueProblems(
  request: RequestValues,
  operation: Operation,
  maxBodyDepth: number,
): ValidationProblem[] {
  const problems: ValidationProblem[] = [];
  for (const [name, value] of pathParameters(request.path, operation.path)) {
    const problem = value === null ? malformedEscape : unstorableCharacter(value);
    if (problem !== null) problems.push({ path: ['path', name], problem });
  }
  for (const [name, value] of Object.entries(request.query)) {
    const nameProblem = unstorableCharacter(name);
    if (nameProblem !== null) problems.push({ path: ['query'], problem: `a name ${nameProblem}` });
    for (const item of Array.isArray(value) ? value : [value]) {
      const problem = typeof item === 'string' ? unstorableCharacter(item) : null;
      if (problem !== null) problems.push({ path: ['query', name], problem });
    }
  }
  if (request.body !== undefined) {
    const limits = { maxDepth: maxBodyDepth, depthSetting: 'Server.MaxBodyDepth' };
    problems.push(...jsonLimitProblems(request.body, limits, ['requestBody']));
  }
  return problems;
}

const malformedEscape = 'must be percent-encoded UTF-8 (it holds a malformed %-escape)';

/**
 * `{name}` segments of the operation's path template with the request's decoded values (null
 * for a segment whose %-escapes do not decode).
 */
function pathParameters(path: string, template: string): Array<[string, string | null]> {
  if (!path.includes('%')) return []; // raw NULs cannot be sent; only %00 can
  const segments = path.split('/');
  const parameters: Array<[string, string | null]> = [];
  template.split('/').forEach((part, index) => {
    const name = /^\{(.+)\}$/.exec(part)?.[1];
    const segment = segments[index];
    if (name !== undefined && segment !== undefined) parameters.push([name, decoded(segment)]);
  });
  return parameters;
}

function decoded(segment: string): string | null {
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}
