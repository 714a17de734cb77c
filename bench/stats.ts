/** Summaries of repeated measurements: medians with their spread, percentiles of samples. */

/** A value measured over rounds: the median and the range it came from. */
export interface Summary {
  median: number;
  min: number;
  max: number;
  /** Every round's value, in order. */
  rounds: number[];
}

/** The `p`-th percentile (0–100) by nearest rank; NaN for no samples. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

/** Median and range of the rounds. */
export function summarize(rounds: number[]): Summary {
  return {
    median: percentile(rounds, 50),
    min: Math.min(...rounds),
    max: Math.max(...rounds),
    rounds,
  };
}

/**
 * Ours ÷ baseline per round (each pair ran back to back, so slow drift of a shared machine
 * cancels out), summarized over the rounds.
 */
export function ratioSummary(ours: number[], baseline: number[]): Summary {
  return summarize(ours.map((value, index) => value / baseline[index]!));
}

/** Rounds a number for the results file and the table. */
export function round(value: number, digits = 2): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

/** `median (min–max)` for the table. */
export function describeSummary(summary: Summary, digits = 2): string {
  return `${round(summary.median, digits)} (${round(summary.min, digits)}–${round(summary.max, digits)})`;
}
