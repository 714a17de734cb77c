import { describe, expect, it } from 'vitest';
import { checkConcurrency as checkConcurrencyProblems, concurrencyKey } from './concurrency.js';
import { parseDefinition } from './parse.js';
import type { ConcurrencyLimit, WorkflowDefinition } from './types.js';
import { renderProblem } from './validation/problem.js';

/** What a user reads of each problem. */
const checkConcurrency = (...args: Parameters<typeof checkConcurrencyProblems>) =>
  checkConcurrencyProblems(...args).map(renderProblem);

const withKey = (key: string | undefined): WorkflowDefinition => ({
  name: 'W',
  inputs: { customer: { type: 'string' }, order: { type: 'object' } },
  configuration: {
    concurrency: { limit: 1, onLimit: 'Queue', ...(key === undefined ? {} : { key }) },
  },
  tasks: [{ name: 'A', type: 'cfg' }],
});

const at = 'configuration.concurrency.key';

describe('checkConcurrency', () => {
  it('accepts keys over inputs, bare or as text, and no key at all', () => {
    expect(checkConcurrency(withKey(undefined))).toEqual([]);
    expect(checkConcurrency(withKey("Inputs('customer')"))).toEqual([]);
    expect(checkConcurrency(withKey("tenant-$[Inputs('order').region]"))).toEqual([]);
    expect(checkConcurrency(withKey("'everyone'"))).toEqual([]);
  });

  it('refuses keys that read outputs or variables, naming the place', () => {
    expect(checkConcurrency(withKey("Outputs('A').id"))).toEqual([
      `${at}: may read only the run's inputs (Inputs('name')), not Outputs(...): the key is taken before any task runs`,
    ]);
    expect(checkConcurrency(withKey("$[Variables('region')]-$[Inputs('customer')]"))).toEqual([
      `${at}: may read only the run's inputs (Inputs('name')), not Variables(...): the key is taken before any task runs`,
    ]);
  });

  it('refuses undeclared inputs and keys that do not parse', () => {
    expect(checkConcurrency(withKey("Inputs('tenant')"))).toEqual([
      `${at}: Inputs('tenant') names no declared input`,
    ]);
    const [problem] = checkConcurrency(withKey('Inputs(('));
    expect(problem).toMatch(/^configuration\.concurrency\.key: cannot parse/);
  });

  it('is part of the definition checks, beside the schema (limit, onLimit)', () => {
    const bad = parseDefinition(
      JSON.stringify({
        ...withKey("Outputs('A')"),
        configuration: { concurrency: { limit: 0, onLimit: 'Later', key: "Outputs('A')" } },
      }),
    );
    expect(bad.ok).toBe(false);
    const errors = bad.ok ? '' : bad.problems.map(renderProblem).join('\n');
    expect(errors).toMatch(/configuration\.concurrency\.limit/);
    expect(errors).toMatch(/configuration\.concurrency\.onLimit/);
    const reads = parseDefinition(JSON.stringify(withKey("Outputs('A')")));
    expect(reads).toEqual({
      ok: false,
      problems: [
        {
          code: 'validation.invalid',
          path: at,
          message: `may read only the run's inputs (Inputs('name')), not Outputs(...): the key is taken before any task runs`,
        },
      ],
    });
  });
});

describe('concurrencyKey', () => {
  const limit = (key?: string): ConcurrencyLimit => ({
    limit: 1,
    onLimit: 'Queue',
    ...(key === undefined ? {} : { key }),
  });

  it('is the text of the key expression over the inputs', () => {
    expect(concurrencyKey(limit("Inputs('customer')"), { customer: 'acme' })).toBe('acme');
    expect(concurrencyKey(limit("t-$[Inputs('n')]"), { n: 7 })).toBe('t-7');
    expect(concurrencyKey(limit("Inputs('o')"), { o: { a: 1 } })).toBe('{"a":1}');
  });

  it('is one key for every run without a key expression', () => {
    expect(concurrencyKey(limit(), { customer: 'acme' })).toBe('');
  });
});
