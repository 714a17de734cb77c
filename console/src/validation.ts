/**
 * Checks a definition's text as the editor is typed in, before anything is sent: JSON syntax, the
 * served definition schema (`/schemas/workflow-definition.json`: with each task's parameters
 * typed by its plugin), and the graph rules a schema cannot state (unique task names, edges to
 * tasks that exist, no cycle: the server's own cycle check). Each problem says where it is, as a
 * path and a line.
 *
 * The schema is applied with @cfworker/json-schema, which interprets it rather than compiling it
 * to code: the console's Content-Security-Policy allows no `eval`. Keys are matched to the
 * schema's spelling first, case-insensitively, by the server's own `canonicalizeKeys`; places are
 * shown as the keys were written.
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
import { didYouMean, suggestionsFor } from '../../core/src/definition/suggestions.js';
import { DEFINITION_MESSAGES } from '../../core/src/definition/location.js';
import {
  canonicalizeKeys,
  writtenPath,
} from '../../core/src/definition/validation/canonical-keys.js';
import { unknownKeyProblem } from '../../core/src/definition/validation/describe.js';
import {
  formatPath,
  pointerSegments,
  type PathSegment,
} from '../../core/src/definition/validation/path.js';
import { field, readDefinition } from './definition.js';
import {
  installedPlugin,
  installedPlugins,
  knownKeysAt,
  pluginOfTask,
} from './definition-schema.js';

export interface Problem {
  /** Where, as people read it: `tasks[1].dependencies[0]`; empty for the whole definition. */
  path: string;
  message: string;
  /** 1-based line and column in the text; null when the place is not in the text. */
  line: number | null;
  column: number | null;
  /** The span of text it is about, as offsets: the key or value at its path. */
  from: number;
  to: number;
}

type Json = Record<string, unknown>;

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
          from: first?.offset ?? 0,
          to: (first?.offset ?? 0) + (first?.length ?? 0),
        },
      ];
    }
    const value: unknown = JSON.parse(text);
    if (!isObject(value)) {
      return [
        {
          path: '',
          message: 'A definition is a JSON object.',
          ...position(text, 0),
          from: 0,
          to: text.length,
        },
      ];
    }
    const canonical = canonicalizeKeys(value, schema);
    const located = ({ segments, message, about }: SchemaProblem): Problem => {
      const written = writtenPath(canonical.writtenAs, segments);
      return { path: formatPath(written), message, ...locate(text, tree, written, about) };
    };
    const style = { ...DEFINITION_MESSAGES, knownKeysAt: canonical.knownKeysAt };
    const unknownKeyMessage = (segments: PathSegment[]) =>
      unknownParameterProblem(schema, canonical.value, segments) ??
      unknownKeyProblem(segments, style);
    // A key given twice is about the key.
    return [
      ...canonical.problems.map(({ path, problem }): SchemaProblem => ({
        segments: [...path],
        message: problem,
        about: 'key',
      })),
      ...schemaProblems(validator.validate(canonical.value).errors, unknownKeyMessage),
      ...pluginProblems(schema, canonical.value as Json),
      ...graphProblems(canonical.value as Json),
    ].map(located);
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
  segments: PathSegment[];
  message: string;
  /** Underline the key at `segments` (a key not allowed) rather than its value; default value. */
  about?: 'key' | 'value';
}

function schemaProblems(
  errors: OutputUnit[],
  unknownKeyMessage: (segments: PathSegment[]) => string,
): SchemaProblem[] {
  const problems = new Map<string, SchemaProblem>();
  // A key the schema does not know: `unevaluatedProperties: { not: {} }` (the definition's own
  // objects) or `additionalProperties: false` (plugin parameters), which fails at the key.
  const unknownKey = (error: OutputUnit) =>
    (error.keyword === 'not' && error.keywordLocation.endsWith('Properties/not')) ||
    (error.keyword === 'false' &&
      typeof locationSegments(error.instanceLocation).at(-1) === 'string');
  const failedAt = errors
    .filter((error) => !wrappers.has(error.keyword) && !unknownKey(error))
    .map((error) => error.instanceLocation);
  for (const error of errors) {
    const segments = locationSegments(error.instanceLocation);
    let message: string | null;
    let about: 'key' | 'value' = 'value';
    if (unknownKey(error)) {
      // A known key whose value failed counts as unevaluated too; its own failure says more, so
      // it alone is said.
      const failed = failedAt.some(
        (location) =>
          location === error.instanceLocation || location.startsWith(`${error.instanceLocation}/`),
      );
      if (failed) continue;
      message = unknownKeyMessage(segments);
      about = 'key';
    } else if (wrappers.has(error.keyword)) {
      continue;
    } else {
      message = describeError(error);
    }
    problems.set(`${error.instanceLocation} ${message}`, { segments, message, about });
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

/** cfworker's locations are URI fragments: `#/tasks/0/na%20me`. */
const locationSegments = (location: string) =>
  pointerSegments(decodeURIComponent(location.replace(/^#/, '')));

/**
 * A task's parameter its plugin does not take, said with the plugin and the parameter it may have
 * meant: `unknown parameter 'milisecond' of Flow/Delay (did you mean 'milliseconds'?)`; null for
 * any other unknown key.
 */
function unknownParameterProblem(
  schema: Json,
  definition: unknown,
  segments: readonly PathSegment[],
): string | null {
  const [tasks, index, parameters, name] = segments;
  if (tasks !== 'tasks' || typeof index !== 'number' || parameters !== 'parameters') return null;
  if (segments.length !== 4 || typeof name !== 'string') return null;
  const plugin = pluginOfTask(definition, index);
  if (plugin === null) return null;
  const known = knownKeysAt(schema, ['tasks', index, 'parameters'], definition).map(
    (key) => key.name,
  );
  const type = installedPlugin(schema, plugin) ?? plugin;
  return `unknown parameter '${name}' of ${type}${didYouMean(suggestionsFor(name, known))}`;
}

/**
 * Tasks naming a plugin that is not installed, with the installed type it may have meant; none
 * when the schema lists no installed plugins (it was not served by a server).
 */
function pluginProblems(schema: Json, value: Json): SchemaProblem[] {
  const installed = installedPlugins(schema);
  if (installed.length === 0) return [];
  const tasks = field(value, 'tasks');
  if (!Array.isArray(tasks)) return [];
  return tasks.flatMap((_, index) => {
    const plugin = pluginOfTask(value, index);
    if (plugin === null || plugin === '' || installedPlugin(schema, plugin) !== null) return [];
    return [
      {
        segments: ['tasks', index, 'type', 'plugin'],
        message: `unknown plugin '${plugin}'${didYouMean(suggestionsFor(plugin, installed))}`,
      },
    ];
  });
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
  const noTask = (name: string) => {
    const [near] = suggestionsFor(name, seen.keys());
    return `names no task: "${name}"${near === undefined ? '' : ` (did you mean "${near}"?)`}`;
  };
  definition.tasks.forEach((task, index) => {
    const check = (list: string[], key: string) =>
      list.forEach((name, position) => {
        if (!seen.has(name)) {
          problems.push({
            segments: ['tasks', index, key, position],
            message: noTask(name),
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
        message: noTask(task.triggers),
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

/**
 * Where the deepest part of `segments` the text has is: the line and column of its key (where
 * people look) and the span to underline: the key when the problem is `about` it, else the value
 * unless it is an object or array (then its key, or its first character).
 */
function locate(
  text: string,
  tree: Node,
  segments: PathSegment[],
  about: 'key' | 'value' = 'value',
): { line: number; column: number; from: number; to: number } {
  const node = deepestNode(tree, segments);
  const key = node.parent?.type === 'property' ? node.parent.children?.[0] : undefined;
  const isValue = key !== undefined && key !== node;
  const start = isValue ? (node.parent?.offset ?? node.offset) : node.offset;
  const compound = node.type === 'object' || node.type === 'array';
  const span =
    isValue && (about === 'key' || compound)
      ? key
      : compound
        ? { offset: node.offset, length: 1 }
        : node;
  return { ...position(text, start), from: span.offset, to: span.offset + span.length };
}

/** The node at `segments`, or at the longest start of them the text has. */
function deepestNode(tree: Node, segments: readonly PathSegment[]): Node {
  for (let length = segments.length; length > 0; length -= 1) {
    const node = findNodeAtLocation(tree, segments.slice(0, length));
    if (node) return node;
  }
  return tree;
}

/**
 * A problem the server found, placed in the text by its path (`tasks[0].type`, or under the
 * request's `body.definition`), as far as the text has it; unplaced without a path.
 */
export function placedProblem(text: string, path: string | undefined, message: string): Problem {
  const tree = parseTree(text);
  const segments = path === undefined ? null : pathSegments(path);
  if (tree === undefined || segments === null) {
    return { path: '', message, line: null, column: null, from: 0, to: 0 };
  }
  return { path: formatPath(segments), message, ...locate(text, tree, segments) };
}

/** `body.definition.tasks[0]["a.b"]` → `['tasks', 0, 'a.b']`; null when it is no such path. */
function pathSegments(path: string): PathSegment[] | null {
  const segments: PathSegment[] = [];
  const part = /\.?([A-Za-z_$][\w$]*)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]/y;
  while (part.lastIndex < path.length) {
    const match = part.exec(path);
    if (match === null) return null;
    const [, name, index, quoted] = match;
    segments.push(
      name ?? (index !== undefined ? Number(index) : (JSON.parse(quoted ?? '""') as string)),
    );
  }
  const [first, second] = segments;
  if (first === 'body' && second === 'definition') return segments.slice(2);
  return first === 'definition' ? segments.slice(1) : segments;
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
