/**
 * How validation messages name a place in a definition: `tasks[2].errorHandling.strategy`.
 * Both the JSON Schema errors (JSON pointers) and the DAG checks (paths) are written this way.
 */

export type PathSegment = string | number;

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/** `['tasks', 2, 'name']` → `tasks[2].name`; the empty path is the definition itself. */
export function formatPath(segments: readonly PathSegment[]): string {
  let text = '';
  for (const segment of segments) {
    if (typeof segment === 'number') text += `[${segment}]`;
    else if (IDENTIFIER.test(segment)) text += text === '' ? segment : `.${segment}`;
    else text += `[${JSON.stringify(segment)}]`;
  }
  return text === '' ? 'definition' : text;
}

/** The path of a JSON pointer such as Ajv's `instancePath` (`/tasks/2/name`). */
export function pointerSegments(pointer: string): PathSegment[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((raw) => {
      const segment = raw.replaceAll('~1', '/').replaceAll('~0', '~');
      return /^(0|[1-9]\d*)$/.test(segment) ? Number(segment) : segment;
    });
}

/** The JSON pointer of a path, as Ajv writes it. */
export function toPointer(segments: readonly PathSegment[]): string {
  return segments
    .map((segment) => `/${String(segment).replaceAll('~', '~0').replaceAll('/', '~1')}`)
    .join('');
}
