import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv, type ErrorObject, type SchemaObject } from 'ajv';
import { isHashed } from '../security/password.js';
import { readEnvOverrides } from './env.js';
import { configSchema, findProperty } from './schema.js';
import type { TrellisConfig } from './types.js';

export type DeepPartial<T> = T extends (infer U)[]
  ? DeepPartial<U>[]
  : T extends object
    ? { [K in keyof T]?: DeepPartial<T[K]> }
    : T;

/** The configuration is invalid; `problems` name each bad key (`Server.Port: must be integer`). */
export class ConfigError extends Error {
  readonly problems: string[];

  constructor(problems: string | string[]) {
    const list = Array.isArray(problems) ? problems : [problems];
    super(list.join('; '));
    this.name = 'ConfigError';
    this.problems = list;
  }
}

export interface LoadConfigOptions {
  /** Defaults to `process.env`. */
  env?: Record<string, string | undefined>;
  /** Relative paths (config file, data directory) resolve against it; defaults to `process.cwd()`. */
  cwd?: string;
}

// `verbose` gives errors their schema, whose `description` words pattern errors for people.
const ajv = new Ajv({ allErrors: true, useDefaults: true, strict: true, verbose: true });
const validate = ajv.compile(configSchema);

/**
 * Reads the configuration file (`TRELLIS_CONFIG`, else `trellis.config.json` in `cwd` when
 * present), applies `TRELLIS__Section__Key` env overrides, then defaults and validation.
 */
export function loadConfig(options: LoadConfigOptions = {}): TrellisConfig {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const file = readConfigFile(env, cwd);
  const { overrides, problems } = readEnvOverrides(env);
  if (problems.length > 0) throw new ConfigError(problems);
  return finish(merge(file, overrides), cwd);
}

/** Defaults, validation and freezing without reading files or env: for tests. */
export function buildConfig(
  partial: DeepPartial<TrellisConfig> = {},
  options: { cwd?: string } = {},
): TrellisConfig {
  return finish(structuredClone(partial) as Record<string, unknown>, options.cwd ?? process.cwd());
}

/** A copy safe to print or log: passwords, secrets, keys and the database password masked. */
export function redactConfig(config: TrellisConfig): TrellisConfig {
  const copy = structuredClone(config) as TrellisConfig;
  const mask = '***';
  for (const user of copy.Security.Basic.Users) user.Password = mask;
  if (copy.Security.Bearer.Secret) copy.Security.Bearer.Secret = mask;
  if (copy.Security.EncryptionKey) copy.Security.EncryptionKey = mask;
  if (copy.Database.Url) {
    try {
      const url = new URL(copy.Database.Url);
      if (url.password) url.password = mask;
      copy.Database.Url = url.toString();
    } catch {
      copy.Database.Url = mask;
    }
  }
  return copy;
}

function readConfigFile(env: Record<string, string | undefined>, cwd: string) {
  const explicit = env.TRELLIS_CONFIG;
  const file = path.resolve(cwd, explicit || 'trellis.config.json');
  if (!existsSync(file)) {
    if (explicit) throw new ConfigError(`TRELLIS_CONFIG: file not found: ${file}`);
    return {};
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new ConfigError(`${file}: not valid JSON (${(error as Error).message})`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ConfigError(`${file}: must hold a JSON object`);
  }
  return parsed as Record<string, unknown>;
}

function finish(raw: Record<string, unknown>, cwd: string): TrellisConfig {
  const problems: string[] = [];
  const candidate = canonicalizeKeys(raw, configSchema, [], problems);
  if (problems.length > 0) throw new ConfigError(problems);

  if (!validate(candidate)) {
    throw new ConfigError((validate.errors ?? []).map(describeAjvError));
  }
  const config = candidate as TrellisConfig;
  const semantic = checkSemantics(config);
  if (semantic.length > 0) throw new ConfigError(semantic);

  config.DataDirectory = path.resolve(cwd, config.DataDirectory);
  config.Plugins.StorageRoot = path.resolve(
    cwd,
    config.Plugins.StorageRoot ?? path.join(config.DataDirectory, 'storage'),
  );
  return deepFreeze(config);
}

/** Rules JSON Schema cannot say clearly. */
function checkSemantics(config: TrellisConfig): string[] {
  const problems: string[] = [];
  const { Basic, Bearer } = config.Security;
  const seen = new Set<string>();
  Basic.Users.forEach((user, index) => {
    const at = `Security.Basic.Users[${index}]`;
    if (seen.has(user.Name)) problems.push(`${at}.Name: duplicate user "${user.Name}"`);
    seen.add(user.Name);
    if (user.Password.startsWith('scrypt$') && !isHashed(user.Password)) {
      problems.push(`${at}.Password: malformed scrypt hash (use npm run hash-password)`);
    }
  });
  if (Bearer.Enabled && !Bearer.Secret && !Bearer.JwksUri) {
    problems.push('Security.Bearer: Enabled requires Secret or JwksUri');
  }
  return problems;
}

/**
 * Renames keys to the schema's spelling (`server.port` → `Server.Port`) and clones, so the
 * file and env may use any case. Unknown keys are left for Ajv to report.
 */
function canonicalizeKeys(
  value: unknown,
  schema: SchemaObject,
  at: (string | number)[],
  problems: string[],
): unknown {
  if (Array.isArray(value)) {
    const items = schema.items as SchemaObject | undefined;
    return value.map((item, index) =>
      items ? canonicalizeKeys(item, items, [...at, index], problems) : item,
    );
  }
  if (typeof value !== 'object' || value === null || !schema.properties) return value;
  const result: Record<string, unknown> = {};
  const spelledAs = new Map<string, string>();
  for (const [key, item] of Object.entries(value)) {
    if (item === undefined) continue;
    const property = findProperty(schema, key);
    const name = property?.name ?? key;
    const previous = spelledAs.get(name);
    if (previous !== undefined) {
      problems.push(`${formatPath([...at, name])}: given twice (as "${previous}" and "${key}")`);
    }
    spelledAs.set(name, key);
    result[name] = property
      ? canonicalizeKeys(item, property.schema, [...at, name], problems)
      : structuredClone(item);
  }
  return result;
}

/** File values overlaid with env values: objects merge, anything else replaces, undefined unsets. */
function merge(base: Record<string, unknown>, overlay: Record<string, unknown>) {
  const result: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(overlay)) {
    const previous = findKey(result, key);
    if (previous !== undefined) delete result[previous];
    const current = previous === undefined ? undefined : base[previous];
    if (value === undefined) continue;
    result[key] = isPlainObject(value) && isPlainObject(current) ? merge(current, value) : value;
  }
  return result;
}

function findKey(object: Record<string, unknown>, key: string): string | undefined {
  return Object.keys(object).find((candidate) => candidate.toLowerCase() === key.toLowerCase());
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describeAjvError(error: ErrorObject): string {
  const at = error.instancePath
    .split('/')
    .slice(1)
    .map((segment) => (/^\d+$/.test(segment) ? Number(segment) : segment));
  switch (error.keyword) {
    case 'additionalProperties':
      return `${formatPath([...at, String(error.params.additionalProperty)])}: unknown key`;
    case 'required':
      return `${formatPath([...at, String(error.params.missingProperty)])}: is required`;
    case 'pattern':
      return `${formatPath(at)}: must be ${error.parentSchema?.description ?? `like ${error.params.pattern}`}`;
    case 'enum':
      return `${formatPath(at)}: must be one of ${(error.params.allowedValues as unknown[]).join(', ')}`;
    default:
      return `${formatPath(at)}: ${error.message ?? 'is invalid'}`;
  }
}

function formatPath(segments: (string | number)[]): string {
  const text = segments
    .map((segment) => (typeof segment === 'number' ? `[${segment}]` : `.${segment}`))
    .join('')
    .replace(/^\./, '');
  return text || '(root)';
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const item of Object.values(value)) deepFreeze(item);
  }
  return value;
}
