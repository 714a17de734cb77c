import { mkdtemp, readFile, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildConfig } from '../config/load.js';
import type { PluginSpecificationDescriptor } from '../db/tables.js';
import {
  checkConfigurationSpecifications,
  decryptSecrets,
  encryptSecrets,
  loadEncryptionKey,
  redactSecrets,
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

describe('secrets', () => {
  const key = Buffer.alloc(32, 7);

  it('encrypts only secret values, and decrypts them back', () => {
    const stored = encryptSecrets(descriptors, { url: 'u', password: 'hunter2' }, key);
    expect(stored.url).toBe('u');
    expect(stored.password).toMatch(/^enc:v1:/);
    expect(JSON.stringify(stored)).not.toContain('hunter2');
    expect(encryptSecrets(descriptors, stored, key)).toEqual(stored);
    expect(decryptSecrets(descriptors, stored, key)).toEqual({ url: 'u', password: 'hunter2' });
  });

  it('uses a fresh nonce each time', () => {
    const a = encryptSecrets(descriptors, { password: 'same' }, key);
    const b = encryptSecrets(descriptors, { password: 'same' }, key);
    expect(a.password).not.toBe(b.password);
  });

  it('refuses to decrypt with another key', () => {
    const stored = encryptSecrets(descriptors, { password: 'hunter2' }, key);
    expect(() => decryptSecrets(descriptors, stored, Buffer.alloc(32, 8))).toThrow(
      /Cannot decrypt secret setting "password".*Security.EncryptionKey/,
    );
  });

  it('redacts secret and encrypted values', () => {
    expect(redactSecrets(descriptors, { url: 'u', password: 'hunter2', port: 1 })).toEqual({
      url: 'u',
      password: '********',
      port: 1,
    });
    const stored = encryptSecrets(descriptors, { password: 'hunter2' }, key);
    expect(redactSecrets([], stored)).toEqual({ password: '********' });
  });

  it('derives the key from Security.EncryptionKey, else keeps a random one in the data directory', async () => {
    const dataDirectory = await mkdtemp(path.join(os.tmpdir(), 'trellis-data-'));
    const configured = buildConfig({
      DataDirectory: dataDirectory,
      Security: { EncryptionKey: 'k' },
    });
    expect(await loadEncryptionKey(configured)).toEqual(await loadEncryptionKey(configured));
    const generated = buildConfig({ DataDirectory: dataDirectory });
    const first = await loadEncryptionKey(generated);
    expect(first).toHaveLength(32);
    expect(await loadEncryptionKey(generated)).toEqual(first);
    const file = path.join(dataDirectory, 'secret.key');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(Buffer.from(await readFile(file, 'utf8'), 'base64')).toEqual(first);
    expect(first).not.toEqual(await loadEncryptionKey(configured));
  });
});
