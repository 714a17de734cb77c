import type { PathSegment } from './location.js';

/** Visits every string inside a JSON value, with its path. */
export function forEachString(
  value: unknown,
  path: PathSegment[],
  visit: (path: PathSegment[], text: string) => void,
): void {
  if (typeof value === 'string') visit(path, value);
  else if (Array.isArray(value))
    value.forEach((item, i) => forEachString(item, [...path, i], visit));
  else if (typeof value === 'object' && value !== null) {
    for (const [key, item] of Object.entries(value)) forEachString(item, [...path, key], visit);
  }
}
