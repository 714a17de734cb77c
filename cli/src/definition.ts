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
