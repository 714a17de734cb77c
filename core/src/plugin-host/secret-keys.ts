import type { TrellisConfig } from '#platform/config/types.js';
import { loadSecretKeys, type SecretKeys } from './settings.js';

const keys = new WeakMap<TrellisConfig, Promise<SecretKeys>>();

/**
 * The keys secrets are encrypted with at rest (secret plugin settings, webhook triggers'
 * signing secrets), loaded once per configuration.
 */
export function secretKeys(config: TrellisConfig): Promise<SecretKeys> {
  let loaded = keys.get(config);
  if (!loaded) {
    loaded = loadSecretKeys(config);
    keys.set(config, loaded);
  }
  return loaded;
}
