import { describe, expect, it } from 'vitest';
import {
  howCallerBreaks,
  interfaceBreaks,
  type InterfaceCaller,
  type WorkflowInterface,
} from './interface-changes.js';

/** The breaks as a reader sees them: `path: change`, and `(known callers only)` when so. */
const breaks = (before: WorkflowInterface, after: WorkflowInterface) =>
  interfaceBreaks(before, after).map(
    (found) =>
      `${found.path}: ${found.change}${found.breaksUnseenCallers ? '' : ' (known callers only)'}`,
  );

const amount = { type: 'number', required: true } as const;

describe('interfaceBreaks', () => {
  it.each<[string, WorkflowInterface, WorkflowInterface, string[]]>([
    ['nothing declared, nothing declared', {}, {}, []],
    ['the same declarations', { inputs: { amount } }, { inputs: { amount } }, []],
    [
      'a new optional input',
      { inputs: { amount } },
      { inputs: { amount, note: { type: 'string' } } },
      [],
    ],
    [
      'a new required input with a default',
      { inputs: { amount } },
      { inputs: { amount, currency: { type: 'string', required: true, default: 'EUR' } } },
      [],
    ],
    [
      'an input made optional',
      { inputs: { amount } },
      { inputs: { amount: { type: 'number' } } },
      [],
    ],
    [
      'descriptions and defaults changed',
      { inputs: { note: { type: 'string', default: 'a', description: 'old' } } },
      { inputs: { note: { type: 'string', default: 'b', description: 'new' } } },
      [],
    ],
    [
      'an integer input widened to number',
      { inputs: { count: { type: 'integer' } } },
      { inputs: { count: { type: 'number' } } },
      [],
    ],
    [
      'a new output',
      { outputs: { total: "Outputs('Sum').total" } },
      { outputs: { total: "Outputs('Sum').total", count: '1' } },
      [],
    ],
    [
      'an output whose expression changed',
      { outputs: { total: "Outputs('Sum').total" } },
      { outputs: { total: "Outputs('Add').result" } },
      [],
    ],
    [
      'a new required input',
      { inputs: { amount } },
      { inputs: { amount, currency: { type: 'string', required: true } } },
      ['inputs.currency: is a new required input (string) without a default'],
    ],
    [
      'an optional input made required',
      { inputs: { amount: { type: 'number' } } },
      { inputs: { amount } },
      ['inputs.amount: becomes required (number)'],
    ],
    [
      'a required input losing its default',
      { inputs: { amount: { ...amount, default: 1 } } },
      { inputs: { amount } },
      ['inputs.amount: becomes required (number)'],
    ],
    [
      'a number input narrowed to integer',
      { inputs: { amount } },
      { inputs: { amount: { type: 'integer', required: true } } },
      ['inputs.amount: changes type from number to integer'],
    ],
    [
      'an input changing type and becoming required',
      { inputs: { amount: { type: 'string' } } },
      { inputs: { amount } },
      [
        'inputs.amount: changes type from string to number',
        'inputs.amount: becomes required (number)',
      ],
    ],
    [
      'an input removed',
      { inputs: { amount, note: { type: 'string' } } },
      { inputs: { amount } },
      ['inputs.note: is no longer declared'],
    ],
    ['every input removed', { inputs: { amount } }, {}, ['inputs.amount: is no longer declared']],
    [
      'an output removed',
      { outputs: { total: '1', count: '2' } },
      { outputs: { total: '1' } },
      ['outputs.count: is no longer an output'],
    ],
    [
      'inputs declared for the first time, one required',
      {},
      { inputs: { amount, note: { type: 'string' } } },
      ['inputs.amount: is a new required input (number) without a default (known callers only)'],
    ],
    [
      'inputs declared for the first time after an empty declaration',
      { inputs: {} },
      { inputs: { amount } },
      ['inputs.amount: is a new required input (number) without a default (known callers only)'],
    ],
    [
      'names that need quoting in a path',
      { inputs: { 'the amount': amount } },
      {},
      ['inputs["the amount"]: is no longer declared'],
    ],
  ])('%s', (_case, before, after, expected) => {
    expect(breaks(before, after)).toEqual(expected);
  });
});

describe('howCallerBreaks', () => {
  const before: WorkflowInterface = {
    inputs: { amount: { type: 'number' }, note: { type: 'string' } },
    outputs: { total: '1' },
  };
  const after: WorkflowInterface = {
    inputs: {
      amount: { type: 'integer' },
      currency: { type: 'string', required: true },
    },
  };
  const found = interfaceBreaks(before, after);
  /** Each break that hits the caller, as `path: how`. */
  const hits = (caller: InterfaceCaller) =>
    found.flatMap((change) => {
      const how = howCallerBreaks(change, caller);
      return how === null ? [] : [`${change.path}: ${how}`];
    });

  it('names what a caller gives that is no longer declared or no longer fits, and what it misses', () => {
    expect(hits({ inputs: { amount: 2.5, note: 'x' }, readsOutputs: true })).toEqual([
      'inputs.amount: gives it 2.5',
      'inputs.currency: does not give it',
      'inputs.note: gives it',
      'outputs.total: takes the run’s outputs as its output',
    ]);
  });

  it('passes a caller whose values still fit and that reads no outputs', () => {
    expect(hits({ inputs: { amount: 3, currency: 'EUR' }, readsOutputs: false })).toEqual([]);
  });

  it('counts a value that is one expression as not known to fit, and text around one as a string', () => {
    expect(
      hits({ inputs: { amount: "$[Inputs('n')]", currency: 'EUR' }, readsOutputs: false }),
    ).toEqual(['inputs.amount: gives it an expression whose type is known only at run time']);
    expect(
      hits({ inputs: { amount: "n = $[Inputs('n')]", currency: 'EUR' }, readsOutputs: false }),
    ).toEqual(['inputs.amount: gives it "n = $[Inputs(\'n\')]"']);
  });

  it('treats a caller that gives no inputs at all as giving none of them', () => {
    expect(hits({ inputs: undefined, readsOutputs: false })).toEqual([
      'inputs.currency: does not give it',
    ]);
  });
});
