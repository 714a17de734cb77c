import { Ajv, type Options, type ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { LRUCache } from 'lru-cache';

/**
 * Where Trellis gets its Ajv instances: one shared instance for its own schemas, and the one
 * factory every other instance comes from (plugin-supplied schemas, openapi-backend's).
 */

// ajv-formats is CommonJS; under NodeNext its default import is the module object.
const addFormats = addFormatsModule as unknown as <T extends Ajv | Ajv2020>(ajv: T) => T;

const drafts = { 'draft-07': Ajv, '2020-12': Ajv2020 };

/** A new Ajv for a JSON Schema draft, with the formats of ajv-formats. */
export function createAjv(draft: 'draft-07', options: Options): Ajv;
export function createAjv(draft: '2020-12', options: Options): Ajv2020;
export function createAjv(draft: keyof typeof drafts, options: Options): Ajv | Ajv2020 {
  return addFormats(new drafts[draft](options));
}

/**
 * Validates the schemas written in this repository (configuration, workflow definitions, plugin
 * manifests, registry indexes): strict, so a mistake in a schema fails at once; every error
 * reported; defaults filled in; `verbose` so errors carry their schema for messages.
 * Compile each schema once, at module level or on first use: Ajv keeps what it compiled.
 */
export const trellisSchemas = createAjv('2020-12', {
  allErrors: true,
  useDefaults: true,
  strict: true,
  verbose: true,
});

/** Enough for every plugin version in use; the least recently used is dropped past it. */
const pluginSchemas = new LRUCache<string, ValidateFunction>({ max: 256 });

/**
 * The validator of a schema a plugin supplies (draft-07, as plugin authors write them; lenient
 * about unknown keywords; defaults filled in). Each distinct schema gets an Ajv of its own, so
 * one plugin's `$id` cannot collide with another's, and is compiled once however often a
 * package is read. Throws when the schema is not a valid JSON Schema. `verbose` gives each error
 * its schema (`parentSchema`).
 */
export function pluginSchemaValidator(
  schema: object,
  options: { verbose?: boolean } = {},
): ValidateFunction {
  const verbose = options.verbose === true;
  const key = `${verbose ? 'verbose ' : ''}${JSON.stringify(schema)}`;
  let validate = pluginSchemas.get(key);
  if (validate === undefined) {
    validate = createAjv('draft-07', {
      allErrors: true,
      useDefaults: true,
      strict: false,
      verbose,
    }).compile(schema);
    pluginSchemas.set(key, validate);
  }
  return validate;
}
