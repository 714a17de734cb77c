import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { PluginInputError } from '#plugin-host/runner.js';
import { createRecordingLogger, runPluginFolder } from '../../test/support/plugin-folder.js';

const folder = fileURLToPath(new URL('.', import.meta.url));
const digest = async (parameters: Record<string, unknown>, specifications = {}) =>
  ((await runPluginFolder(folder, { parameters, specifications })) as { digest: string }).digest;

describe('Security/Hash', () => {
  it('computes the standard digests of "abc"', async () => {
    expect(await digest({ input: 'abc', algorithm: 'md5' })).toBe(
      '900150983cd24fb0d6963f7d28e17f72',
    );
    expect(await digest({ input: 'abc', algorithm: 'sha1' })).toBe(
      'a9993e364706816aba3e25717850c26c9cd0d89d',
    );
    expect(await digest({ input: 'abc' })).toBe(
      'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    );
    expect(await digest({ input: 'abc', algorithm: 'sha512' })).toBe(
      'ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f',
    );
  });

  it('reads Base64 input and writes Base64 output', async () => {
    expect(await digest({ input: 'YWJj', inputEncoding: 'base64', outputEncoding: 'base64' })).toBe(
      'ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0=',
    );
  });

  it('computes an HMAC (RFC 4231 case 2) from the key parameter or the secret setting', async () => {
    const expected = '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843';
    expect(await digest({ input: 'what do ya want for nothing?', key: 'Jefe' })).toBe(expected);
    const logger = createRecordingLogger();
    const output = await runPluginFolder(folder, {
      logger,
      parameters: { input: 'what do ya want for nothing?', hmac: true },
      specifications: { hmacKey: 'Jefe' },
    });
    expect(output).toEqual({ algorithm: 'sha256', hmac: true, encoding: 'hex', digest: expected });
  });

  it('fails without a key when an HMAC is asked for', async () => {
    await expect(digest({ input: 'x', hmac: true })).rejects.toThrow(PluginInputError);
  });

  it('refuses unknown algorithms and settings', async () => {
    await expect(digest({ input: 'x', algorithm: 'crc32' })).rejects.toThrow(
      /parameter "algorithm" must be one of/,
    );
    await expect(digest({ input: 'x' }, { salt: 'y' })).rejects.toThrow(
      /specification "salt" is not a setting of this plugin \(settings: hmacKey\)/,
    );
  });
});
