/**
 * A dry run's plan as it ran, read from what its tasks recorded: each task's resolved parameters
 * and where its output came from (the worker writes one `Dry run: …` log line for each), the
 * approvals it would have asked, the branches skipped. The log lines are the worker's words
 * (workflows-worker/src/activities/dry-run.ts); a line the console does not know is left out.
 */
import type { LogEntry, TaskStatus } from './run-state.js';

/** Where a task's output came from in a dry run. */
export type OutputSource =
  | { kind: 'mock' }
  | { kind: 'recorded'; executionId: string }
  | { kind: 'generated' }
  /** Its plugin is pure: it ran for real. */
  | { kind: 'ran' };

export interface PlannedTask {
  name: string;
  status: TaskStatus | null;
  /** The task's message: for a skipped one, why (its condition, the branch not taken). */
  message: string;
  /** Its plugin, when the task performed nothing (from the output's log line). */
  plugin: string | null;
  /** The plugin's declared effects (`calls`, `writes, reads`, …) when it was not run. */
  effects: string | null;
  /** One per source its outputs came from (a `foreach` task's items may differ). */
  sources: OutputSource[];
  /** Its parameters, expressions resolved, as the task got them (the first item's for a foreach). */
  parameters: Record<string, unknown> | null;
  /** The approval it would have asked, with its comment. */
  approval: { id: string; comment: string } | null;
}

const parametersLine = /^Dry run: parameters resolved to (.*)\.$/s;
const notRun = /; (\S+) \(effects: ([^)]*)\) was not run\.$/;
const mockLine = /^Dry run: output from the request's mock;/;
const recordedLine = /^Dry run: output recorded by execution (\S+) \(/;
const generatedLine = /^Dry run: output generated from the output schema of /;
const approvalLine =
  /^Dry run: approval (\S+) would be asked(?: \((.*)\))?; it is approved at once/s;

interface TaskFacts {
  status: TaskStatus;
  message: string;
  taskExecutionId: string;
}

/**
 * The plan of a dry run: its tasks in the definition's order (`names`), each with what its log
 * says it did.
 */
export function dryRunPlan(
  names: string[],
  tasks: Record<string, TaskFacts | undefined>,
  logs: LogEntry[],
): PlannedTask[] {
  const byTask = new Map<string, string[]>();
  for (const entry of logs) {
    if (!entry.taskExecutionId || !entry.message.startsWith('Dry run: ')) continue;
    byTask.set(entry.taskExecutionId, [
      ...(byTask.get(entry.taskExecutionId) ?? []),
      entry.message,
    ]);
  }
  return names.map((name) => {
    const task = tasks[name];
    const planned: PlannedTask = {
      name,
      status: task?.status ?? null,
      message: task?.message ?? '',
      plugin: null,
      effects: null,
      sources: [],
      parameters: null,
      approval: null,
    };
    const lines = task ? (byTask.get(task.taskExecutionId) ?? []) : [];
    for (const line of lines) {
      const parameters = parametersLine.exec(line);
      if (parameters) {
        planned.parameters ??= parsedObject(parameters[1] ?? '');
        continue;
      }
      const approval = approvalLine.exec(line);
      if (approval) {
        planned.approval = { id: approval[1] ?? '', comment: approval[2] ?? '' };
        continue;
      }
      const source = sourceOf(line);
      if (!source) continue;
      const plugin = notRun.exec(line);
      planned.plugin = plugin?.[1] ?? null;
      planned.effects = plugin?.[2] ?? null;
      if (!planned.sources.some((known) => sameSource(known, source))) planned.sources.push(source);
    }
    // Parameters resolved and no output line: the plugin is pure, and ran for real.
    if (
      planned.parameters !== null &&
      planned.sources.length === 0 &&
      task?.status === 'Completed'
    ) {
      planned.sources.push({ kind: 'ran' });
    }
    return planned;
  });
}

function sourceOf(line: string): OutputSource | null {
  if (mockLine.test(line)) return { kind: 'mock' };
  const recorded = recordedLine.exec(line);
  if (recorded) return { kind: 'recorded', executionId: recorded[1] ?? '' };
  if (generatedLine.test(line)) return { kind: 'generated' };
  return null;
}

const sameSource = (a: OutputSource, b: OutputSource) =>
  a.kind === b.kind &&
  (a.kind !== 'recorded' || (b.kind === 'recorded' && a.executionId === b.executionId));

function parsedObject(text: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}
