import { describe, expect, it } from 'vitest';
import { formatDuration } from './health.js';

describe('formatDuration', () => {
  it('prints hh:mm:ss.fffffff with 100 ns ticks', () => {
    expect(formatDuration(0n)).toBe('00:00:00.0000000');
    expect(formatDuration(1_234_567_800n)).toBe('00:00:01.2345678');
    expect(formatDuration(3_723_000_000_000n)).toBe('01:02:03.0000000');
  });
});
