import type { ExecutionEvent } from '@trellis/sdk';
import { describe, expect, it } from 'vitest';
import { emptyRun, foldEvents, maxLogEntries, withEntries, type LogEntry } from './run-state.js';

let id = 0;
const at = (second: number) => `2026-11-24T12:00:${String(second).padStart(2, '0')}.000Z`;
const task = (name: string, status: string, second: number): ExecutionEvent =>
  ({
    id: ++id,
    event: 'task',
    data: { taskExecutionId: `id-${name}`, name, status, message: status, at: at(second) },
  }) as ExecutionEvent;

describe('foldEvents', () => {
  it('follows each task: status, attempts (one per try), times', () => {
    id = 0;
    const state = foldEvents(emptyRun, [
      {
        id: ++id,
        event: 'execution',
        data: { status: 'Running', message: '', dryRun: false, at: at(0) },
      },
      task('Quick', 'Pending', 0),
      task('Flaky', 'Pending', 0),
      task('Quick', 'Completed', 1),
      task('Flaky', 'Running', 1),
      task('Flaky', 'Retrying', 2),
      task('Flaky', 'Running', 3),
      task('Flaky', 'Retrying', 4),
      task('Flaky', 'Running', 5),
      task('Flaky', 'Completed', 6),
      task('Gate', 'WaitingForApproval', 6),
      {
        id: ++id,
        event: 'approval',
        data: {
          id: 'a',
          taskExecutionId: 'id-Gate',
          taskName: 'Gate',
          status: 'Pending',
          decidedBy: null,
          at: at(6),
        },
      },
    ]);
    expect(state.status).toBe('Running');
    expect(state.tasks.Quick).toMatchObject({
      status: 'Completed',
      attempts: 1,
      startedAt: at(1),
      endedAt: at(1),
    });
    expect(state.tasks.Flaky).toMatchObject({
      status: 'Completed',
      attempts: 3,
      startedAt: at(1),
      endedAt: at(6),
    });
    expect(state.tasks.Gate).toMatchObject({
      status: 'WaitingForApproval',
      attempts: 0,
      startedAt: null,
    });
    expect(state.approvalChanges).toBe(1);
    expect(state.lastEventId).toBe(id);
    // An event seen twice (a resumed stream) changes nothing.
    expect(
      foldEvents(
        state,
        [task('Quick', 'Failed', 9)].map((event) => ({ ...event, id: 3 })),
      ),
    ).toBe(state);
  });
});

describe('foldEvents, task times', () => {
  it('takes the task’s own start and end from its events over the times they were recorded', () => {
    const timed = (
      status: string,
      second: number,
      startedAt: string | null,
      endedAt: string | null,
    ) =>
      ({
        id: ++id,
        event: 'task',
        data: {
          taskExecutionId: 'id-Wait',
          name: 'Wait',
          status,
          message: '',
          startedAt,
          endedAt,
          at: at(second),
        },
      }) as ExecutionEvent;
    id = 0;
    // Recorded late: Running at 3 s for a task that started at 1 s and ended at 6 s (a reload reads 5 s).
    const state = foldEvents(emptyRun, [
      timed('Pending', 0, null, null),
      timed('Running', 3, at(1), null),
      timed('Completed', 7, at(1), at(6)),
    ]);
    expect(state.tasks.Wait).toMatchObject({ startedAt: at(1), endedAt: at(6), attempts: 1 });
  });
});

describe('withEntries', () => {
  const entry = (n: number): LogEntry => ({
    id: `e${n}`,
    taskExecutionId: null,
    message: `m${n}`,
    level: 'Info',
    timeStamp: at(n % 60),
    exception: null,
  });

  it('merges entries once each, in the order written, keeping the latest', () => {
    const merged = withEntries([entry(1), entry(3)], [entry(2), entry(3)]);
    expect(merged.map((e) => e.id)).toEqual(['e1', 'e2', 'e3']);
    const many = withEntries(
      [],
      Array.from({ length: maxLogEntries + 5 }, (_, n) => ({ ...entry(0), id: `x${n}` })),
    );
    expect(many).toHaveLength(maxLogEntries);
    expect(many.at(-1)?.id).toBe(`x${maxLogEntries + 4}`);
  });
});

describe('foldEvents, interrupted attempts', () => {
  it('takes the attempts a task’s events count, an interrupted run included', () => {
    const counted = (status: string, second: number, attempts: number, interrupted: number) =>
      ({
        ...task('Long', status, second),
        data: {
          ...task('Long', status, second).data,
          attempts,
          interruptedAttempts: interrupted,
        },
      }) as ExecutionEvent;
    // Running, then Running again (the re-run found the first interrupted), then Completed:
    // counting status changes alone would say one attempt.
    const state = foldEvents(emptyRun, [
      counted('Running', 1, 1, 0),
      counted('Running', 9, 2, 1),
      counted('Completed', 12, 2, 1),
    ]);
    expect(state.tasks.Long).toMatchObject({
      status: 'Completed',
      attempts: 2,
      interruptedAttempts: 1,
    });
  });
});
