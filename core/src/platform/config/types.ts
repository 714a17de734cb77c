import type { Static } from 'typebox';
import type { basicUserSchema, configSchema, roles } from './schema.js';

/**
 * The parsed, validated, frozen configuration, as `schema.ts` describes it, with
 * `Plugins.StorageRoot` and `Plugins.CacheDirectory` always set (derived from `DataDirectory`
 * when not given). Built once at
 * boot by `loadConfig()`; tests build it with `buildConfig(partial)`. Nothing else reads
 * `process.env`.
 */
export type TrellisConfig = Static<typeof configSchema> & {
  Plugins: { StorageRoot: string; CacheDirectory: string };
};

export type Role = (typeof roles)[number];

export type BasicUser = Static<typeof basicUserSchema>;
