import { afterEach, describe, expect, it, vi } from 'vitest';
import { CredentialCache } from './credential-cache.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('CredentialCache', () => {
  it('forgets entries after the TTL or their own expiry, whichever comes first', () => {
    vi.useFakeTimers();
    const cache = new CredentialCache<string>(10, 1000);
    cache.set('Basic a', 'alice');
    cache.set('Bearer t', 'token-user', Date.now() + 100);
    expect(cache.get('Basic a')).toBe('alice');
    vi.advanceTimersByTime(150);
    expect(cache.get('Bearer t')).toBeUndefined();
    expect(cache.get('Basic a')).toBe('alice');
    vi.advanceTimersByTime(1000);
    expect(cache.get('Basic a')).toBeUndefined();
  });

  it('evicts the least recently used entry when full', () => {
    const cache = new CredentialCache<number>(2, 60_000);
    cache.set('one', 1);
    cache.set('two', 2);
    expect(cache.get('one')).toBe(1);
    cache.set('three', 3);
    expect(cache.get('two')).toBeUndefined();
    expect(cache.get('one')).toBe(1);
    expect(cache.get('three')).toBe(3);
  });
});
