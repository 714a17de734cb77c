import type { ErrorObject } from 'ajv';
import { formatPath, pointerSegments, toPointer, type PathSegment } from './path.js';
import {
  distinctProblems,
  problemAt,
  renderProblem,
  type Problem,
  type ValidationCode,
} from './problem.js';

/**
 * Turns validation errors (Ajv's, and problems found beside it such as a key given twice) into
 * problems for people and programs, one per problem, each with its code and where it is. Every
 * validation message of Trellis is written here; callers only choose their vocabulary (a
 * `MessageStyle`).
 */

/** One problem of a value: where it is (a path into the value) and what it is. */
export interface ValidationProblem {
  path: PathSegment[];
  /** What is wrong there, e.g. `must be >= 1`. */
  problem: string;
  /** Its stable code; `validation.invalid` when absent. */
  code?: ValidationCode;
}

export interface MessageStyle {
  /**
   * How a place is named: by default by `formatPath` (`Server.Port`, `tasks[0].name`), the
   * whole value by `root`.
   */
  place?: (path: readonly PathSegment[]) => string;
  /**
   * Writes one message in words of its own (`parameter "url" must be string`) instead of
   * `place: problem`. Only for messages: such a sentence names no place a program could use.
   */
  sentence?: (path: readonly PathSegment[], problem: string) => string;
  /** The name of the whole value in the default place; default `(root)`. */
  root?: string;
  /** What a key the schema does not allow is told; default `is not allowed`. */
  unknownKey?: string;
  /** The keys known beside an unknown key, by that key's JSON pointer; listed after `unknownKey`. */
  knownKeysAt?: ReadonlyMap<string, readonly string[]>;
  /** Allowed values as JSON (`"Manual", "TimeBased"`, the default) or as written (`Abort, Retry`). */
  values?: 'json' | 'plain';
  /**
   * `people` rewords Ajv's type, length, pattern and union messages (`must be an integer`,
   * `must not be empty`, `must match the pattern ^a`); `ajv`, the default, keeps Ajv's.
   */
  wording?: 'ajv' | 'people';
  /**
   * A pattern error says `must be <description>` when the pattern's schema has a description
   * (`must be host:port`). Needs an Ajv with `verbose`, which gives errors their schema.
   */
  patternDescriptions?: boolean;
}

/** The problems of Ajv errors, each with its code and place; duplicates are dropped. */
export function validationErrorProblems(
  errors: readonly ErrorObject[] | null | undefined,
  style: MessageStyle = {},
): Problem[] {
  return placedProblems(problemsOf(errors ?? [], style), style);
}

/** Problems found outside Ajv, placed like the rest; duplicates are dropped. */
export function placedProblems(
  problems: readonly ValidationProblem[],
  style: MessageStyle = {},
): Problem[] {
  const root = style.root ?? '(root)';
  const place = style.place ?? ((path: readonly PathSegment[]) => formatPath(path) || root);
  return distinctProblems(
    problems.map(({ path, problem, code }) => problemAt(place(path), problem, code)),
  );
}

/** Messages for Ajv errors; duplicates are dropped. */
export function describeValidationErrors(
  errors: readonly ErrorObject[] | null | undefined,
  style: MessageStyle = {},
): string[] {
  return describeProblems(problemsOf(errors ?? [], style), style);
}

/** Messages for problems found outside Ajv, worded like the rest; duplicates are dropped. */
export function describeProblems(
  problems: readonly ValidationProblem[],
  style: MessageStyle = {},
): string[] {
  const { sentence } = style;
  if (sentence === undefined) return placedProblems(problems, style).map(renderProblem);
  return [...new Set(problems.map(({ path, problem }) => sentence(path, problem)))];
}

interface Described extends ValidationProblem {
  pointer: string;
  /** Where in the schema the error arose (absent for problems found beside Ajv). */
  schemaPath?: string;
  /** With a `type` error: the type the value is not. */
  wrongType?: string;
  /** With an error of a key a union's branch fixes to one value: that branch's value. */
  tag?: unknown;
}

/**
 * Union branches that do not apply are dropped: for a task `type` given as an object, "must be
 * a string" from the other branch would only confuse. When no branch has a problem of its own
 * beyond the value's type, the union is one message: `must be a string or an object`.
 */
function problemsOf(errors: readonly ErrorObject[], style: MessageStyle): Described[] {
  const described: Described[] = [];
  for (const error of errors) {
    // `must match "then" schema`: the branch's own errors say what does not match.
    if (error.keyword === 'if') continue;
    const keys = error.keyword === 'oneOf' ? requiredChoice(error.schema) : null;
    if (keys !== null) {
      // `oneOf` of branches that only require a key: "exactly one of these keys", said so.
      const branch = `${error.schemaPath}/`;
      const kept = described.filter((d) => !d.schemaPath?.startsWith(branch));
      described.splice(0, described.length, ...kept);
      const both = Array.isArray((error.params as { passingSchemas?: unknown }).passingSchemas);
      const list = keys.join(' or ');
      described.push({
        pointer: error.instancePath,
        path: pointerSegments(error.instancePath),
        problem: both ? `must have only one of ${list}, not both` : `must have ${list}`,
      });
      continue;
    }
    if (error.keyword === 'oneOf') {
      const picked = discriminatedBranch(described, error, style);
      if (picked !== null) {
        described.splice(0, described.length, ...picked);
        continue;
      }
    }
    // Any other `oneOf` whose value fit no branch reads as an `anyOf` (a definition given as
    // text or as an object); one that fit several is said as Ajv says it.
    const fitNone =
      error.keyword === 'oneOf' &&
      !Array.isArray((error.params as { passingSchemas?: unknown }).passingSchemas);
    if (error.keyword !== 'anyOf' && !fitNone) {
      described.push(describeError(error, style));
      continue;
    }
    const at = error.instancePath;
    const inside = (pointer: string) => pointer === at || pointer.startsWith(`${at}/`);
    const branches = described.filter((d) => inside(d.pointer));
    const relevant = branches.filter((d) => !(d.wrongType && d.pointer === at));
    const types = branches.flatMap((d) => (d.wrongType ? [typeName(d.wrongType, style)] : []));
    const replacement =
      relevant.length > 0
        ? relevant
        : [
            {
              pointer: at,
              path: pointerSegments(at),
              problem: `must be ${types.length > 0 ? types.join(' or ') : 'valid'}`,
            },
          ];
    described.splice(0, described.length, ...described.filter((d) => !inside(d.pointer)));
    described.push(...replacement);
  }
  return described;
}

/** A branch's error on a key it fixes to one value: `.../oneOf/2/properties/type/enum`. */
const TAG_ERROR = /\/oneOf\/(\d+)\/properties\/[^/]+\/(?:enum|const)$/;

/**
 * The problems of a `oneOf` whose branches each fix a key to one value (a discriminator, such as
 * a trigger's `type`), or null for any other `oneOf`. Only the branch that the value's key picks
 * applies: its problems are kept, the other branches' dropped. When the key picks none, it is one
 * problem listing every branch's value, beside the problems every branch has.
 *
 * Ajv compiles a subschema that branches share (a `$ref` they all use) once, and reports its
 * errors under the first branch's path in every branch: a problem every branch has is told by
 * its count, not by its path.
 */
function discriminatedBranch(
  described: readonly Described[],
  error: ErrorObject,
  style: MessageStyle,
): Described[] | null {
  const prefix = `${error.schemaPath}/`;
  const inUnion = (d: Described) => d.schemaPath?.startsWith(prefix) === true;
  const branchOf = (d: Described) => d.schemaPath?.slice(prefix.length).split('/')[0] ?? '';
  const isTag = (d: Described) => d.tag !== undefined && TAG_ERROR.test(d.schemaPath ?? '');
  const union = described.filter(inUnion);
  const tags = union.filter(isTag);
  const branches = Array.isArray(error.schema) ? error.schema.length : 0;
  const refused = new Set(tags.map(branchOf));
  const said = (d: Described) => `${d.pointer} ${d.problem}`;
  const count = new Map<string, number>();
  for (const d of union) count.set(said(d), (count.get(said(d)) ?? 0) + 1);
  const everyBranch = (d: Described) => !isTag(d) && (count.get(said(d)) ?? 0) >= branches;
  // Without the key (or with problems outside the branches' own keys), every branch says the
  // same: said once, without "must match exactly one schema".
  if (tags.length === 0 && union.length > 0 && union.every(everyBranch)) {
    return [...described.filter((d) => !inUnion(d)), ...union];
  }
  if (tags.length === 0 || refused.size < branches - 1) return null;
  const others = described.filter((d) => !inUnion(d));
  if (refused.size < branches) {
    const picked = union.filter((d) => !isTag(d) && !refused.has(branchOf(d)));
    return [...others, ...picked, ...union.filter(everyBranch)];
  }
  // No branch fits the key's value: say which values it takes, and what every branch says.
  const [first] = tags;
  if (first === undefined) return null;
  const values = tags.map((d) => d.tag);
  const list = style.values === 'plain' ? values.map(String) : values.map(toJson);
  return [
    ...others,
    { ...first, problem: `must be one of ${list.join(', ')}`, code: 'validation.enum' },
    ...union.filter(everyBranch),
  ];
}

/**
 * The keys of a `oneOf` whose every branch only requires one key (and names it in `properties`),
 * or null for any other `oneOf`. Needs an Ajv with `verbose`, which gives errors their schema.
 */
function requiredChoice(branches: unknown): string[] | null {
  if (!Array.isArray(branches) || branches.length < 2) return null;
  const keys: string[] = [];
  for (const branch of branches as unknown[]) {
    const { required, ...rest } = (branch ?? {}) as { required?: unknown };
    if (!Array.isArray(required) || required.length !== 1) return null;
    if (Object.keys(rest).some((keyword) => keyword !== 'properties')) return null;
    keys.push(String(required[0]));
  }
  return keys;
}

function describeError(error: ErrorObject, style: MessageStyle): Described {
  const params = error.params as Record<string, unknown>;
  const at = (
    path: PathSegment[],
    problem: string,
    options: { wrongType?: string; code?: ValidationCode } = {},
  ): Described => ({
    pointer: toPointer(path),
    path,
    schemaPath: error.schemaPath,
    problem,
    ...options,
  });
  const here = pointerSegments(error.instancePath);
  const people = style.wording === 'people';
  const ajvSays = error.message ?? 'is invalid';

  switch (error.keyword) {
    case 'required':
      return at([...here, String(params.missingProperty)], 'is required', {
        code: 'validation.required',
      });
    case 'additionalProperties':
      return unknownKey([...here, String(params.additionalProperty)], style);
    case 'unevaluatedProperties':
      return unknownKey([...here, String(params.unevaluatedProperty)], style);
    case 'not':
      // TypeSpec closes objects with `unevaluatedProperties: {not: {}}`: the error is the key's own.
      return error.schemaPath.endsWith('unevaluatedProperties/not')
        ? unknownKey(here, style)
        : at(here, ajvSays);
    case 'enum': {
      const allowed = params.allowedValues as unknown[];
      const list = style.values === 'plain' ? allowed.map(String) : allowed.map(toJson);
      const described = at(here, `must be one of ${list.join(', ')}`, { code: 'validation.enum' });
      return allowed.length === 1 ? { ...described, tag: allowed[0] } : described;
    }
    case 'const':
      return { ...at(here, `must be ${toJson(params.allowedValue)}`), tag: params.allowedValue };
    case 'type': {
      const type = String(params.type);
      return at(here, `must be ${typeName(type, style)}`, { wrongType: type });
    }
    case 'minLength':
    case 'minItems': {
      if (!people) return at(here, ajvSays);
      const unit = error.keyword === 'minLength' ? 'characters' : 'items';
      const limit = Number(params.limit);
      return at(here, limit === 1 ? 'must not be empty' : `must have at least ${limit} ${unit}`);
    }
    case 'maxLength':
      return at(here, people ? `must be at most ${String(params.limit)} characters` : ajvSays);
    case 'pattern': {
      const description = (error.parentSchema as { description?: unknown } | undefined)
        ?.description;
      if (style.patternDescriptions && typeof description === 'string') {
        return at(here, `must be ${description}`);
      }
      return at(here, people ? `must match the pattern ${String(params.pattern)}` : ajvSays);
    }
    case 'parse':
      // openapi-backend's keyword for a body (or JSON query parameter) that is not JSON.
      return at(here, `is not valid JSON (${error.message ?? 'parse error'})`);
    default:
      return at(here, ajvSays);
  }
}

function unknownKey(path: PathSegment[], style: MessageStyle): Described {
  return {
    pointer: toPointer(path),
    path,
    problem: unknownKeyProblem(path, style),
    code: 'validation.unknown',
  };
}

/** What is told of a key at `path` the schema does not allow, with the keys known beside it. */
export function unknownKeyProblem(path: readonly PathSegment[], style: MessageStyle): string {
  const known = style.knownKeysAt?.get(toPointer(path));
  return `${style.unknownKey ?? 'is not allowed'}${known ? ` (known: ${known.join(', ')})` : ''}`;
}

/**
 * `string`, or `a string` for people; Ajv's list of types (`string,number,null`) as a list
 * (`string, number or null`).
 */
function typeName(type: string, style: MessageStyle): string {
  const people = style.wording === 'people';
  const named = type
    .split(',')
    .map((one) =>
      !people || one === 'null' ? one : /^[aeiou]/.test(one) ? `an ${one}` : `a ${one}`,
    );
  const last = named.pop() ?? type;
  return named.length > 0 ? `${named.join(', ')} or ${last}` : last;
}

function toJson(value: unknown): string {
  return JSON.stringify(value);
}
