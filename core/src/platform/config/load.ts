import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { cidrProblems } from './cidr.js';
import { isHashed } from '../security/password.js';
import { apiKeyCallerStart } from '../security/api-key-secret.js';
import { trellisSchemas } from '#definition/validation/ajv.js';
import { canonicalizeKeys } from '#definition/validation/canonical-keys.js';
import {
  describeProblems,
  describeValidationErrors,
  type MessageStyle,
} from '#definition/validation/describe.js';
import { readEnvOverrides } from './env.js';
import { groupMemberPrefix, tokenNamePrefix } from './token-names.js';
import { configSchema, type ValidatedConfig } from './schema.js';
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

const validate = trellisSchemas.compile<ValidatedConfig>(configSchema);

/** `Server.Port: must be integer`, `Database.Url: must be a postgres:// URL` (its description). */
const messageStyle: MessageStyle = {
  values: 'plain',
  unknownKey: 'unknown key',
  patternDescriptions: true,
};

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
  return finish(merge(canonical(file), overrides), cwd);
}

/** Defaults, validation and freezing without reading files or env: for tests. */
export function buildConfig(
  partial: DeepPartial<TrellisConfig> = {},
  options: { cwd?: string } = {},
): TrellisConfig {
  return finish(structuredClone(partial), options.cwd ?? process.cwd());
}

/** A copy safe to print or log: passwords, secrets, keys and the database password masked. */
export function redactConfig(config: TrellisConfig): TrellisConfig {
  const copy = structuredClone<TrellisConfig>(config);
  const mask = '***';
  for (const user of copy.Security.Basic.Users) user.Password = mask;
  if (copy.Security.Bearer.Secret) copy.Security.Bearer.Secret = mask;
  if (copy.Security.EncryptionKey) copy.Security.EncryptionKey = mask;
  if (copy.Temporal.ApiKey) copy.Temporal.ApiKey = mask;
  copy.Security.PreviousEncryptionKeys = copy.Security.PreviousEncryptionKeys.map(() => mask);
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
  const candidate = canonical(raw);
  if (!validate(candidate)) {
    throw new ConfigError(describeValidationErrors(validate.errors, messageStyle));
  }
  const semantic = checkSemantics(candidate);
  if (semantic.length > 0) throw new ConfigError(semantic);

  const dataDirectory = path.resolve(cwd, candidate.DataDirectory);
  const storageRoot = candidate.Plugins.StorageRoot ?? path.join(dataDirectory, 'storage');
  const cacheDirectory =
    candidate.Plugins.CacheDirectory ?? path.join(dataDirectory, 'plugin-cache');
  const config: TrellisConfig = {
    ...candidate,
    DataDirectory: dataDirectory,
    Plugins: {
      ...candidate.Plugins,
      StorageRoot: path.resolve(cwd, storageRoot),
      CacheDirectory: path.resolve(cwd, cacheDirectory),
    },
    Temporal: {
      ...candidate.Temporal,
      Tls: Object.fromEntries(
        Object.entries(candidate.Temporal.Tls).map(([key, value]) => [
          key,
          key.endsWith('File') && typeof value === 'string' ? path.resolve(cwd, value) : value,
        ]),
      ),
    },
  };
  return deepFreeze(config);
}

/** The configuration with its keys in the schema's spelling (`server.port` → `Server.Port`). */
function canonical(raw: Record<string, unknown>): Record<string, unknown> {
  const { value, problems } = canonicalizeKeys(raw, configSchema);
  if (problems.length > 0) throw new ConfigError(describeProblems(problems, messageStyle));
  return value as Record<string, unknown>;
}

/** Rules JSON Schema cannot say clearly. */
function checkSemantics(config: ValidatedConfig): string[] {
  const problems: string[] = [];
  const { Basic, Bearer, Oidc } = config.Security;
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
  if (Bearer.UsernamePrefix !== undefined && Bearer.Issuer === undefined) {
    problems.push(
      'Security.Bearer.UsernamePrefix: requires Issuer (else the subjects of every issuer the key accepts would share its names)',
    );
  }
  const { UsernamePrefix } = Bearer;
  if (
    UsernamePrefix !== undefined &&
    (apiKeyCallerStart.startsWith(UsernamePrefix) || UsernamePrefix.startsWith(apiKeyCallerStart))
  ) {
    problems.push(
      `Security.Bearer.UsernamePrefix: "${UsernamePrefix}" would give tokens names of the form API keys act under (${apiKeyCallerStart}<project>/<key>); choose another prefix`,
    );
  }
  if (Oidc.Enabled && (Oidc.Issuer === undefined || Oidc.ClientId === undefined)) {
    problems.push('Security.Oidc: Enabled requires Issuer and ClientId');
  }
  if (Basic.Enabled) {
    // A token's name is its prefix and subject (bearer.ts), a group's member name `group:<name>`:
    // a Basic name of either form could be taken for one.
    const tokenNames = [
      ...(Bearer.Enabled
        ? [Bearer.UsernamePrefix ?? (Bearer.Issuer ? `${Bearer.Issuer}#` : null)]
        : []),
      ...(Oidc.Enabled && Oidc.Issuer ? [tokenNamePrefix(Oidc.Issuer, Bearer)] : []),
    ];
    Basic.Users.forEach((user, index) => {
      const at = `Security.Basic.Users[${index}].Name`;
      const prefix = tokenNames.find((prefix) =>
        prefix === null ? user.Name.includes('#') : user.Name.startsWith(prefix),
      );
      if (prefix !== undefined) {
        problems.push(
          `${at}: "${user.Name}" has the form of a Bearer token's name (${prefix ?? '<issuer>#'}<subject>); rename the user`,
        );
      }
      if (Oidc.Enabled && user.Name.startsWith(groupMemberPrefix)) {
        problems.push(
          `${at}: "${user.Name}" has the form of a group's member name (${groupMemberPrefix}<group>); rename the user`,
        );
      }
    });
  }
  const { ClientCertFile, ClientKeyFile } = config.Temporal.Tls;
  if ((ClientCertFile === undefined) !== (ClientKeyFile === undefined)) {
    problems.push(
      'Temporal.Tls: ClientCertFile and ClientKeyFile go together (mutual TLS needs both)',
    );
  }
  if (config.Temporal.Tls.Enabled === false && Object.keys(config.Temporal.Tls).length > 1) {
    problems.push('Temporal.Tls: Enabled is false, so its other settings would be ignored');
  }
  const { AllowCidrs, DenyCidrs } = config.Plugins.Network;
  problems.push(...cidrProblems('Server.TrustedProxies', config.Server.TrustedProxies));
  problems.push(...cidrProblems('Plugins.Network.AllowCidrs', AllowCidrs));
  problems.push(...cidrProblems('Plugins.Network.DenyCidrs', DenyCidrs));
  return problems;
}

/**
 * File values overlaid with env values, both spelled canonically: objects merge, anything else
 * replaces, undefined unsets.
 */
function merge(base: Record<string, unknown>, overlay: Record<string, unknown>) {
  const result: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(overlay)) {
    const current = result[key];
    delete result[key];
    if (value === undefined) continue;
    result[key] = isPlainObject(value) && isPlainObject(current) ? merge(current, value) : value;
  }
  return result;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const item of Object.values(value)) deepFreeze(item);
  }
  return value;
}
