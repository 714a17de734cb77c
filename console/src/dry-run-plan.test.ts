import { describe, expect, it } from 'vitest';
import { dryRunPlan, type PlannedRow } from './dry-run-plan.js';

/** A task row's plan as the API gives it (`TaskDryRun`); the console's browser test reads them from a real run. */
const planned = (
  name: string,
  plan: Partial<NonNullable<PlannedRow['dryRun']>> | null,
): PlannedRow => ({
  name,
  dryRun: plan && {
    source: null,
    recordedFrom: null,
    plugin: null,
    effects: null,
    parameters: null,
    approval: null,
    ...plan,
  },
});

const tasks = {
  Fetch: { status: 'Completed' as const, message: '' },
  Approve: { status: 'Completed' as const, message: '' },
  Write: { status: 'Completed' as const, message: '' },
  Digest: { status: 'Completed' as const, message: '' },
  Never: {
    status: 'Skipped' as const,
    message: "Skipped: condition Outputs('Write').rowCount > 100 is false.",
  },
};
const rows = [
  planned('Fetch', {
    source: 'Mock',
    plugin: 'Net/Http',
    effects: 'calls',
    parameters: { url: 'http://x/orders', method: 'GET' },
  }),
  planned('Approve', {
    source: 'RanForReal',
    plugin: 'Flow/NoOp',
    effects: 'pure',
    parameters: {},
    approval: { approvalId: 'a-1', comment: 'Write the order?' },
  }),
  planned('Write', {
    source: 'Recorded',
    recordedFrom: 'e-0',
    plugin: 'Database/PostgreSql',
    effects: 'writes',
    parameters: { params: ['mocked'] },
  }),
  planned('Digest', {
    source: 'RanForReal',
    plugin: 'Security/Hash',
    effects: 'pure',
    parameters: { algorithm: 'sha256' },
  }),
  planned('Never', null),
];

describe('a dry run plan', () => {
  it('gives each task, in order, its source of output, plugin and effects, parameters and approval', () => {
    const plan = dryRunPlan(['Fetch', 'Approve', 'Write', 'Digest', 'Never', 'Later'], tasks, rows);
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

  it("gathers a foreach task's items, each source once, and an approval noted before the task ran", () => {
    const generated = {
      source: 'Generated' as const,
      plugin: 'Net/Http',
      effects: 'calls' as const,
    };
    const plan = dryRunPlan(
      ['Each', 'Gate', 'Each2'],
      {
        Each: { status: 'Completed', message: '' },
        Gate: { status: 'WaitingForApproval', message: '' },
      },
      [
        planned('Each', null),
        planned('Each[0]', { ...generated, parameters: { url: 'http://x/0' } }),
        planned('Each[1]', { ...generated, parameters: { url: 'http://x/1' } }),
        planned('Each[2]', { ...generated, source: 'Mock', parameters: { url: 'http://x/2' } }),
        planned('Gate', { approval: { approvalId: 'a-2', comment: '' } }),
        planned('Each2', {
          source: 'RanForReal',
          plugin: 'Flow/NoOp',
          effects: 'pure',
          parameters: {},
        }),
      ],
    );
    expect(plan[0]).toMatchObject({
      sources: [{ kind: 'generated' }, { kind: 'mock' }],
      plugin: 'Net/Http',
      effects: 'calls',
      parameters: { url: 'http://x/0' },
    });
    // `Each2` is another task, not an item of `Each`.
    expect(plan[2]!.sources).toEqual([{ kind: 'ran' }]);
    expect(plan[1]).toMatchObject({
      sources: [],
      parameters: null,
      approval: { id: 'a-2', comment: '' },
    });
  });
});
