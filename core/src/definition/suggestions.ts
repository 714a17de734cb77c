/**
 * "Did you mean": the known names closest to a name that matches none, by Damerau-Levenshtein
 * distance (the optimal string alignment variant: a swap of two neighbouring characters counts
 * one, as in `Flow/Lgo` for `Flow/Log`), ignoring case. Pure: workflow code may call it.
 */

/** The most suggestions one unknown name gets. */
const MAX_SUGGESTIONS = 3;

/**
 * Edits (insert, delete, replace, swap neighbours) that turn `a` into `b`, or more than `limit`
 * as soon as that is certain.
 */
export function editDistance(a: string, b: string, limit = Infinity): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let beforePrevious: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(
        (previous[j] as number) + 1,
        (row[j - 1] as number) + 1,
        (previous[j - 1] as number) + cost,
      );
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        best = Math.min(best, (beforePrevious[j - 2] as number) + 1);
      }
      row.push(best);
      rowMin = Math.min(rowMin, best);
    }
    if (rowMin > limit) return limit + 1;
    beforePrevious = previous;
    previous = row;
  }
  return previous[b.length] as number;
}

/**
 * The known names `name` may have meant, closest first (ties in the order given): those within a
 * third of its length in edits (at least one) and fewer edits than it has characters, so that
 * `b` is not offered for `a`. Empty when none is close.
 */
export function suggestionsFor(name: string, known: Iterable<string>): string[] {
  const lower = name.toLowerCase();
  const limit = Math.max(1, Math.floor(name.length / 3));
  const near: Array<{ candidate: string; distance: number }> = [];
  for (const candidate of new Set(known)) {
    const distance = editDistance(lower, candidate.toLowerCase(), limit);
    if (distance <= limit && distance < name.length) near.push({ candidate, distance });
  }
  return near
    .sort((a, b) => a.distance - b.distance)
    .slice(0, MAX_SUGGESTIONS)
    .map(({ candidate }) => candidate);
}

/** The end of a message naming the closest suggestion: ` (did you mean 'Flow/Log'?)`, or ``. */
export function didYouMean(suggestions: readonly string[]): string {
  const [first] = suggestions;
  return first === undefined ? '' : ` (did you mean '${first}'?)`;
}
