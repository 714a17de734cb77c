/**
 * What the editor offers at the cursor of a definition being typed, from the served definition
 * schema: the keys an object takes (a task's, `type`'s, `manualApproval`'s...; inside
 * `parameters`, those of the task's plugin), installed plugin names as the value of
 * `type.plugin`, and the schema's description of the key under the pointer. The text may be
 * half-typed: it is read leniently.
 */
import { getLocation, parse, type Node } from 'jsonc-parser';
import { describeKey, installedPlugins, knownKeysAt, type KnownKey } from './definition-schema.js';

type Schema = Record<string, unknown>;

/** Candidates to replace the text from `from` to `to` with. */
export interface Completions {
  from: number;
  to: number;
  options: Array<{ label: string; apply: string; kind: 'property' | 'plugin'; info: string }>;
}

/** A description of the text from `from` to `to`. */
export interface Help {
  from: number;
  to: number;
  text: string;
}

/** The keys or plugin names that fit at `offset`; null where the schema offers nothing. */
export function completionsAt(schema: Schema, text: string, offset: number): Completions | null {
  const location = getLocation(text, offset);
  const path = location.path;
  const last = path.at(-1);
  const node = location.previousNode;
  // Inside a string (a key is a `property` node), what is typed between its quotes is replaced;
  // elsewhere, a quoted name goes in.
  const inString = (node?.type === 'string' || node?.type === 'property') && offset > node.offset;
  const span = inString && node ? innerSpan(text, node) : { from: offset, to: offset };
  const quoted = (name: string) => (inString ? name : JSON.stringify(name));
  const definition = leniently(text);

  if (location.isAtPropertyKey) {
    const keys = knownKeysAt(schema, path.slice(0, -1), definition);
    if (keys.length === 0) return null;
    return {
      ...span,
      options: keys.map((key: KnownKey) => ({
        label: key.name,
        apply: quoted(key.name),
        kind: 'property',
        info: key.description,
      })),
    };
  }
  const parent = path.at(-2);
  const isPlugin =
    typeof last === 'string' &&
    last.toLowerCase() === 'plugin' &&
    typeof parent === 'string' &&
    parent.toLowerCase() === 'type';
  if (!isPlugin || (node !== undefined && node.type !== 'string')) return null;
  const plugins = installedPlugins(schema);
  if (plugins.length === 0) return null;
  return {
    ...span,
    options: plugins.map((plugin) => ({
      label: plugin,
      apply: quoted(plugin),
      kind: 'plugin',
      info: 'An installed plugin.',
    })),
  };
}

/** The schema's description of the key under `offset` (or of the key whose value is there). */
export function helpAt(schema: Schema, text: string, offset: number): Help | null {
  const location = getLocation(text, offset);
  const key = location.path.at(-1);
  const node = location.previousNode;
  if (typeof key !== 'string' || node === undefined) return null;
  const description = describeKey(schema, location.path.slice(0, -1), key, leniently(text));
  if (description === null) return null;
  return { from: node.offset, to: node.offset + node.length, text: description };
}

/** The characters between a string node's quotes (its closing quote may not be typed yet). */
function innerSpan(text: string, node: Node): { from: number; to: number } {
  const end = node.offset + node.length;
  const closed = node.length > 1 && text[end - 1] === '"';
  return { from: node.offset + 1, to: closed ? end - 1 : end };
}

function leniently(text: string): unknown {
  return parse(text, [], { allowTrailingComma: true });
}
