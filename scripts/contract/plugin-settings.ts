/**
 * A plugin configuration's `specifications` typed by its plugin: for each built-in plugin (its
 * manifest, plugins/<folder>/plugin.json), `ConfigurationWrite` gets an `if` its `type` is that
 * plugin's `then` its settings are the ones the manifest declares (each of its type, `null` for
 * one that may be left out, the required ones required, no other key). The server checks the
 * same against the installed plugin (core/src/plugin-host/settings.ts); with this, the document
 * says it too, so a client's validation or a fuzzer knows it without our hooks. A plugin that is
 * not built in (installed from a package) keeps free settings here: the server checks them.
 *
 * `if`/`then` and not a `oneOf` by type: the plugin types are open (packages add their own), and
 * client generators read the object as it is (they skip `if`), so generated code does not change.
 * An `if` that holds for one plugin holds for no other, so the chain is the same as one `if` per
 * plugin.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Json } from './closed-objects.js';

type JsonObject = { [key: string]: Json };

interface Setting {
  key: string;
  type: string;
  required?: boolean;
  default?: Json;
  description?: string;
}

interface Manifest {
  type: string;
  specifications?: Setting[];
}

/** The built-in manifests, in folder order (the document is the same on every run). */
export function builtInManifests(folder: string): Manifest[] {
  return readdirSync(folder, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && !entry.name.startsWith('.'))
    .map((entry) => entry.name)
    .sort()
    .map(
      (name) =>
        JSON.parse(readFileSync(path.join(folder, name, 'plugin.json'), 'utf8')) as Manifest,
    );
}

/** The settings a plugin's configuration takes, as the server checks them. */
function settingsSchema(manifest: Manifest): JsonObject {
  const settings = manifest.specifications ?? [];
  const properties: JsonObject = {};
  for (const setting of settings) {
    // Left out and `null` are the same to the server, unless the setting is required.
    const required = setting.required === true && setting.default === undefined;
    properties[setting.key] = {
      type: required ? setting.type : [setting.type, 'null'],
      ...(setting.description ? { description: setting.description } : {}),
    };
  }
  const required = settings
    .filter((setting) => setting.required === true && setting.default === undefined)
    .map((setting) => setting.key);
  return {
    type: 'object',
    description:
      settings.length > 0
        ? `The settings of \`${manifest.type}\`.`
        : `\`${manifest.type}\` takes no settings.`,
    properties,
    ...(required.length > 0 ? { required } : {}),
    additionalProperties: false,
  };
}

const typeIs = (type: string): JsonObject => ({
  properties: { type: { const: type } },
  required: ['type'],
});

/**
 * An `if` or `then` looks at one key and leaves the others to the object's own schema. JSON
 * Schema's default, said outright: Redocly's example check otherwise takes every subschema with
 * `properties` as closed (its `defaultUnevaluatedProperties: false`).
 */
const OTHER_KEYS_UNCHECKED: JsonObject = { unevaluatedProperties: true };

/** The document with `ConfigurationWrite`'s settings typed by each built-in plugin. */
export function withPluginSettings(document: Json, manifests: readonly Manifest[]): Json {
  const schemas = (document as { components?: { schemas?: JsonObject } }).components?.schemas;
  const write = schemas?.ConfigurationWrite as JsonObject | undefined;
  if (!write) throw new Error('plugin-settings: the document has no ConfigurationWrite schema');
  // One `if`/`then` per plugin, each the `else` of the one before: a chain, not an `allOf` of
  // them, which some tools read as a composition of the object itself (Redocly's example check
  // then takes `name` for an unevaluated property; openapi-typescript intersects `unknown`s).
  const chain = manifests.reduceRight<JsonObject | undefined>(
    (otherwise, manifest) => ({
      if: { ...typeIs(manifest.type), ...OTHER_KEYS_UNCHECKED },
      then: { properties: { specifications: settingsSchema(manifest) }, ...OTHER_KEYS_UNCHECKED },
      ...(otherwise ? { else: otherwise } : {}),
    }),
    undefined,
  );
  if (chain) Object.assign(write, chain);
  return document;
}
