import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { JsonSchema, PluginManifest } from '../plugin-kit/index.js';

const root = fileURLToPath(new URL('.', import.meta.url));

async function builtIns(): Promise<PluginManifest[]> {
  const folders = (await readdir(root, { withFileTypes: true })).filter((e) => e.isDirectory());
  return Promise.all(
    folders.map(
      async (folder) =>
        JSON.parse(
          await readFile(path.join(root, folder.name, 'plugin.json'), 'utf8'),
        ) as PluginManifest,
    ),
  );
}

/** Where a schema names a property without saying what it is, as `parameters.url`. */
function undescribed(schema: unknown, at: string): string[] {
  if (typeof schema !== 'object' || schema === null) return [];
  const node = schema as JsonSchema;
  const missing: string[] = [];
  for (const [name, property] of Object.entries((node.properties ?? {}) as JsonSchema)) {
    const described = typeof (property as JsonSchema).description === 'string';
    if (!described) missing.push(`${at}.${name}`);
    missing.push(...undescribed(property, `${at}.${name}`));
  }
  const children = [node.items, node.additionalProperties, ...((node.anyOf ?? []) as unknown[])];
  for (const child of children) missing.push(...undescribed(child, at));
  return missing;
}

describe('the built-in manifests', () => {
  it('declare the parameters they take and the output they return, every property described', async () => {
    const manifests = await builtIns();
    expect(manifests.length).toBeGreaterThanOrEqual(11);
    for (const manifest of manifests) {
      expect(manifest.parameters, manifest.type).toMatchObject({ type: 'object' });
      expect(manifest.output, manifest.type).toBeTypeOf('object');
      expect(
        [
          ...undescribed(manifest.parameters, 'parameters'),
          ...undescribed(manifest.output, 'output'),
        ],
        manifest.type,
      ).toEqual([]);
    }
  });
});
