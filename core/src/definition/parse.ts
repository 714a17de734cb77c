/**
 * Reads a workflow definition from its JSON text: syntax, case-insensitive keys, the JSON Schema
 * emitted from `spec/definition/` (generated/workflow-definition.schema.json), then the graph and
 * expression checks of `dag.ts`. Every problem is its own message naming where it is.
 */
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import { parse as parseJsonc, printParseErrorCode, type ParseError } from 'jsonc-parser';
import definitionSchema from '../../../generated/workflow-definition.schema.json' with { type: 'json' };
import { canonicalizeKeys, type SchemaNode } from './canonical-keys.js';
import { checkGraph } from './dag.js';
import { formatPath, pointerSegments } from './location.js';
import type { WorkflowDefinition } from './types.js';

export type ParseResult =
  { ok: true; definition: WorkflowDefinition } | { ok: false; errors: string[] };

/** Enough to fix a definition without flooding a response with thousands of lines. */
const MAX_ERRORS = 50;

/** Parses and validates a definition's JSON text. */
export function parseDefinition(text: string): ParseResult {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return {
      ok: false,
      errors: [`definition is not valid JSON: ${describeSyntaxError(error, text)}`],
    };
  }
  return validateDefinition(value);
}

/** Validates a definition already parsed from JSON (keys in any case). */
export function validateDefinition(value: unknown): ParseResult {
  const schema = definitionSchema as SchemaNode;
  const canonical = canonicalizeKeys(value, schema);
  const validate = definitionValidator();
  const schemaErrors = validate(canonical.value)
    ? []
    : describeSchemaErrors(validate.errors ?? [], canonical.knownKeysAt);
  const errors = [...canonical.problems, ...schemaErrors];
  if (errors.length === 0) {
    const definition = canonical.value as WorkflowDefinition;
    errors.push(...checkGraph(definition));
    if (errors.length === 0) return { ok: true, definition };
  }
  return { ok: false, errors: limited(errors) };
}

function limited(errors: string[]): string[] {
  const unique = [...new Set(errors)];
  if (unique.length <= MAX_ERRORS) return unique;
  return [...unique.slice(0, MAX_ERRORS), `... and ${unique.length - MAX_ERRORS} more problems`];
}

let compiled: ValidateFunction | undefined;

/** Compiled once, on first use. */
function definitionValidator(): ValidateFunction {
  compiled ??= new Ajv2020({ allErrors: true, strict: true }).compile(definitionSchema);
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

/**
 * One message per problem. Union branches that do not apply are dropped: for `type` given as an
 * object, "must be string" from the configuration-name branch would only confuse.
 */
function describeSchemaErrors(
  errors: ErrorObject[],
  knownKeysAt: ReadonlyMap<string, string[]>,
): string[] {
  const messages: Array<{ pointer: string; text: string; wrongType?: string }> = [];
  for (const error of errors) {
    if (error.keyword === 'anyOf') {
      const inside = (pointer: string) =>
        pointer === error.instancePath || pointer.startsWith(`${error.instancePath}/`);
      const branches = messages.filter((m) => inside(m.pointer));
      const relevant = branches.filter((m) => !(m.wrongType && m.pointer === error.instancePath));
      const replacement =
        relevant.length > 0
          ? relevant
          : [
              {
                pointer: error.instancePath,
                text: at(error.instancePath, `must be ${orList(branches)}`),
              },
            ];
      const others = messages.filter((m) => !inside(m.pointer));
      messages.splice(0, messages.length, ...others, ...replacement);
      continue;
    }
    const described = describeSchemaError(error, knownKeysAt);
    messages.push({
      pointer: error.instancePath,
      text: described,
      ...(error.keyword === 'type' ? { wrongType: String(error.params.type) } : {}),
    });
  }
  return messages.map((m) => m.text);
}

function orList(branches: Array<{ wrongType?: string }>): string {
  const types = branches.flatMap((m) => (m.wrongType ? [withArticle(m.wrongType)] : []));
  return types.length > 0 ? types.join(' or ') : 'valid';
}

function describeSchemaError(
  error: ErrorObject,
  knownKeysAt: ReadonlyMap<string, string[]>,
): string {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return `${formatPath([...pointerSegments(error.instancePath), String(params.missingProperty)])}: is required`;
    case 'enum':
      return at(
        error.instancePath,
        `must be one of ${(params.allowedValues as unknown[]).join(', ')}`,
      );
    case 'type':
      return at(error.instancePath, `must be ${withArticle(String(params.type))}`);
    case 'minLength':
    case 'minItems':
      return at(
        error.instancePath,
        params.limit === 1
          ? 'must not be empty'
          : `must have at least ${String(params.limit)} ${error.keyword === 'minLength' ? 'characters' : 'items'}`,
      );
    case 'maxLength':
      return at(error.instancePath, `must be at most ${String(params.limit)} characters`);
    case 'minimum':
    case 'maximum':
      return at(error.instancePath, `must be ${String(params.comparison)} ${String(params.limit)}`);
    case 'pattern':
      return at(error.instancePath, `must match the pattern ${String(params.pattern)}`);
    case 'not':
      if (error.schemaPath.endsWith('unevaluatedProperties/not')) {
        const known = knownKeysAt.get(error.instancePath);
        return at(
          error.instancePath,
          `is not a known property${known ? ` (known: ${known.join(', ')})` : ''}`,
        );
      }
      return at(error.instancePath, error.message ?? 'is not valid');
    default:
      return at(error.instancePath, error.message ?? 'is not valid');
  }
}

function at(pointer: string, problem: string): string {
  return `${formatPath(pointerSegments(pointer))}: ${problem}`;
}

function withArticle(type: string): string {
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}
