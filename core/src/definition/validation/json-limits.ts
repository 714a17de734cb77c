/**
 * Bounds on a parsed JSON value that must hold before any recursive code walks it: how deeply it
 * nests (JSON.parse takes any depth, while JSON.stringify, validators and the expression
 * resolver recurse and would exhaust the call stack), and that every key and string can be
 * stored (see db/storable-text.ts) and is not too long. The walk itself is iterative, so any
 * value can be checked. Pure (no Node): definition code shares it.
 */
import { unstorableCharacter } from '../storable-text.js';
import type { ValidationProblem } from './describe.js';
import type { PathSegment } from './path.js';

export interface JsonLimits {
  /** Most objects and arrays around any value, the outermost one counted. */
  maxDepth: number;
  /** The setting that sets `maxDepth`, named in the message. */
  depthSetting: string;
  /** Longest key or string, in UTF-16 code units; unbounded when absent. */
  maxStringLength?: number;
  /** The setting that sets `maxStringLength`. */
  stringLengthSetting?: string;
  /** Stop after this many problems (a value can hold millions); default 50. */
  maxProblems?: number;
}

/** A place in the value, as a chain to its parent: no path array is built unless reported. */
interface Place {
  parent: Place | null;
  segment: PathSegment;
}

function pathOf(place: Place | null, root: readonly PathSegment[]): PathSegment[] {
  const segments: PathSegment[] = [];
  for (let at = place; at !== null; at = at.parent) segments.push(at.segment);
  return [...root, ...segments.reverse()];
}

/**
 * Every problem of `value` against `limits`, each with its path (under `root`): a place nested
 * deeper than `maxDepth` (reported once per branch, and not looked into), a key or string
 * PostgreSQL cannot store, a key or string longer than `maxStringLength`.
 */
export function jsonLimitProblems(
  value: unknown,
  limits: JsonLimits,
  root: readonly PathSegment[] = [],
): ValidationProblem[] {
  const problems: ValidationProblem[] = [];
  const maxProblems = limits.maxProblems ?? 50;
  const report = (place: Place | null, problem: string) =>
    problems.push({ path: pathOf(place, root), problem });
  const checkText = (place: Place | null, text: string, what: string) => {
    const unstorable = unstorableCharacter(text);
    if (unstorable !== null) report(place, `${what}${unstorable}`);
    else if (limits.maxStringLength !== undefined && text.length > limits.maxStringLength) {
      report(
        place,
        `${what}is ${text.length} characters long, over the limit of ${limits.maxStringLength} (${limits.stringLengthSetting})`,
      );
    }
  };

  const stack: Array<{ value: unknown; place: Place | null; depth: number }> = [
    { value, place: null, depth: 0 },
  ];
  while (stack.length > 0 && problems.length < maxProblems) {
    const { value: current, place, depth } = stack.pop()!;
    if (typeof current === 'string') {
      checkText(place, current, '');
      continue;
    }
    if (typeof current !== 'object' || current === null) continue;
    if (depth + 1 > limits.maxDepth) {
      report(place, `nests deeper than ${limits.maxDepth} levels (${limits.depthSetting})`);
      continue;
    }
    const children: Array<{ value: unknown; place: Place | null; depth: number }> = [];
    if (Array.isArray(current)) {
      current.forEach((item: unknown, index) =>
        children.push({ value: item, place: { parent: place, segment: index }, depth: depth + 1 }),
      );
    } else {
      for (const [key, item] of Object.entries(current)) {
        const child = { parent: place, segment: key };
        checkText(child, key, 'the key ');
        children.push({ value: item, place: child, depth: depth + 1 });
      }
    }
    // Reversed, so that problems come in document order.
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
  }
  return problems.slice(0, maxProblems);
}
