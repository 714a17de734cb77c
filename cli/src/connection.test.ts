import { describe, expect, it } from 'vitest';
import { clientOptions, defaultUrl, type OptionSource } from './connection.js';
import { UsageError } from './failures.js';

const from =
  (sources: Record<string, OptionSource>) =>
  (name: string): OptionSource =>
    sources[name];

describe('clientOptions', () => {
  it('uses the default URL, without credentials when none are given', () => {
    expect(clientOptions({})).toEqual({ baseUrl: defaultUrl });
  });

  it('sends Basic for a user and password, Bearer for a token', () => {
    expect(clientOptions({ url: 'https://t.example/api/', user: 'ann', password: 'pw' })).toEqual({
      baseUrl: 'https://t.example/api',
      basic: { username: 'ann', password: 'pw' },
    });
    expect(clientOptions({ token: 'jwt' }, undefined, 'trellis-cli/1')).toEqual({
      baseUrl: defaultUrl,
      bearer: 'jwt',
      headers: { 'User-Agent': 'trellis-cli/1' },
    });
  });

  it('works in the project given (--project or TRELLIS_PROJECT)', () => {
    expect(clientOptions({ user: 'ann', password: 'pw', project: 'partner-a' })).toEqual({
      baseUrl: defaultUrl,
      basic: { username: 'ann', password: 'pw' },
      project: 'partner-a',
    });
  });

  it('lets a flag beat an environment variable, and refuses both given the same way', () => {
    const both = { user: 'ann', password: 'pw', token: 'jwt' };
    expect(clientOptions(both, from({ user: 'env', token: 'cli' }))).toMatchObject({
      bearer: 'jwt',
    });
    expect(clientOptions(both, from({ user: 'cli', token: 'env' }))).toMatchObject({
      basic: { username: 'ann' },
    });
    expect(() => clientOptions(both, from({ user: 'env', token: 'env' }))).toThrow(
      'Give either a user and password or a token, not both.',
    );
  });

  it('refuses a user without a password, a password without a user, an empty token', () => {
    expect(() => clientOptions({ user: 'ann' })).toThrow('No password for user "ann".');
    expect(() => clientOptions({ password: 'pw' })).toThrow(/--password needs a user/);
    expect(() => clientOptions({ token: '' })).toThrow(/token is empty/);
    // A password in the environment alone is harmless (another tool may have set it).
    expect(clientOptions({ password: 'pw' }, from({ password: 'env' }))).toEqual({
      baseUrl: defaultUrl,
    });
  });

  it('refuses a URL that is not http(s), as a usage error naming it', () => {
    expect(() => clientOptions({ url: 'localhost:6262' })).toThrow(UsageError);
    expect(() => clientOptions({ url: 'not a url' })).toThrow('"not a url" is not a URL.');
  });
});
