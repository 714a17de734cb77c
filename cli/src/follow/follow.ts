import {
  isTaskFinished,
  isTerminal,
  type ApprovalEventData,
  type ExecutionStatus,
  type RunEvent,
  type TaskEventData,
} from './events.js';

/** Shows a run as its events arrive. */
export interface RunView {
  /** One event, in the order of the stream. */
  show(event: RunEvent): void;
  /** The stream ended (or following stopped): leave the screen as it is. */
  close(): void;
}

/**
 * Feeds a run's events to a view until the event that ends the execution; resolves to the last
 * execution status seen (undefined if the stream ended without one).
 */
export async function followRun(
  events: AsyncIterable<RunEvent>,
  view: RunView,
): Promise<ExecutionStatus | undefined> {
  let status: ExecutionStatus | undefined;
  try {
    for await (const event of events) {
      view.show(event);
      if (event.event !== 'execution') continue;
      status = event.data.status;
      if (isTerminal(status)) break;
    }
  } finally {
    view.close();
  }
  return status;
}

/** What a view knows of a run: its status, its tasks in definition order, its approvals. */
export class RunState {
  status: ExecutionStatus | undefined;
  readonly tasks = new Map<string, TaskEventData>();
  readonly approvals = new Map<string, ApprovalEventData>();
  private readonly names = new Map<string, string>();

  /** `taskNames`: the definition's tasks, so that they are listed (Pending) before any event. */
  constructor(taskNames: readonly string[] = []) {
    for (const name of taskNames) {
      this.tasks.set(name, { taskExecutionId: '', name, status: 'Pending', message: '' });
    }
  }

  apply(event: RunEvent): void {
    switch (event.event) {
      case 'execution':
        this.status = event.data.status;
        return;
      case 'task':
        this.tasks.set(event.data.name, event.data);
        this.names.set(event.data.taskExecutionId, event.data.name);
        return;
      case 'approval':
        this.approvals.set(event.data.id, event.data);
        return;
      case 'log':
        return;
    }
  }

  /** The name of a task by its task execution id. */
  taskName(taskExecutionId: string | null): string | undefined {
    return taskExecutionId === null ? undefined : this.names.get(taskExecutionId);
  }

  /** How many tasks have run their course, of how many. */
  get progress(): { finished: number; total: number } {
    const all = [...this.tasks.values()];
    return {
      finished: all.filter((task) => isTaskFinished(task.status)).length,
      total: all.length,
    };
  }
}
