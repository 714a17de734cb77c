/**
 * What the Temporal UI shows of Trellis runs and schedules, in Trellis's words: the summary (one
 * line, Temporal markdown) and details of a run or of a schedule's action, set when they start.
 * Kept short: the UI lists summaries in its tables.
 */

/** The Trellis ids of a run, as its details show them. */
export interface RunIds {
  workflowId: string;
  workflowName: string;
  /** The name of the project the workflow belongs to. */
  project?: string;
  executionId?: string;
  triggerId?: string | null;
  rerunOf?: string | null;
}

/** One line: which Trellis workflow runs (and, for a schedule, which trigger fires it). */
export function runSummary(workflowName: string, triggerId?: string | null): string {
  return `Trellis workflow **${oneLine(workflowName)}**${triggerId ? ` (trigger ${triggerId})` : ''}`;
}

/** The ids an operator needs to find the run in Trellis (the API, the console, the CLI). */
export function runDetails(ids: RunIds): string {
  const lines = [
    `Trellis workflow: ${oneLine(ids.workflowName)}`,
    `Workflow id: ${ids.workflowId}`,
    ids.project ? `Project: ${ids.project}` : null,
    ids.executionId ? `Execution id: ${ids.executionId}` : null,
    ids.triggerId ? `Trigger id: ${ids.triggerId}` : null,
    ids.rerunOf ? `Rerun of execution: ${ids.rerunOf}` : null,
  ];
  return lines.filter((line) => line !== null).join('\n');
}

/** A workflow name on one line, markdown's emphasis characters taken literally. */
function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').replace(/([*_`\\])/g, '\\$1');
}
