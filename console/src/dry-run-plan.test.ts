import { describe, expect, it } from 'vitest';
import { dryRunPlan } from './dry-run-plan.js';
import type { LogEntry } from './run-state.js';

let id = 0;
/** A task's log entry as the API returns it. */
const line = (taskExecutionId: string, message: string): LogEntry => ({
  id: String((id += 1)),
  taskExecutionId,
  timeStamp: '2026-11-29T08:00:00.000Z',
  level: 'Info',
  message,
  exception: null,
});

// The worker's words (workflows-worker/src/activities/dry-run.ts); the console's browser test
// reads them from a real run.
const tasks = {
  Fetch: { taskExecutionId: 't1', status: 'Completed' as const, message: '' },
  Approve: { taskExecutionId: 't2', status: 'Completed' as const, message: '' },
  Write: { taskExecutionId: 't3', status: 'Completed' as const, message: '' },
  Digest: { taskExecutionId: 't4', status: 'Completed' as const, message: '' },
  Never: {
    taskExecutionId: 't5',
    status: 'Skipped' as const,
    message: "Skipped: condition Outputs('Write').rowCount > 100 is false.",
  },
};
const logs = [
  line('t1', 'Dry run: parameters resolved to {"url":"http://x/orders","method":"GET"}.'),
  line('t1', "Dry run: output from the request's mock; Net/Http (effects: calls) was not run."),
  line('t2', 'Dry run: parameters resolved to {}.'),
  line(
    't2',
    'Dry run: approval a-1 would be asked (Write the order?); it is approved at once, no one is asked.',
  ),
  line('t2', 'Approved by dry run: a dry run asks no one.'),
  line('t3', 'Dry run: parameters resolved to {"params":["mocked"]}.'),
  line(
    't3',
    'Dry run: output recorded by execution e-0 (the latest completed real run); Database/PostgreSql (effects: writes) was not run.',
  ),
  line('t4', 'Dry run: parameters resolved to {"algorithm":"sha256"}.'),
  line('t4', 'digest computed'),
];

describe('a dry run plan', () => {
  it('gives each task, in order, its source of output, plugin and effects, parameters and approval', () => {
    const plan = dryRunPlan(['Fetch', 'Approve', 'Write', 'Digest', 'Never', 'Later'], tasks, logs);
    expect(
      plan.map(({ name, sources, plugin, effects }) => ({ name, sources, plugin, effects })),
    ).toEqual([
      { name: 'Fetch', sources: [{ kind: 'mock' }], plugin: 'Net/Http', effects: 'calls' },
      { name: 'Approve', sources: [{ kind: 'ran' }], plugin: null, effects: null },
      {
        name: 'Write',
        sources: [{ kind: 'recorded', executionId: 'e-0' }],
        plugin: 'Database/PostgreSql',
        effects: 'writes',
      },
      { name: 'Digest', sources: [{ kind: 'ran' }], plugin: null, effects: null },
      { name: 'Never', sources: [], plugin: null, effects: null },
      { name: 'Later', sources: [], plugin: null, effects: null },
    ]);
    expect(plan[0]!.parameters).toEqual({ url: 'http://x/orders', method: 'GET' });
    expect(plan[1]!.approval).toEqual({ id: 'a-1', comment: 'Write the order?' });
    expect(plan[4]).toMatchObject({
      status: 'Skipped',
      message: expect.stringContaining('is false'),
    });
    expect(plan[5]).toMatchObject({ status: null, parameters: null, approval: null });
  });

  it("lists each of a foreach task's sources once, and an approval without a comment", () => {
    const plan = dryRunPlan(
      ['Each'],
      { Each: { taskExecutionId: 't', status: 'Completed', message: '' } },
      [
        line(
          't',
          'Dry run: output generated from the output schema of Net/Http; Net/Http (effects: calls) was not run.',
        ),
        line(
          't',
          'Dry run: output generated from the output schema of Net/Http; Net/Http (effects: calls) was not run.',
        ),
        line(
          't',
          "Dry run: output from the request's mock; Net/Http (effects: calls) was not run.",
        ),
        line('t', 'Dry run: approval a-2 would be asked; it is approved at once, no one is asked.'),
      ],
    );
    expect(plan[0]!.sources).toEqual([{ kind: 'generated' }, { kind: 'mock' }]);
    expect(plan[0]!.approval).toEqual({ id: 'a-2', comment: '' });
  });
});
