import { InvalidArgumentError } from 'commander';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../failures.js';
import { assertSingle, since } from './bulk-executions.js';

describe('since', () => {
  const now = Date.parse('2026-11-29T12:00:00Z');

  it('reads how long ago, in minutes, hours or days', () => {
    expect(since('30m', now)).toBe('2026-11-29T11:30:00.000Z');
    expect(since('6h', now)).toBe('2026-11-29T06:00:00.000Z');
    expect(since('2d', now)).toBe('2026-11-27T12:00:00.000Z');
  });

  it('reads an ISO time, and refuses anything else', () => {
    expect(since('2026-11-29T08:00:00+01:00', now)).toBe('2026-11-29T07:00:00.000Z');
    for (const text of ['yesterday', '6 hours', '12', '6w']) {
      expect(() => since(text, now)).toThrow(InvalidArgumentError);
    }
  });
});

describe('assertSingle', () => {
  it('names the bulk options given beside an execution id', () => {
    expect(() => assertSingle({})).not.toThrow();
    expect(() => assertSingle({ startedBy: 'ann', dryRun: true })).toThrow(
      new UsageError(
        '--started-by, --dry-run select executions in bulk: leave out the execution id, or these options.',
      ),
    );
  });
});
