import type { SchemaObject } from 'ajv';

/**
 * JSON Schema of the configuration (DESIGN.md §3), with the defaults Ajv fills in. It mirrors
 * `TrellisConfig` in `types.ts`; the unit tests check that an empty input yields a complete config.
 * Defaults that depend on other values (`Plugins.StorageRoot`) are derived in `load.ts`.
 */

const port = { type: 'integer', minimum: 0, maximum: 65535 } as const;
const nonEmptyString = { type: 'string', minLength: 1 } as const;

/** Every role a user or token may hold (DESIGN.md §5). */
export const roles = ['admin', 'config', 'plugins', 'workflow'] as const;

export const logLevels = ['trace', 'debug', 'info', 'warn', 'error', 'silent'] as const;

const basicUser = {
  type: 'object',
  additionalProperties: false,
  required: ['Name', 'Password', 'Roles'],
  properties: {
    Name: nonEmptyString,
    Password: nonEmptyString,
    Roles: {
      type: 'array',
      minItems: 1,
      uniqueItems: true,
      items: { type: 'string', enum: roles },
    },
  },
} as const;

export const configSchema: SchemaObject = {
  type: 'object',
  additionalProperties: false,
  properties: {
    Server: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        Port: { ...port, default: 6262 },
        // Loopback unless configured: an unconfigured laptop install is not exposed to the network.
        Host: { ...nonEmptyString, default: '127.0.0.1' },
        BodyLimitBytes: { type: 'integer', minimum: 1, default: 1_048_576 },
      },
    },
    DataDirectory: { ...nonEmptyString, default: '.trellis' },
    HealthCheck: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: { Enabled: { type: 'boolean', default: false } },
    },
    Database: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        Url: { type: 'string', pattern: '^postgres(ql)?://', description: 'a postgres:// URL' },
        PoolSize: { type: 'integer', minimum: 1, maximum: 1000, default: 10 },
      },
    },
    Temporal: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        Address: {
          type: 'string',
          pattern: '^(\\[[0-9a-fA-F:.]+\\]|[^\\s:/\\[\\]]+):\\d{1,5}$',
          description: 'host:port',
        },
        Namespace: { ...nonEmptyString, default: 'default' },
        TaskQueue: { ...nonEmptyString, default: 'trellis' },
        Port: { ...port, default: 7233 },
        UiPort: { ...port, default: 8233 },
      },
    },
    Security: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        Basic: {
          type: 'object',
          additionalProperties: false,
          default: {},
          properties: {
            Enabled: { type: 'boolean', default: true },
            Users: { type: 'array', items: basicUser, default: [] },
          },
        },
        Bearer: {
          type: 'object',
          additionalProperties: false,
          default: {},
          properties: {
            Enabled: { type: 'boolean', default: false },
            Issuer: nonEmptyString,
            Audience: nonEmptyString,
            Secret: nonEmptyString,
            JwksUri: { type: 'string', pattern: '^https?://', description: 'an http(s) URL' },
            RolesClaim: { ...nonEmptyString, default: 'roles' },
          },
        },
        EncryptionKey: nonEmptyString,
      },
    },
    Plugins: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        InstallBuiltIns: { type: 'boolean', default: true },
        Registry: nonEmptyString,
        AllowProcessExecution: { type: 'boolean', default: false },
        StorageRoot: nonEmptyString,
        MaxOutputBytes: { type: 'integer', minimum: 1, default: 2 * 1024 * 1024 },
      },
    },
    Logging: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: { Level: { type: 'string', enum: logLevels, default: 'info' } },
    },
  },
};

/** The schema of `key` under an object schema, matching the key case-insensitively. */
export function findProperty(
  schema: SchemaObject,
  key: string,
): { name: string; schema: SchemaObject } | undefined {
  const properties = (schema.properties ?? {}) as Record<string, SchemaObject>;
  const lower = key.toLowerCase();
  const name = Object.keys(properties).find((candidate) => candidate.toLowerCase() === lower);
  return name === undefined ? undefined : { name, schema: properties[name]! };
}
