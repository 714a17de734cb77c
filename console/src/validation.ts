/**
 * Checks a definition's text as the editor is typed in, before anything is sent: JSON syntax, the
 * served definition schema (`/schemas/workflow-definition.json`: with each task's parameters
 * typed by its plugin), and the graph rules a schema cannot state (unique task names, edges to
 * tasks that exist, no cycle: the server's own cycle check). Each problem says where it is, as a
 * path and a line.
 *
 * The schema is applied with @cfworker/json-schema, which interprets it rather than compiling it
 * to code: the console's Content-Security-Policy allows no `eval`. Keys are matched to the
 * schema's spelling first, case-insensitively, as the server reads them.
 */
import { Validator, type OutputUnit } from '@cfworker/json-schema';
import {
  findNodeAtLocation,
  parseTree,
  printParseErrorCode,
  type Node,
  type ParseError,
} from 'jsonc-parser';
import { findCycles } from '../../core/src/definition/dag.js';
import { readDefinition } from './definition.js';

export interface Problem {
  /** Where, as people read it: `tasks[1].dependencies[0]`; empty for the whole definition. */
  path: string;
  message: string;
  /** 1-based line and column in the text; null when the place is not in the text. */
  line: number | null;
  column: number | null;
}

type Json = Record<string, unknown>;
type Segment = string | number;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A checker of definition texts against `schema` (the served definition schema). */
export function definitionChecker(schema: Json): (text: string) => Problem[] {
  const validator = new Validator(schema, '2020-12', false);
  return (text) => {
    const syntax: ParseError[] = [];
    const tree = parseTree(text, syntax, { disallowComments: true, allowTrailingComma: false });
    if (syntax.length > 0 || tree === undefined) {
      const first = syntax[0];
      return [
        {
          path: '',
          message: first
            ? `Not valid JSON: ${describeSyntax(printParseErrorCode(first.error))}.`
            : 'Not valid JSON: the text is empty.',
          ...position(text, first?.offset ?? 0),
        },
      ];
    }
    const value: unknown = JSON.parse(text);
    if (!isObject(value)) {
      return [{ path: '', message: 'A definition is a JSON object.', ...position(text, 0) }];
    }
    const canonical = canonicalize(value, schema, schema) as Json;
    const located = (segments: Segment[], message: string): Problem => {
      const original = originalSegments(canonical, segments);
      return { path: describePath(original), message, ...locate(text, tree, original) };
    };
    const problems = schemaProblems(validator.validate(canonical).errors).map(
      ({ segments, message }) => located(segments, message),
    );
    for (const { segments, message } of graphProblems(canonical))
      problems.push(located(segments, message));
    return problems;
  };
}

/** Keywords whose failure only says that something beneath them failed. */
const wrappers = new Set([
  '$ref',
  'allOf',
  'anyOf',
  'oneOf',
  'if',
  'then',
  'else',
  'properties',
  'patternProperties',
  'additionalProperties',
  'unevaluatedProperties',
  'items',
  'prefixItems',
  'unevaluatedItems',
  'contains',
  'dependentSchemas',
  'propertyNames',
]);

interface SchemaProblem {
  segments: Segment[];
  message: string;
}

function schemaProblems(errors: OutputUnit[]): SchemaProblem[] {
  const problems = new Map<string, SchemaProblem>();
  const unknownKey = (error: OutputUnit) =>
    error.keyword === 'not' && error.keywordLocation.endsWith('Properties/not');
  const failedAt = errors
    .filter((error) => !wrappers.has(error.keyword) && !unknownKey(error))
    .map((error) => error.instanceLocation);
  for (const error of errors) {
    const segments = pointerSegments(error.instanceLocation);
    let message: string | null;
    if (unknownKey(error)) {
      // `unevaluatedProperties: { not: {} }`: a key the schema does not know. A known key whose
      // value failed counts as unevaluated too; its own failure says more, so it alone is said.
      const failed = failedAt.some(
        (location) =>
          location === error.instanceLocation || location.startsWith(`${error.instanceLocation}/`),
      );
      if (failed) continue;
      message = 'is not a known property';
    } else if (wrappers.has(error.keyword)) {
      continue;
    } else {
      message = describeError(error);
    }
    problems.set(`${error.instanceLocation} ${message}`, { segments, message });
  }
  return [...problems.values()];
}

/** cfworker's messages, in the words the server uses for the same problems. */
function describeError(error: OutputUnit): string {
  const quoted = /"([^"]*)"/g;
  const values = [...error.error.matchAll(quoted)].map((match) => match[1]);
  switch (error.keyword) {
    case 'required':
      return `needs "${values[0] ?? '?'}"`;
    case 'type':
      return `must be ${article(values[1] ?? '?')}, not ${article(values[0] ?? '?')}`;
    case 'enum':
    case 'const':
      return 'is not one of the allowed values';
    case 'minLength':
      return 'must not be empty';
    default:
      return error.error.replace(/^Instance /, '').replace(/\.$/, '');
  }
}

const article = (type: string) => (/^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`);

function pointerSegments(location: string): Segment[] {
  const pointer = location.replace(/^#/, '');
  if (pointer === '' || pointer === '/') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((part) => decodeURIComponent(part).replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((part) => (/^(0|[1-9]\d*)$/.test(part) ? Number(part) : part));
}

/** The graph rules: names unique, dependencies and handlers that exist, no cycle. */
function graphProblems(value: Json): SchemaProblem[] {
  const definition = readDefinition(value);
  const problems: SchemaProblem[] = [];
  const seen = new Map<string, number>();
  definition.tasks.forEach((task, index) => {
    if (task.name === '') return;
    const first = seen.get(task.name);
    if (first !== undefined) {
      problems.push({
        segments: ['tasks', index, 'name'],
        message: `repeats the name "${task.name}" of tasks[${first}]`,
      });
    } else seen.set(task.name, index);
  });
  definition.tasks.forEach((task, index) => {
    const check = (list: string[], key: string) =>
      list.forEach((name, position) => {
        if (!seen.has(name)) {
          problems.push({
            segments: ['tasks', index, key, position],
            message: `names no task: "${name}"`,
          });
        } else if (name === task.name) {
          problems.push({
            segments: ['tasks', index, key, position],
            message: 'names the task itself',
          });
        }
      });
    check(task.dependencies, 'dependencies');
    check(task.runOnFailureOf, 'runOnFailureOf');
    if (task.triggers !== null && !seen.has(task.triggers)) {
      problems.push({
        segments: ['tasks', index, 'errorHandling', 'triggerTask'],
        message: `names no task: "${task.triggers}"`,
      });
    }
  });
  const [cycle] = findCycles(definition);
  if (cycle) {
    problems.push({
      segments: [
        'tasks',
        definition.tasks.findIndex((task) => task.name === cycle[0]),
        'dependencies',
      ],
      message: `is part of a cycle: ${[...cycle, cycle[0]].join(' → ')}`,
    });
  }
  return problems;
}

/** The keys each canonical object had in the text, by their canonical spelling. */
const spelledAs = new WeakMap<object, Map<string, string>>();

/** `value` with its keys spelled as `schema` spells them (matched case-insensitively). */
function canonicalize(value: unknown, schema: unknown, root: Json): unknown {
  const resolved = resolve(schema, root);
  if (Array.isArray(value)) {
    const items = isObject(resolved) ? resolved.items : undefined;
    return value.map((item) => canonicalize(item, items, root));
  }
  if (!isObject(value)) return value;
  const known = knownProperties(resolved, root);
  const rest = isObject(resolved)
    ? (resolved.unevaluatedProperties ?? resolved.additionalProperties)
    : undefined;
  const out: Json = {};
  const spelling = new Map<string, string>();
  for (const [key, child] of Object.entries(value)) {
    const canonicalKey = known.get(key.toLowerCase())?.name ?? key;
    // A key given twice in different cases stays as written: the schema reports it.
    const name = Object.hasOwn(out, canonicalKey) ? key : canonicalKey;
    spelling.set(name, key);
    out[name] = canonicalize(child, known.get(key.toLowerCase())?.schema ?? rest, root);
  }
  spelledAs.set(out, spelling);
  return out;
}

function knownProperties(
  schema: unknown,
  root: Json,
): Map<string, { name: string; schema: unknown }> {
  const known = new Map<string, { name: string; schema: unknown }>();
  const collect = (candidate: unknown) => {
    const resolved = resolve(candidate, root);
    if (!isObject(resolved)) return;
    if (isObject(resolved.properties)) {
      for (const [name, child] of Object.entries(resolved.properties)) {
        if (!known.has(name.toLowerCase())) known.set(name.toLowerCase(), { name, schema: child });
      }
    }
    for (const branch of ['anyOf', 'oneOf'] as const) {
      const list = resolved[branch];
      if (Array.isArray(list)) list.forEach(collect);
    }
  };
  collect(schema);
  return known;
}

function resolve(schema: unknown, root: Json): unknown {
  let current = schema;
  for (
    let hops = 0;
    hops < 32 && isObject(current) && typeof current.$ref === 'string';
    hops += 1
  ) {
    const ref = current.$ref;
    if (!ref.startsWith('#/')) return current;
    current = ref
      .slice(2)
      .split('/')
      .reduce<unknown>(
        (node, part) =>
          isObject(node) ? node[part.replace(/~1/g, '/').replace(/~0/g, '~')] : undefined,
        root,
      );
  }
  return current;
}

/** The path to a place in the canonical value as the keys were written in the text. */
function originalSegments(canonical: unknown, segments: Segment[]): Segment[] {
  const original: Segment[] = [];
  let node: unknown = canonical;
  for (const segment of segments) {
    if (typeof segment === 'number' || !isObject(node)) {
      original.push(segment);
      node = Array.isArray(node) && typeof segment === 'number' ? node[segment] : undefined;
      continue;
    }
    original.push(spelledAs.get(node)?.get(segment) ?? segment);
    node = node[segment];
  }
  return original;
}

/** `tasks[1].manualApproval.enabled` */
export function describePath(segments: readonly Segment[]): string {
  return segments
    .map((segment, index) =>
      typeof segment === 'number'
        ? `[${segment}]`
        : /^[A-Za-z_$][\w$]*$/.test(segment)
          ? `${index === 0 ? '' : '.'}${segment}`
          : `[${JSON.stringify(segment)}]`,
    )
    .join('');
}

/** The line and column of the deepest part of `segments` the text has. */
function locate(text: string, tree: Node, segments: Segment[]): { line: number; column: number } {
  for (let length = segments.length; length >= 0; length -= 1) {
    const node = findNodeAtLocation(tree, segments.slice(0, length));
    if (node) {
      // A property's value: point at its key, where people look.
      const at =
        node.parent?.type === 'property' && node.parent.children?.[1] === node
          ? node.parent.offset
          : node.offset;
      return position(text, at);
    }
  }
  return position(text, 0);
}

function position(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  return { line, column: offset - before.lastIndexOf('\n') };
}

function describeSyntax(code: string): string {
  // `CloseBraceExpected` → `close brace expected`
  return code.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();
}
