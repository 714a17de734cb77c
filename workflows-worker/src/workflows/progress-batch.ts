/**
 * The run's bookkeeping between two writes: the tasks it skipped, failed or canceled, the
 * approvals to ask for, the decisions to settle, the execution's status and the log entries
 * saying why, written in one local activity (`recordProgress`) when the run next waits.
 */
import type { EngineLog, ProgressInput, ProgressResult } from '../activities/index.js';
import { executionStartedLogKey } from '#protocol/messages.js';
import { bookkeeping } from './bookkeeping.js';

type Progress = Omit<ProgressInput, 'executionId'>;
type DecisionClaim = NonNullable<Progress['decisions']>[number];

export class ProgressBatch {
  private pending: Progress = { tasks: [], approvals: [], logs: [] };
  private logCount = 0;
  /** Approvals asked for in the write under way (their ids are not known yet). */
  approvalsInWrite = 0;

  /** `run`: the run's id when an operator reset it from Temporal. */
  constructor(
    private readonly executionId: string,
    private readonly run: string | undefined,
  ) {}

  task(transition: Progress['tasks'][number]): void {
    this.pending.tasks.push(transition);
  }

  approval(request: Progress['approvals'][number]): void {
    this.pending.approvals.push(request);
  }

  decision(claim: DecisionClaim): void {
    (this.pending.decisions ??= []).push(claim);
  }

  /** Takes the decisions not yet written back out of the batch. */
  dropDecisions(): DecisionClaim[] {
    const decisions = this.pending.decisions ?? [];
    delete this.pending.decisions;
    return decisions;
  }

  execution(status: NonNullable<Progress['execution']>): void {
    this.pending.execution = status;
  }

  /** The entry that opens the execution's log (a run the API prepared), first in this write. */
  opening(message: string): void {
    if (this.pending.logs[0]?.key === executionStartedLogKey) return;
    this.pending.logs.unshift({
      taskExecutionId: null,
      level: 'Info',
      message,
      key: executionStartedLogKey,
    });
  }

  /** Nothing gathered since the last write. */
  get empty(): boolean {
    const batch = this.pending;
    return (
      batch.tasks.length === 0 &&
      batch.approvals.length === 0 &&
      (batch.decisions ?? []).length === 0 &&
      batch.logs.length === 0 &&
      batch.execution === undefined
    );
  }

  log(taskExecutionId: string | null, level: EngineLog['level'], message: string): void {
    // A reset run's entries are its own: the run before it wrote entries under the same numbers.
    const { run } = this;
    const key =
      run === undefined ? `engine:${this.logCount++}` : `engine:${run}:${this.logCount++}`;
    this.pending.logs.push({ taskExecutionId, level, message, key });
  }

  /**
   * The key of the run's end entry when its last attempt records it (`endsRun`): one per run,
   * apart from the numbered entries, so that no later entry's key depends on it.
   */
  endKey(): string {
    const { run } = this;
    return run === undefined ? 'engine:end' : `engine:${run}:end`;
  }

  /** Writes what was gathered since the last write: what the database answered, or null. */
  async write(): Promise<ProgressResult | null> {
    if (this.empty) return null;
    const batch = this.pending;
    this.pending = { tasks: [], approvals: [], logs: [] };
    const { run } = this;
    this.approvalsInWrite += batch.approvals.length;
    try {
      return await bookkeeping(progressSummary(batch)).recordProgress({
        executionId: this.executionId,
        ...(run !== undefined ? { run } : {}),
        ...batch,
      });
    } catch (error) {
      // Canceled from Temporal mid-write: keep the batch for the final write (writes repeat
      // harmlessly), ahead of anything gathered since.
      const since = this.pending;
      const execution = since.execution ?? batch.execution;
      const decisions = [...(batch.decisions ?? []), ...(since.decisions ?? [])];
      this.pending = {
        tasks: [...batch.tasks, ...since.tasks],
        approvals: [...batch.approvals, ...since.approvals],
        logs: [...batch.logs, ...since.logs],
        ...(decisions.length > 0 ? { decisions } : {}),
        ...(execution ? { execution } : {}),
      };
      throw error;
    } finally {
      this.approvalsInWrite -= batch.approvals.length;
    }
  }
}

/** What the Temporal UI shows for a bookkeeping write: what it records, in a few words. */
function progressSummary(batch: Progress): string {
  const parts: string[] = [];
  if (batch.execution) parts.push(`execution ${batch.execution.status}`);
  const byStatus = new Map<string, string[]>();
  for (const task of batch.tasks) {
    const names = byStatus.get(task.status) ?? [];
    names.push(task.id);
    byStatus.set(task.status, names);
  }
  for (const [status, ids] of byStatus) {
    parts.push(`${ids.length} task${ids.length === 1 ? '' : 's'} ${status}`);
  }
  if (batch.approvals.length > 0) {
    parts.push(
      `ask approval of ${batch.approvals.map((approval) => approval.taskName).join(', ')}`,
    );
  }
  const decisions = batch.decisions ?? [];
  if (decisions.length > 0) {
    parts.push(`${decisions.length} decision${decisions.length === 1 ? '' : 's'}`);
  }
  if (parts.length === 0) parts.push(`${batch.logs.length} log entries`);
  return `Record: ${parts.join('; ')}`;
}
