/**
 * How messages name a place in a value: `tasks[2].errorHandling.strategy`, `Server.Port`,
 * `body.items[0]["content-type"]`. Pure (no Node, no Ajv): definition code shares it.
 */

export type PathSegment = string | number;

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/**
 * `['tasks', 2, 'name']` → `tasks[2].name`; a key that is not an identifier is quoted
 * (`headers["x-id"]`) so that `a.b` always means two keys. The empty path gives `''`.
 */
export function formatPath(segments: readonly PathSegment[]): string {
  let text = '';
  for (const segment of segments) {
    if (typeof segment === 'number') text += `[${segment}]`;
    else if (IDENTIFIER.test(segment)) text += text === '' ? segment : `.${segment}`;
    else text += `[${JSON.stringify(segment)}]`;
  }
  return text;
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
