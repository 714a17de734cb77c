import { createCipheriv, createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readFile, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildConfig } from '#platform/config/load.js';
import type { PluginSpecificationDescriptor } from '#store/tables.js';
import {
  checkConfigurationSpecifications,
  decryptSecrets,
  encryptSecrets,
  loadSecretKeys,
  redactSecrets,
  SecretKeys,
} from './settings.js';

const descriptors: PluginSpecificationDescriptor[] = [
  { key: 'url', type: 'string', required: true, secret: false, description: 'Where to connect' },
  { key: 'password', type: 'string', required: true, secret: true, description: '' },
  { key: 'port', type: 'integer', required: false, secret: false, description: '', default: 5432 },
  { key: 'options', type: 'object', required: false, secret: false, description: '' },
];

describe('checkConfigurationSpecifications', () => {
  it('accepts settings that fit, from descriptors or a plugin row', () => {
    const settings = { url: 'x', password: 'p', port: 1, options: {} };
    expect(checkConfigurationSpecifications(descriptors, settings)).toEqual([]);
    expect(checkConfigurationSpecifications({ specifications: descriptors }, settings)).toEqual([]);
  });

  it('gives one message per problem', () => {
    expect(
      checkConfigurationSpecifications(descriptors, {
        password: 5,
        port: 1.5,
        options: [],
        colour: 'red',
      }),
    ).toEqual([
      'specification "url" is required (string: Where to connect)',
      'specification "password" must be a string',
      'specification "port" must be an integer',
      'specification "options" must be an object',
      'specification "colour" is not a setting of this plugin (settings: url, password, port, options)',
    ]);
    expect(checkConfigurationSpecifications([], { a: 1 })).toEqual([
      'specification "a" is not a setting of this plugin (it takes no settings)',
    ]);
  });
});

/** A value as the `enc:v1:` format stored it: AES-256-GCM under `key`, no salt. */
function encryptedV1(value: unknown, key: Buffer): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const data = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()]);
  return 'enc:v1:' + [iv, cipher.getAuthTag(), data].map((p) => p.toString('base64url')).join(':');
}

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest();

describe('secrets', () => {
  const key = SecretKeys.fromText('the current key');

  it('encrypts only secret values, and decrypts them back', () => {
    const stored = encryptSecrets(descriptors, { url: 'u', password: 'hunter2' }, key);
    expect(stored.url).toBe('u');
    // enc:v2:<salt>:<iv>:<tag>:<data>
    expect(stored.password).toMatch(/^enc:v2:[\w-]{22}:[\w-]{16}:[\w-]{22}:[\w-]+$/);
    expect(JSON.stringify(stored)).not.toContain('hunter2');
    expect(encryptSecrets(descriptors, stored, key)).toEqual(stored);
    expect(decryptSecrets(descriptors, stored, key)).toEqual({ url: 'u', password: 'hunter2' });
  });

  it('uses a fresh nonce each time', () => {
    const a = encryptSecrets(descriptors, { password: 'same' }, key);
    const b = encryptSecrets(descriptors, { password: 'same' }, key);
    expect(a.password).not.toBe(b.password);
  });

  it('derives the AES key with scrypt and a salt, so one key text gives different keys per salt', () => {
    const one = encryptSecrets(descriptors, { password: 'p' }, SecretKeys.fromText('same text'));
    const two = encryptSecrets(descriptors, { password: 'p' }, SecretKeys.fromText('same text'));
    const salt = (stored: unknown) => String(stored).split(':')[2];
    expect(salt(one.password)).not.toBe(salt(two.password));
    // Either process reads what the other wrote: the salt travels with the value.
    expect(decryptSecrets(descriptors, one, SecretKeys.fromText('same text')).password).toBe('p');
    expect(decryptSecrets(descriptors, two, SecretKeys.fromText('same text')).password).toBe('p');
  });

  it('refuses to decrypt with another key', () => {
    const stored = encryptSecrets(descriptors, { password: 'hunter2' }, key);
    expect(() => decryptSecrets(descriptors, stored, SecretKeys.fromText('another key'))).toThrow(
      /Cannot decrypt secret setting "password".*Security.EncryptionKey/,
    );
  });

  it('rotates keys: previous keys decrypt, and a write encrypts again with the current key', () => {
    const old = SecretKeys.fromText('old key');
    const stored = encryptSecrets(descriptors, { url: 'u', password: 'hunter2' }, old);
    const rotated = SecretKeys.fromText('new key', ['old key']);
    expect(decryptSecrets(descriptors, stored, rotated).password).toBe('hunter2');

    const rewritten = encryptSecrets(descriptors, stored, rotated);
    expect(rewritten.password).not.toBe(stored.password);
    expect(decryptSecrets(descriptors, rewritten, SecretKeys.fromText('new key')).password).toBe(
      'hunter2',
    );
    expect(() => decryptSecrets(descriptors, rewritten, old)).toThrow(/Cannot decrypt/);
    // Already under the current key: stored as it was.
    expect(encryptSecrets(descriptors, rewritten, rotated)).toEqual(rewritten);
  });

  it('still decrypts values of the enc:v1 format (sha256 of the key text), and re-encrypts them on write', () => {
    const legacy = { url: 'u', password: encryptedV1('hunter2', sha256('the current key')) };
    expect(decryptSecrets(descriptors, legacy, key).password).toBe('hunter2');
    const rewritten = encryptSecrets(descriptors, legacy, key);
    expect(rewritten.password).toMatch(/^enc:v2:/);
    expect(decryptSecrets(descriptors, rewritten, key).password).toBe('hunter2');

    const fromPrevious = { password: encryptedV1({ n: 1 }, sha256('old key')) };
    expect(
      decryptSecrets(descriptors, fromPrevious, SecretKeys.fromText('new', ['old key'])).password,
    ).toEqual({ n: 1 });
  });

  it('redacts secret and encrypted values', () => {
    expect(redactSecrets(descriptors, { url: 'u', password: 'hunter2', port: 1 })).toEqual({
      url: 'u',
      password: '********',
      port: 1,
    });
    const stored = encryptSecrets(descriptors, { password: 'hunter2' }, key);
    expect(redactSecrets([], stored)).toEqual({ password: '********' });
    expect(redactSecrets([], { note: 'enc:not-a-secret' })).toEqual({ note: 'enc:not-a-secret' });
  });

  it('uses Security.EncryptionKey, else keeps a random key in the data directory', async () => {
    const dataDirectory = await mkdtemp(path.join(os.tmpdir(), 'trellis-data-'));
    const configured = buildConfig({
      DataDirectory: dataDirectory,
      Security: { EncryptionKey: 'k' },
    });
    const byConfigured = encryptSecrets(
      descriptors,
      { password: 'p' },
      await loadSecretKeys(configured),
    );
    expect(decryptSecrets(descriptors, byConfigured, SecretKeys.fromText('k')).password).toBe('p');

    const generated = buildConfig({ DataDirectory: dataDirectory });
    const byFile = encryptSecrets(descriptors, { password: 'f' }, await loadSecretKeys(generated));
    const file = path.join(dataDirectory, 'secret.key');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const fileKey = Buffer.from(await readFile(file, 'utf8'), 'base64');
    expect(fileKey).toHaveLength(32);
    expect(decryptSecrets(descriptors, byFile, await loadSecretKeys(generated)).password).toBe('f');
    expect(() => decryptSecrets(descriptors, byFile, SecretKeys.fromText('k'))).toThrow(
      /Cannot decrypt/,
    );
    // enc:v1 used the file's bytes as the key itself.
    const legacy = { password: encryptedV1('from-file', fileKey) };
    expect(decryptSecrets(descriptors, legacy, await loadSecretKeys(generated)).password).toBe(
      'from-file',
    );

    // Moving from the key file to a configured key: what the file encrypted still decrypts.
    const moved = await loadSecretKeys(configured);
    expect(decryptSecrets(descriptors, byFile, moved).password).toBe('f');
    expect(decryptSecrets(descriptors, legacy, moved).password).toBe('from-file');
  });

  it('reads previous keys from Security.PreviousEncryptionKeys', async () => {
    const dataDirectory = await mkdtemp(path.join(os.tmpdir(), 'trellis-data-'));
    const before = buildConfig({
      DataDirectory: dataDirectory,
      Security: { EncryptionKey: 'one' },
    });
    const stored = encryptSecrets(descriptors, { password: 'p' }, await loadSecretKeys(before));
    const after = buildConfig({
      DataDirectory: dataDirectory,
      Security: { EncryptionKey: 'two', PreviousEncryptionKeys: ['one'] },
    });
    expect(decryptSecrets(descriptors, stored, await loadSecretKeys(after)).password).toBe('p');
    const withoutPrevious = buildConfig({
      DataDirectory: dataDirectory,
      Security: { EncryptionKey: 'two' },
    });
    const keys = await loadSecretKeys(withoutPrevious);
    expect(() => decryptSecrets(descriptors, stored, keys)).toThrow(/Cannot decrypt/);
  });
});
