import { describe, expect, it } from 'vitest';
import {
  apiKeyHash,
  apiKeyPrefix,
  looksLikeApiKey,
  lookupIdOf,
  matchesApiKey,
  newApiKey,
} from './api-key-secret.js';

describe('API key secrets', () => {
  it('are recognisable, carry their lookup id, and differ every time', () => {
    const { key, lookupId, hash } = newApiKey();
    expect(key).toMatch(/^trellis_[A-Za-z0-9]{12}_[A-Za-z0-9]{43}$/);
    expect(key.startsWith(`${apiKeyPrefix(lookupId)}_`)).toBe(true);
    expect(lookupIdOf(key)).toBe(lookupId);
    expect(looksLikeApiKey(key)).toBe(true);
    expect(hash).toEqual(apiKeyHash(key));
    expect(newApiKey().key).not.toBe(key);
  });

  it('match only the key they were made of', () => {
    const { key, hash } = newApiKey();
    expect(matchesApiKey(key, hash)).toBe(true);
    expect(matchesApiKey(`${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}`, hash)).toBe(false);
    expect(matchesApiKey(key, Buffer.alloc(3))).toBe(false);
  });

  it('give no lookup id for malformed keys', () => {
    for (const text of [
      'trellis_',
      'trellis_abc_def',
      'eyJhbGciOi.x.y',
      `trellis_${'a'.repeat(12)}_${'b'.repeat(42)}`,
    ]) {
      expect(lookupIdOf(text)).toBeUndefined();
    }
  });
});
