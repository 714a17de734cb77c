/**
 * Writes the OpenAPI document that TypeSpec emitted as generated/openapi.json and .yaml, with
 * `unevaluatedProperties` rewritten as `additionalProperties` (why: see closed-objects.ts),
 * nullable references to scalars inlined (nullable-scalars.ts), strings and open keys saying they
 * hold no NUL (storable-text.ts), the links of `@link` put where OpenAPI reads them
 * (openapi-links.ts), and a configuration's settings typed by each built-in plugin's manifest
 * (plugin-settings.ts, before the NUL patterns, which its strings get too). The YAML reads the same under YAML 1.1 and 1.2 parsers.
 *
 * Usage: tsx scripts/contract/finalize-openapi.ts <emitted openapi.json> <output directory> <plugins folder>
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { withAdditionalProperties, type Json } from './closed-objects.js';
import { withNullableScalarsInlined } from './nullable-scalars.js';
import { withLinks } from './openapi-links.js';
import { builtInManifests, withPluginSettings } from './plugin-settings.js';
import { withStorableText } from './storable-text.js';

const [source, outputDirectory, pluginsFolder] = process.argv.slice(2);
if (!source || !outputDirectory || !pluginsFolder) {
  console.error(
    'usage: tsx scripts/contract/finalize-openapi.ts <emitted openapi.json> <output directory> <plugins folder>',
  );
  process.exit(2);
}
const emitted = withAdditionalProperties(JSON.parse(readFileSync(source, 'utf8')) as Json);
const document = withLinks(
  withStorableText(
    withNullableScalarsInlined(withPluginSettings(emitted, builtInManifests(pluginsFolder))),
  ),
) as { info: { license?: { [key: string]: Json } } };
// OpenAPI 3.1's SPDX `identifier` of the licence (spec/main.tsp names it), which TypeSpec's `@info`
// does not take; linters want it or a URL, and there is no licence text to link to.
if (document.info.license?.name === 'Proprietary') {
  document.info.license.identifier = 'LicenseRef-Proprietary';
}
writeFileSync(join(outputDirectory, 'openapi.json'), `${JSON.stringify(document, null, 2)}\n`);
// Written for YAML 1.1 parsers (PyYAML and most Java and Go ones) as well as 1.2 ones: scalars
// that 1.1 reads as something else (a timestamp, `00:00:00.01` as a base-60 number, `on` as
// true) are quoted, which 1.2 reads the same way.
writeFileSync(
  join(outputDirectory, 'openapi.yaml'),
  stringify(document, { lineWidth: 0, aliasDuplicateObjects: false, version: '1.1' }),
);
