import { createCipheriv, createDecipheriv, createHash, randomBytes, scryptSync } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import type { TrellisConfig } from '#platform/config/types.js';
import type { PluginSpecificationDescriptor } from '#store/tables.js';
import { matchesSettingType } from './package.js';

/**
 * Plugin settings ("specifications"): checking them against a plugin's descriptors, keeping
 * the ones marked `secret` encrypted at rest (AES-256-GCM) and out of logs and responses.
 *
 * Stored formats: `enc:v2:<salt>:<iv>:<tag>:<data>`, whose AES key is scrypt of the key material
 * with the salt; and the earlier `enc:v1:<iv>:<tag>:<data>`, whose key was sha256 of
 * `Security.EncryptionKey` (or the key file's bytes as they are), read but no longer written.
 */

type Descriptors = readonly PluginSpecificationDescriptor[];
type Settings = Readonly<Record<string, unknown>>;

/** What a secret looks like in a response or a log line. */
export const REDACTED = '********';

const V1_PREFIX = 'enc:v1:';
const V2_PREFIX = 'enc:v2:';
// scrypt's recommended interactive cost (16 MiB, tens of ms); each salt is derived once per process.
const SCRYPT_OPTIONS = { N: 2 ** 14, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };

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

/** A key secret settings may be encrypted with. */
export interface KeyMaterial {
  /** A configured key's text (UTF-8), or the key file's bytes. */
  material: Buffer;
  /** `enc:v1:` used this material as the AES key as it was (the key file), not its sha256. */
  rawInV1?: boolean;
}

/**
 * The keys of secret settings: the current one encrypts, the current and the previous ones
 * decrypt. Derived AES keys are kept per salt, so each costs one scrypt per process.
 */
export class SecretKeys {
  private readonly keys: readonly { material: Buffer; v1: Buffer }[];
  private readonly derived = new Map<string, Buffer>();
  private writeSalt: Buffer | undefined;

  /** The first key encrypts; every key decrypts. */
  constructor(keys: readonly [KeyMaterial, ...KeyMaterial[]]) {
    this.keys = keys.map(({ material, rawInV1 }) => ({
      material,
      v1: rawInV1 ? material : createHash('sha256').update(material).digest(),
    }));
  }

  /** Keys given as text, e.g. `Security.EncryptionKey` and `Security.PreviousEncryptionKeys`. */
  static fromText(current: string, previous: readonly string[] = []): SecretKeys {
    return new SecretKeys([current, ...previous].map(textKey) as [KeyMaterial, ...KeyMaterial[]]);
  }

  encrypt(value: unknown): string {
    this.writeSalt ??= randomBytes(16);
    const key = this.derive(0, this.writeSalt);
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    const data = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()]);
    const parts = [this.writeSalt, iv, cipher.getAuthTag(), data];
    return V2_PREFIX + parts.map((part) => part.toString('base64url')).join(':');
  }

  /** The value of a stored secret, and whether the current key encrypted it in today's format. */
  decrypt(name: string, stored: string): { value: unknown; current: boolean } {
    const v2 = stored.startsWith(V2_PREFIX);
    const parts = stored
      .slice(v2 ? V2_PREFIX.length : V1_PREFIX.length)
      .split(':')
      .map((part) => Buffer.from(part, 'base64url'));
    if ((v2 || stored.startsWith(V1_PREFIX)) && parts.length === (v2 ? 4 : 3)) {
      const [salt, iv, tag, data] = v2 ? parts : [undefined, ...parts];
      for (const [index, key] of this.keys.entries()) {
        const aesKey = salt ? this.derive(index, salt) : key.v1;
        const plain = openSealed(aesKey, iv!, tag!, data!);
        if (plain !== undefined) {
          return { value: JSON.parse(plain) as unknown, current: v2 && index === 0 };
        }
      }
    }
    throw new Error(
      `Cannot decrypt secret setting "${name}": it was encrypted with another key ` +
        '(check Security.EncryptionKey and Security.PreviousEncryptionKeys, or <DataDirectory>/secret.key)',
    );
  }

  private derive(index: number, salt: Buffer): Buffer {
    const id = `${index}:${salt.toString('base64url')}`;
    let key = this.derived.get(id);
    if (!key) {
      key = scryptSync(this.keys[index]!.material, salt, 32, SCRYPT_OPTIONS);
      this.derived.set(id, key);
    }
    return key;
  }
}

function openSealed(key: Buffer, iv: Buffer, tag: Buffer, data: Buffer): string | undefined {
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, iv);
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(data), decipher.final()]).toString('utf8');
  } catch {
    return undefined;
  }
}

/**
 * The keys of secret settings: `Security.EncryptionKey` when set, otherwise a random key kept in
 * `<DataDirectory>/secret.key` (created on first use), then `Security.PreviousEncryptionKeys` for
 * values written before a rotation. With a configured key, a key file left in the data directory
 * still decrypts what it encrypted. Clusters whose processes do not share a data directory must
 * set `Security.EncryptionKey`.
 */
export async function loadSecretKeys(config: TrellisConfig): Promise<SecretKeys> {
  const previous = config.Security.PreviousEncryptionKeys.map(textKey);
  const file = path.join(config.DataDirectory, 'secret.key');
  if (config.Security.EncryptionKey) {
    const leftFile = await readKeyFile(file).catch(() => undefined);
    return new SecretKeys([
      textKey(config.Security.EncryptionKey),
      ...previous,
      ...(leftFile ? [{ material: leftFile, rawInV1: true }] : []),
    ]);
  }
  await mkdir(config.DataDirectory, { recursive: true });
  try {
    await writeFile(file, randomBytes(32).toString('base64'), { flag: 'wx', mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  return new SecretKeys([{ material: await readKeyFile(file), rawInV1: true }, ...previous]);
}

function textKey(text: string): KeyMaterial {
  return { material: Buffer.from(text, 'utf8') };
}

async function readKeyFile(file: string): Promise<Buffer> {
  const key = Buffer.from((await readFile(file, 'utf8')).trim(), 'base64');
  if (key.length !== 32) throw new Error(`${file} does not hold a 32-byte base64 key`);
  return key;
}

/** Whether a stored value is an encrypted secret (`enc:v2:...`, or the earlier `enc:v1:...`). */
export function isEncrypted(value: unknown): value is string {
  return typeof value === 'string' && (value.startsWith(V2_PREFIX) || value.startsWith(V1_PREFIX));
}

/**
 * A copy of the settings with every secret value encrypted with the current key. A value the
 * current key encrypted stays as stored; one encrypted with a previous key, or in the earlier
 * format, is encrypted again (this is how a key rotation reaches stored configurations).
 */
export function encryptSecrets(
  descriptors: Descriptors,
  specifications: Settings,
  keys: SecretKeys,
): Record<string, unknown> {
  const result = { ...specifications };
  for (const [name, value] of Object.entries(result)) {
    if (isEncrypted(value)) {
      const opened = keys.decrypt(name, value);
      if (!opened.current) result[name] = keys.encrypt(opened.value);
    }
  }
  for (const descriptor of descriptors) {
    const value = result[descriptor.key];
    if (descriptor.secret && value !== undefined && value !== null && !isEncrypted(value)) {
      result[descriptor.key] = keys.encrypt(value);
    }
  }
  return result;
}

/**
 * A copy of the settings with every encrypted value decrypted. Any `enc:` value is
 * decrypted, not only those now marked secret, so a plugin update that drops the flag still
 * gets plain values.
 */
export function decryptSecrets(
  _descriptors: Descriptors,
  specifications: Settings,
  keys: SecretKeys,
): Record<string, unknown> {
  const result = { ...specifications };
  for (const [name, value] of Object.entries(result)) {
    if (isEncrypted(value)) result[name] = keys.decrypt(name, value).value;
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

/**
 * The settings marked `destination` (where the plugin sends its secrets) whose value differs
 * between `before` and `after`; absent and null are the same.
 */
export function changedDestinations(
  descriptors: Descriptors,
  before: Settings,
  after: Settings,
): string[] {
  return descriptors
    .filter(
      ({ key, destination }) =>
        destination && !isDeepStrictEqual(before[key] ?? null, after[key] ?? null),
    )
    .map(({ key }) => key);
}
