import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { TrellisConfig } from '../config/types.js';
import type { PluginSpecificationDescriptor } from '../db/tables.js';
import { matchesSettingType } from './package.js';

/**
 * Plugin settings ("specifications"): checking them against a plugin's descriptors, keeping
 * the ones marked `secret` encrypted at rest (AES-256-GCM) and out of logs and responses.
 */

type Descriptors = readonly PluginSpecificationDescriptor[];
type Settings = Readonly<Record<string, unknown>>;

/** What a secret looks like in a response or a log line. */
export const REDACTED = '********';

const ENCRYPTED_PREFIX = 'enc:v1:';

/**
 * One message per problem: a required setting missing, a key the plugin does not declare, or
 * a value of the wrong type. Accepts the descriptors or anything carrying them (a plugin row).
 */
export function checkConfigurationSpecifications(
  plugin: Descriptors | { specifications: Descriptors },
  specifications: Settings,
): string[] {
  const descriptors = 'specifications' in plugin ? plugin.specifications : plugin;
  const known = new Map(descriptors.map((descriptor) => [descriptor.key, descriptor]));
  const problems: string[] = [];
  for (const descriptor of descriptors) {
    const value = specifications[descriptor.key];
    if (value === undefined || value === null) {
      if (descriptor.required && descriptor.default === undefined) {
        problems.push(`specification "${descriptor.key}" is required (${describe(descriptor)})`);
      }
    } else if (!matchesSettingType(descriptor.type, value) && !isEncrypted(value)) {
      problems.push(`specification "${descriptor.key}" must be ${article(descriptor.type)}`);
    }
  }
  for (const key of Object.keys(specifications)) {
    if (!known.has(key)) {
      const allowed = [...known.keys()];
      problems.push(
        `specification "${key}" is not a setting of this plugin` +
          (allowed.length > 0 ? ` (settings: ${allowed.join(', ')})` : ' (it takes no settings)'),
      );
    }
  }
  return problems;
}

function describe(descriptor: PluginSpecificationDescriptor): string {
  return descriptor.description ? `${descriptor.type}: ${descriptor.description}` : descriptor.type;
}

function article(type: string): string {
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

/**
 * The 32-byte key encrypting secret settings: sha256 of `Security.EncryptionKey` when set,
 * otherwise a random key kept in `<DataDirectory>/secret.key` (created on first use). Clusters
 * whose processes do not share a data directory must set `Security.EncryptionKey`.
 */
export async function loadEncryptionKey(config: TrellisConfig): Promise<Buffer> {
  if (config.Security.EncryptionKey) {
    return createHash('sha256').update(config.Security.EncryptionKey, 'utf8').digest();
  }
  const file = path.join(config.DataDirectory, 'secret.key');
  await mkdir(config.DataDirectory, { recursive: true });
  try {
    await writeFile(file, randomBytes(32).toString('base64'), { flag: 'wx', mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const key = Buffer.from((await readFile(file, 'utf8')).trim(), 'base64');
  if (key.length !== 32) throw new Error(`${file} does not hold a 32-byte base64 key`);
  return key;
}

/** Whether a stored value is an encrypted secret (`enc:v1:...`). */
export function isEncrypted(value: unknown): value is string {
  return typeof value === 'string' && value.startsWith(ENCRYPTED_PREFIX);
}

/** A copy of the settings with every secret value encrypted (values already encrypted stay). */
export function encryptSecrets(
  descriptors: Descriptors,
  specifications: Settings,
  key: Buffer,
): Record<string, unknown> {
  const result = { ...specifications };
  for (const descriptor of descriptors) {
    const value = result[descriptor.key];
    if (descriptor.secret && value !== undefined && value !== null && !isEncrypted(value)) {
      result[descriptor.key] = encryptValue(value, key);
    }
  }
  return result;
}

/**
 * A copy of the settings with every encrypted value decrypted. Any `enc:v1:` value is
 * decrypted, not only those now marked secret, so a plugin update that drops the flag still
 * gets plain values.
 */
export function decryptSecrets(
  _descriptors: Descriptors,
  specifications: Settings,
  key: Buffer,
): Record<string, unknown> {
  const result = { ...specifications };
  for (const [name, value] of Object.entries(result)) {
    if (isEncrypted(value)) result[name] = decryptValue(name, value, key);
  }
  return result;
}

/** A copy of the settings with secret (and encrypted) values replaced by `"********"`. */
export function redactSecrets(
  descriptors: Descriptors,
  specifications: Settings,
): Record<string, unknown> {
  const secret = new Set(descriptors.filter((d) => d.secret).map((d) => d.key));
  return Object.fromEntries(
    Object.entries(specifications).map(([name, value]) => [
      name,
      (secret.has(name) && value !== undefined && value !== null) || isEncrypted(value)
        ? REDACTED
        : value,
    ]),
  );
}

function encryptValue(value: unknown, key: Buffer): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const data = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()]);
  const parts = [iv, cipher.getAuthTag(), data].map((part) => part.toString('base64url'));
  return ENCRYPTED_PREFIX + parts.join(':');
}

function decryptValue(name: string, stored: string, key: Buffer): unknown {
  const [iv, tag, data] = stored
    .slice(ENCRYPTED_PREFIX.length)
    .split(':')
    .map((part) => Buffer.from(part, 'base64url'));
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, iv!);
    decipher.setAuthTag(tag!);
    const plain = Buffer.concat([decipher.update(data!), decipher.final()]).toString('utf8');
    return JSON.parse(plain) as unknown;
  } catch {
    throw new Error(
      `Cannot decrypt secret setting "${name}": it was encrypted with another key ` +
        '(check Security.EncryptionKey, or <DataDirectory>/secret.key)',
    );
  }
}
