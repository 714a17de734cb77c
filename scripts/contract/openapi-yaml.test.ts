import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const generated = (name: string) =>
  readFileSync(fileURLToPath(new URL(`../../generated/${name}`, import.meta.url)), 'utf8');

describe('generated/openapi.yaml', () => {
  const json: unknown = JSON.parse(generated('openapi.json'));
  const yaml = generated('openapi.yaml');

  // YAML 1.1 (PyYAML, SnakeYAML, go-yaml v2) reads unquoted `2026-11-24T12:00:00Z` as a
  // timestamp, `00:00:00.01` as a base-60 number and `on` as true, where 1.2 reads strings.
  it.each(['1.1', '1.2'] as const)('reads as openapi.json under a YAML %s parser', (version) => {
    expect(parse(yaml, { version, maxAliasCount: -1 })).toEqual(json);
  });
});
