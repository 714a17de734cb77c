/** The name and task names of a definition's JSON text (keys read case-insensitively, as the server does). */
export function definitionOutline(text: string): { name?: string; taskNames: string[] } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { taskNames: [] };
  }
  const name = field(parsed, 'name');
  const tasks = field(parsed, 'tasks');
  const taskNames = Array.isArray(tasks)
    ? tasks.map((task) => field(task, 'name')).filter((n): n is string => typeof n === 'string')
    : [];
  return { ...(typeof name === 'string' ? { name } : {}), taskNames };
}

/** One input a definition declares (`inputs`), as the contract's `Definition.InputDeclaration`. */
export interface InputDeclaration {
  type: 'string' | 'number' | 'integer' | 'boolean' | 'object' | 'array';
  required?: boolean;
  default?: unknown;
  description?: string;
}

/** What a definition's JSON text declares about its runs: inputs and outputs (keys read case-insensitively). */
export function definitionInterface(text: string): {
  description?: string;
  inputs: Record<string, InputDeclaration>;
  outputs: Record<string, string>;
} {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { inputs: {}, outputs: {} };
  }
  const description = field(parsed, 'description');
  const inputs: Record<string, InputDeclaration> = {};
  for (const [name, declared] of Object.entries(objectOrEmpty(field(parsed, 'inputs')))) {
    const declaration = Object.fromEntries(
      ['type', 'required', 'default', 'description']
        .map((key) => [key, field(declared, key)])
        .filter(([, value]) => value !== undefined),
    ) as unknown as InputDeclaration;
    inputs[name] = declaration;
  }
  const outputs = Object.fromEntries(
    Object.entries(objectOrEmpty(field(parsed, 'outputs'))).filter(
      (entry): entry is [string, string] => typeof entry[1] === 'string',
    ),
  );
  return { ...(typeof description === 'string' ? { description } : {}), inputs, outputs };
}

function objectOrEmpty(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

function field(value: unknown, key: string): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const match = Object.keys(value).find((candidate) => candidate.toLowerCase() === key);
  return match === undefined ? undefined : (value as Record<string, unknown>)[match];
}

/** A stored definition for people: indented, unless it already is (then exactly as stored). */
export function readableDefinition(text: string): string {
  if (text.includes('\n')) return text.trimEnd();
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}
