import { describe, expect, it } from 'vitest';
import { replayDivergences, type RunOutcome } from './replay-divergences.js';

const run = (overrides: Partial<RunOutcome> = {}): RunOutcome => ({
  status: 'Completed',
  message: '',
  outputs: { total: 1 },
  tasks: [
    { name: 'A', status: 'Completed', output: { n: 1 } },
    { name: 'B', status: 'Skipped', output: null },
  ],
  ...overrides,
});

describe('replayDivergences', () => {
  it('finds none when the replay ends as the execution did', () => {
    expect(replayDivergences(run(), run())).toEqual([]);
  });

  it('tells a new failure, a task gone from the candidate and a new one', () => {
    const now = run({
      status: 'Failed',
      message: 'Task "C" failed',
      outputs: null,
      tasks: [
        { name: 'B', status: 'Skipped', output: null },
        { name: 'C', status: 'Failed', output: null },
      ],
    });
    expect(replayDivergences(run(), now).map((each) => each.message)).toEqual([
      'the run ended Completed then, Failed now (Task "C" failed)',
      'task A ran then (Completed), not now (not in the candidate)',
      'task C runs now (Failed), not then (not in the definition)',
    ]);
  });

  it('tells a task that ends otherwise, and each workflow output that differs', () => {
    const now = run({
      outputs: { total: 2, extra: true },
      tasks: [
        { name: 'A', status: 'Completed', output: { n: 2 } },
        { name: 'B', status: 'Skipped', output: null },
      ],
    });
    expect(replayDivergences(run(), now)).toEqual([
      {
        kind: 'taskOutput',
        task: 'A',
        path: 'A',
        then: { n: 1 },
        now: { n: 2 },
        message: 'task A gave another output',
      },
      {
        kind: 'output',
        task: null,
        path: 'outputs.total',
        then: 1,
        now: 2,
        message: 'outputs.total was 1, is 2',
      },
      {
        kind: 'output',
        task: null,
        path: 'outputs.extra',
        then: null,
        now: true,
        message: 'outputs.extra was null, is true',
      },
    ]);
  });
});
