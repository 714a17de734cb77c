import { describe, expect, it } from 'vitest';
import { hashPassword, isHashed, verifyPassword } from './password.js';

describe('password hashes', () => {
  it('hashes to scrypt$N$r$p$salt$hash and verifies only the right password', async () => {
    const stored = await hashPassword('correct horse');
    expect(stored).toMatch(/^scrypt\$16384\$8\$1\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/);
    expect(isHashed(stored)).toBe(true);
    expect(await verifyPassword(stored, 'correct horse')).toBe(true);
    expect(await verifyPassword(stored, 'correct horsE')).toBe(false);
    expect(await verifyPassword(stored, '')).toBe(false);
  });

  it('salts every hash', async () => {
    const [a, b] = await Promise.all([hashPassword('same'), hashPassword('same')]);
    expect(a).not.toBe(b);
    expect(await verifyPassword(b, 'same')).toBe(true);
  });

  it('accepts plain-text stored passwords', async () => {
    expect(isHashed('hunter2')).toBe(false);
    expect(await verifyPassword('hunter2', 'hunter2')).toBe(true);
    expect(await verifyPassword('hunter2', 'hunter')).toBe(false);
    expect(await verifyPassword('hunter2', 'hunter22')).toBe(false);
  });

  it('treats malformed or unreasonable hashes as not hashed', () => {
    expect(isHashed('scrypt$16384$8$1$c2FsdA==')).toBe(false);
    expect(isHashed('scrypt$1000$8$1$c2FsdHNhbHQ=$aGFzaGhhc2hoYXNoaGFzaA==')).toBe(false); // N not 2^k
    expect(isHashed(`scrypt$${2 ** 24}$8$1$c2FsdHNhbHQ=$aGFzaGhhc2hoYXNoaGFzaA==`)).toBe(false);
  });

  it('verifies hashes made with other cost parameters', async () => {
    // Produced by the same format with N=1024, r=8, p=1 (cheaper settings an operator might pick).
    const { scryptSync } = await import('node:crypto');
    const salt = Buffer.from('0123456789abcdef');
    const hash = scryptSync('pw', salt, 32, { N: 1024, r: 8, p: 1 });
    const stored = `scrypt$1024$8$1$${salt.toString('base64')}$${hash.toString('base64')}`;
    expect(await verifyPassword(stored, 'pw')).toBe(true);
    expect(await verifyPassword(stored, 'pw2')).toBe(false);
  });
});
