import { describe, expect, it } from 'vitest';
import { PLUGIN_EFFECTS, runsForRealInDryRun } from './plugin-effects.js';

describe('runsForRealInDryRun', () => {
  it('lets only a pure plugin run for real; one that reads, writes or calls out is mocked', () => {
    expect(PLUGIN_EFFECTS.filter(runsForRealInDryRun)).toEqual(['pure']);
    expect(runsForRealInDryRun('reads')).toBe(false);
    expect(runsForRealInDryRun('writes')).toBe(false);
    expect(runsForRealInDryRun('calls')).toBe(false);
  });
});
