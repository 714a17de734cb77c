/**
 * Two definitions compared as people read them: each written as pretty JSON with its keys in
 * sorted order (so that key order and whitespace never count as a change), then a unified diff of
 * the lines. Pure, for the API's apply and for any page that shows a revision's change.
 */

/** The value with the keys of every object in sorted order. */
function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, sortedKeys((value as Record<string, unknown>)[key])]),
  );
}

/** A definition (or any JSON value) as pretty JSON with sorted keys and a final newline. */
export function canonicalDefinitionText(definition: unknown): string {
  return `${JSON.stringify(sortedKeys(definition), null, 2)}\n`;
}

type Edit = { kind: ' ' | '-' | '+'; line: string };

/** The edits from `before` to `after` along a longest common subsequence of their lines. */
function lineEdits(before: readonly string[], after: readonly string[]): Edit[] {
  const rows = before.length + 1;
  const columns = after.length + 1;
  // common[i * columns + j]: the longest common subsequence of before[i..] and after[j..].
  const common = new Uint32Array(rows * columns);
  for (let i = before.length - 1; i >= 0; i--) {
    for (let j = after.length - 1; j >= 0; j--) {
      common[i * columns + j] =
        before[i] === after[j]
          ? common[(i + 1) * columns + j + 1]! + 1
          : Math.max(common[(i + 1) * columns + j]!, common[i * columns + j + 1]!);
    }
  }
  const edits: Edit[] = [];
  let i = 0;
  let j = 0;
  while (i < before.length || j < after.length) {
    if (i < before.length && j < after.length && before[i] === after[j]) {
      edits.push({ kind: ' ', line: before[i++]! });
      j++;
    } else if (
      i < before.length &&
      (j === after.length || common[(i + 1) * columns + j]! >= common[i * columns + j + 1]!)
    ) {
      edits.push({ kind: '-', line: before[i++]! });
    } else {
      edits.push({ kind: '+', line: after[j++]! });
    }
  }
  return edits;
}

const linesOf = (text: string | null) =>
  text === null || text === '' ? [] : text.replace(/\n$/, '').split('\n');

const CONTEXT = 3;

/**
 * The unified diff (`diff -u`, three lines of context) from `before` to `after`, each labelled
 * (`a/Hello.json`); a missing side is `null` and labelled `/dev/null`. Empty when they are equal.
 */
export function unifiedDiff(
  before: { label: string; text: string | null },
  after: { label: string; text: string | null },
): string {
  const edits = lineEdits(linesOf(before.text), linesOf(after.text));
  if (edits.every((edit) => edit.kind === ' ')) return '';
  const header = [
    `--- ${before.text === null ? '/dev/null' : before.label}`,
    `+++ ${after.text === null ? '/dev/null' : after.label}`,
  ];
  const hunks: string[] = [];
  let index = 0;
  while (index < edits.length) {
    const firstChange = edits.findIndex((edit, at) => at >= index && edit.kind !== ' ');
    if (firstChange === -1) break;
    const start = Math.max(index, firstChange - CONTEXT);
    let end = firstChange;
    // A hunk runs on while the next change is within twice the context of the last one.
    for (let at = firstChange; at < edits.length && at <= end + 2 * CONTEXT; at++) {
      if (edits[at]!.kind !== ' ') end = at;
    }
    const stop = Math.min(edits.length, end + CONTEXT + 1);
    const slice = edits.slice(start, stop);
    const beforeStart = edits.slice(0, start).filter((edit) => edit.kind !== '+').length;
    const afterStart = edits.slice(0, start).filter((edit) => edit.kind !== '-').length;
    const beforeCount = slice.filter((edit) => edit.kind !== '+').length;
    const afterCount = slice.filter((edit) => edit.kind !== '-').length;
    hunks.push(
      `@@ -${range(beforeStart, beforeCount)} +${range(afterStart, afterCount)} @@`,
      ...slice.map((edit) => `${edit.kind}${edit.line}`),
    );
    index = stop;
  }
  return `${[...header, ...hunks].join('\n')}\n`;
}

/** A hunk's range as `diff -u` writes it: an empty range names the line before it. */
function range(start: number, count: number): string {
  const first = count === 0 ? start : start + 1;
  return count === 1 ? `${first}` : `${first},${count}`;
}
