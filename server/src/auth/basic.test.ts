import { describe, expect, it } from 'vitest';
import type { TrellisConfig } from '#platform/config/types.js';
import { HttpError } from '../http-error.js';
import { hashPassword } from '#platform/security/password.js';
import { createBasicAuthenticator, parseBasicHeader } from './basic.js';

const header = (name: string, password: string) =>
  `Basic ${Buffer.from(`${name}:${password}`).toString('base64')}`;

describe('parseBasicHeader', () => {
  it('splits at the first colon, so passwords may contain colons', () => {
    expect(parseBasicHeader(header('ann', 'a:b:c'))).toEqual({ name: 'ann', password: 'a:b:c' });
  });
  it('returns null for other schemes and malformed values', () => {
    expect(parseBasicHeader('Bearer abc')).toBeNull();
    expect(parseBasicHeader(`Basic ${Buffer.from('no-colon').toString('base64')}`)).toBeNull();
  });
});

describe('Basic authentication', () => {
  it('accepts hashed and plain-text passwords and rejects wrong ones and unknown users', async () => {
    const settings: TrellisConfig['Security']['Basic'] = {
      Enabled: true,
      Users: [
        { Name: 'hashed', Password: await hashPassword('s3cret'), Roles: ['workflow'] },
        { Name: 'plain', Password: 'plain-pw', Roles: ['config', 'plugins'] },
      ],
    };
    const authenticate = createBasicAuthenticator(settings);
    expect(await authenticate(header('hashed', 's3cret'))).toEqual({
      name: 'hashed',
      roles: ['workflow'],
    });
    expect(await authenticate(header('plain', 'plain-pw'))).toEqual({
      name: 'plain',
      roles: ['config', 'plugins'],
    });
    for (const wrong of [
      header('hashed', 'nope'),
      header('plain', 'nope'),
      header('ghost', 's3cret'),
    ]) {
      const error = await authenticate(wrong).catch((reason: unknown) => reason);
      expect(error).toBeInstanceOf(HttpError);
      expect((error as HttpError).status).toBe(401);
      expect((error as HttpError).messages).toEqual(['Invalid username or password.']);
    }
  });

  it('answers a repeated header from the cache instead of hashing again', async () => {
    const settings: TrellisConfig['Security']['Basic'] = {
      Enabled: true,
      Users: [{ Name: 'u', Password: await hashPassword('pw'), Roles: ['admin'] }],
    };
    const authenticate = createBasicAuthenticator(settings);
    const first = performance.now();
    await authenticate(header('u', 'pw'));
    const uncached = performance.now() - first;
    const second = performance.now();
    for (let i = 0; i < 20; i++) await authenticate(header('u', 'pw'));
    const cachedEach = (performance.now() - second) / 20;
    expect(cachedEach).toBeLessThan(uncached / 5);
  });

  it('takes as long for an unknown name as for a user, whatever form the password has', async () => {
    const settings: TrellisConfig['Security']['Basic'] = {
      Enabled: true,
      Users: [
        { Name: 'hashed', Password: await hashPassword('s3cret'), Roles: ['workflow'] },
        { Name: 'plain', Password: 'plain-pw', Roles: ['workflow'] },
      ],
    };
    const authenticate = createBasicAuthenticator(settings);
    /** The median time of a wrong password for `name` (each header new: never cached). */
    const median = async (name: string) => {
      const times: number[] = [];
      for (let attempt = 0; attempt < 9; attempt++) {
        const started = performance.now();
        await authenticate(header(name, `wrong-${attempt}`)).catch(() => undefined);
        times.push(performance.now() - started);
      }
      return times.sort((a, b) => a - b)[4]!;
    };
    await median('plain'); // the one-time hashing of plain-text passwords, out of the way
    const [unknown, plain, hashed] = [
      await median('ghost'),
      await median('plain'),
      await median('hashed'),
    ];
    // Each is one scrypt check (tens of ms); a plain comparison took under a millisecond.
    for (const time of [plain, hashed]) {
      expect(time / unknown).toBeGreaterThan(0.5);
      expect(time / unknown).toBeLessThan(2);
    }
  });
});
