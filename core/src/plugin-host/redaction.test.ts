import { describe, expect, it } from 'vitest';
import { redactOutput, secretRedactor } from './redaction.js';

const token = 'tok-0123456789abcdefghijklmnopqr';

describe('secretRedactor', () => {
  const redact = secretRedactor([token, 'short']);

  it('replaces whole secrets, short ones included', () => {
    expect(redact(`Bearer ${token}; pin short`)).toBe('Bearer ********; pin ********');
  });

  it('replaces a cut secret: its start or its end, 8 characters or more', () => {
    expect(redact(`body: Bearer ${token.slice(0, -1)}`)).toBe('body: Bearer ********');
    expect(redact(`body: Bearer ${token.slice(0, 8)}`)).toBe('body: Bearer ********');
    expect(redact(`…${token.slice(9)} and more`)).toBe('…******** and more');
    expect(redact(`…${token.slice(-8)}`)).toBe('…********');
  });

  it("leaves a piece of a secret's middle, which says nothing of its ends", () => {
    const url = 'postgres://app:s3cret-pw@db.internal.example:5432/orders';
    expect(secretRedactor([url])('could not reach db.internal.example:5432')).toBe(
      'could not reach db.internal.example:5432',
    );
    expect(redact(`[${token.slice(5, 13)}]`)).toBe(`[${token.slice(5, 13)}]`);
  });

  it('leaves runs of fewer than 8 characters, which say too little to matter', () => {
    expect(redact(`tok-012 and ${token.slice(-7)}`)).toBe(`tok-012 and ${token.slice(-7)}`);
  });

  it('makes one marker of overlapping or adjacent pieces', () => {
    expect(redact(`${token.slice(0, 12)}${token.slice(-10)}!`)).toBe('********!');
    expect(redact(`${token}${token}`)).toBe('********');
  });
});

describe('redactOutput', () => {
  it('redacts cut secrets in keys and nested strings', () => {
    expect(
      redactOutput({ [token.slice(2)]: ['x', { body: token.slice(0, 10) }] }, [token]),
    ).toEqual({ '********': ['x', { body: '********' }] });
  });
});
