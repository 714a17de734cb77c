import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildRegistry } from '#plugin-host/registry.js';
import { writeTestPackage } from '../support/plugin-packages.js';
import { basicAs, startTrellis, type Trellis } from '../support/harness.js';
import { expectFailure } from './api-error.js';
import { describeAuthMatrix } from './auth-matrix.js';
import { expectRawFailure, sendRaw } from './http.js';

let trellis: Trellis;
let registryDirectory: string;

/** A copy of the built-in Flow/NoOp package under another type and version. */
async function packageVariant(root: string, type: string, version: string): Promise<string> {
  const folder = path.join(root, `${type.replace('/', '-')}-${version}`);
  await cp(new URL('../../plugins/flow-noop/', import.meta.url), folder, { recursive: true });
  const manifestFile = path.join(folder, 'plugin.json');
  const manifest = JSON.parse(await readFile(manifestFile, 'utf8')) as Record<string, unknown>;
  // A registry package may not run in the worker's process, as the built-in does.
  delete manifest.inProcess;
  await writeFile(manifestFile, JSON.stringify({ ...manifest, type, version }));
  return folder;
}

beforeAll(async () => {
  // A registry beside the built-ins: a newer Flow/NoOp and a plugin that is not built in.
  registryDirectory = await mkdtemp(path.join(tmpdir(), 'trellis-registry-'));
  const sources = path.join(registryDirectory, 'sources');
  await buildRegistry(path.join(registryDirectory, 'index'), [
    await packageVariant(sources, 'Flow/NoOp', '1.1.0'),
    await packageVariant(sources, 'Test/Echo', '2.0.0'),
    // A third-party manifest that declares neither parameters nor output.
    await writeTestPackage(
      { type: 'Test/Bare', version: '1.0.0' },
      'export const execute = () => ({});\n',
      sources,
    ),
    // Third-party manifests written before effects existed, and after.
    await writeTestPackage(
      { type: 'Test/Undeclared', version: '1.0.0' },
      'export const execute = () => ({});\n',
      sources,
    ),
    await writeTestPackage(
      { type: 'Test/Reader', version: '1.0.0', effects: 'reads' },
      'export const execute = () => ({});\n',
      sources,
    ),
  ]);
  trellis = await startTrellis({
    config: { Plugins: { Registry: path.join(registryDirectory, 'index') } },
  });
});
afterAll(async () => {
  await trellis?.stop();
  if (registryDirectory) await rm(registryDirectory, { recursive: true, force: true });
});

const unknownId = '00000000-0000-4000-8000-000000000000';

async function installed(type: string): Promise<string[]> {
  const plugins = await trellis.admin.GET('/plugins/{group}/{name}', {
    params: { path: { group: type.split('/')[0]!, name: type.split('/')[1]! } },
  });
  return plugins.map((plugin) => plugin.version);
}

describeAuthMatrix({
  role: 'plugins',
  trellis: () => trellis,
  call: (client) => client.GET('/plugins'),
});

describe('/plugins', () => {
  it('lists the installed built-ins with id, type, version and description', async () => {
    const plugins = await trellis.admin.GET('/plugins');
    const types = plugins.map((plugin) => plugin.type);
    expect(types).toEqual(
      expect.arrayContaining(['Net/Http', 'Storage/Local', 'Flow/NoOp', 'Data/Json']),
    );
    for (const plugin of plugins) {
      expect(Object.keys(plugin).sort()).toEqual([
        'description',
        'effects',
        'id',
        'type',
        'version',
      ]);
      expect(plugin.id).toMatch(/^[0-9a-f-]{36}$/);
    }
    const page = await trellis.admin.page('/plugins', { params: { query: { pageSize: 2 } } });
    expect(page.data).toHaveLength(2);
    expect(page.pagination).toMatchObject({ page: 1, pageSize: 2, totalCount: plugins.length });
  });

  it('shows a plugin by id with its specifications as an array of settings', async () => {
    const http = (await trellis.admin.GET('/plugins')).find(
      (plugin) => plugin.type === 'Net/Http',
    )!;
    const detail = await trellis.admin.GET('/plugins/{pluginIdOrType}', {
      params: { path: { pluginIdOrType: http.id } },
    });
    expect(detail).toMatchObject({ id: http.id, type: 'Net/Http', version: http.version });
    expect(Array.isArray((detail as { specifications: unknown }).specifications)).toBe(true);
    expect(
      (detail as { specifications: { key: string; secret: boolean }[] }).specifications,
    ).toContainEqual(expect.objectContaining({ key: 'bearerToken', secret: true }));
    await expectFailure(
      trellis.admin.GET('/plugins/{pluginIdOrType}', {
        params: { path: { pluginIdOrType: unknownId } },
      }),
      404,
      unknownId,
    );
  });

  it('shows what a plugin takes and returns: its parameters and output JSON Schemas', async () => {
    const [json] = await trellis.admin.GET('/plugins/{group}/{name}', {
      params: { path: { group: 'Data', name: 'Json' } },
    });
    expect(json).toMatchObject({
      type: 'Data/Json',
      parameters: {
        type: 'object',
        required: ['expression'],
        additionalProperties: false,
        properties: { expression: { type: 'string', description: expect.any(String) } },
      },
      output: { type: 'object', required: ['result'] },
    });
    const detail = await trellis.admin.GET('/plugins/{pluginIdOrType}', {
      params: { path: { pluginIdOrType: json!.id } },
    });
    expect(detail).toEqual(json);

    // Every built-in says both; a manifest without them is taken as "anything".
    for (const plugin of await trellis.admin.GET('/plugins')) {
      const [shown] = await trellis.admin.GET('/plugins/{group}/{name}', {
        params: { path: { group: plugin.type.split('/')[0]!, name: plugin.type.split('/')[1]! } },
      });
      expect(Object.keys(shown!.parameters).length, plugin.type).toBeGreaterThan(0);
      expect(Object.keys(shown!.output).length, plugin.type).toBeGreaterThan(0);
    }
    await trellis.admin.POST('/plugins', { body: { Type: 'Test/Bare', Version: '1.0.0' } });
    const [bare] = await trellis.admin.GET('/plugins/{group}/{name}', {
      params: { path: { group: 'Test', name: 'Bare' } },
    });
    expect(bare).toMatchObject({ type: 'Test/Bare', parameters: {}, output: {} });
  });

  it("shows what each plugin's tasks do: the built-ins' own effects, and calls for a manifest that does not say", async () => {
    const effects = Object.fromEntries(
      (await trellis.admin.GET('/plugins')).map((plugin) => [plugin.type, plugin.effects]),
    );
    expect(effects).toMatchObject({
      'Flow/NoOp': 'pure',
      'Flow/Log': 'pure',
      'Data/Json': 'pure',
      'Security/Hash': 'pure',
      'Storage/Local': 'writes',
      'Database/PostgreSql': 'writes',
      'Net/Http': 'calls',
      'Exec/Process': 'calls',
    });
    const [http] = await trellis.admin.GET('/plugins/{group}/{name}', {
      params: { path: { group: 'Net', name: 'Http' } },
    });
    expect(
      await trellis.admin.GET('/plugins/{pluginIdOrType}', {
        params: { path: { pluginIdOrType: http!.id } },
      }),
    ).toMatchObject({ type: 'Net/Http', effects: 'calls' });

    await trellis.admin.POST('/plugins', { body: { Type: 'Test/Undeclared', Version: '1.0.0' } });
    await trellis.admin.POST('/plugins', { body: { Type: 'Test/Reader', Version: '1.0.0' } });
    const tests = await trellis.admin.GET('/plugins/{pluginIdOrType}', {
      params: { path: { pluginIdOrType: 'Test' } },
    });
    expect(tests).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: 'Test/Undeclared', effects: 'calls' }),
        expect.objectContaining({ type: 'Test/Reader', effects: 'reads' }),
      ]),
    );
  });

  it('filters by group (Storage) and by exact type (URL-encoded Net%2FHttp, or /plugins/Net/Http)', async () => {
    const storage = await trellis.admin.GET('/plugins/{pluginIdOrType}', {
      params: { path: { pluginIdOrType: 'Storage' } },
    });
    expect(Array.isArray(storage)).toBe(true);
    expect((storage as { type: string }[]).map((plugin) => plugin.type)).toEqual(['Storage/Local']);

    const encoded = await sendRaw(trellis.baseUrl, 'GET', '/plugins/Net%2FHttp');
    expect(encoded.status).toBe(200);
    expect(
      (encoded.body as { data: { type: string }[] }).data.map((plugin) => plugin.type),
    ).toEqual(['Net/Http']);
    const bySegments = await trellis.admin.GET('/plugins/{group}/{name}', {
      params: { path: { group: 'Net', name: 'Http' } },
    });
    expect(bySegments.map((plugin) => plugin.type)).toEqual(['Net/Http']);
    const none = await trellis.admin.GET('/plugins/{pluginIdOrType}', {
      params: { path: { pluginIdOrType: 'Nothing' } },
    });
    expect(none).toEqual([]);
  });

  it('installs from the registry, refuses a second install (409) and an unknown package (404)', async () => {
    const installedMessage = await trellis.admin.envelope.POST('/plugins', {
      body: { Type: 'Test/Echo', Version: '2.0.0' },
    });
    expect(installedMessage).toMatchObject({ data: {}, succeeded: true });
    expect(installedMessage.messages).toEqual(['Plugin "Test/Echo" 2.0.0 was installed.']);
    expect(await installed('Test/Echo')).toEqual(['2.0.0']);

    await expectFailure(
      trellis.admin.POST('/plugins', { body: { Type: 'Test/Echo', Version: '2.0.0' } }),
      409,
      'already installed',
    );
    await expectFailure(
      trellis.admin.POST('/plugins', { body: { Type: 'Test/Missing', Version: '1.0.0' } }),
      404,
      'Test/Missing',
    );
    expect(await installed('Test/Missing')).toEqual([]);
  });

  it('updates an installed type to another version, idempotently, and refuses a type not installed (404)', async () => {
    expect(await installed('Flow/NoOp')).toEqual(['1.0.0']);
    const updated = await trellis.admin.envelope.PUT('/plugins', {
      body: { Type: 'Flow/NoOp', Version: '1.1.0' },
    });
    expect(updated.messages).toEqual(['Plugin "Flow/NoOp" was updated to 1.1.0.']);
    expect(await installed('Flow/NoOp')).toEqual(['1.1.0']);
    // PUT is idempotent: the same update again succeeds and changes nothing.
    const again = await trellis.admin.envelope.PUT('/plugins', {
      body: { Type: 'Flow/NoOp', Version: '1.1.0' },
    });
    expect(again.messages).toEqual([
      'Plugin "Flow/NoOp" is already at version 1.1.0; nothing changed.',
    ]);
    expect(await installed('Flow/NoOp')).toEqual(['1.1.0']);
    await expectFailure(
      trellis.admin.PUT('/plugins', { body: { Type: 'Nope/Nothing', Version: '1.0.0' } }),
      404,
      'Nope/Nothing',
    );
  });

  it('uninstalls with a DELETE body, refusing one in use (409 naming the user) or not installed (404)', async () => {
    await trellis.admin.POST('/config', {
      body: { name: 'hash-config', type: 'Security/Hash', version: '1.0.0', specifications: {} },
    });
    await expectFailure(
      trellis.admin.DELETE('/plugins', { body: { Type: 'Security/Hash', Version: '1.0.0' } }),
      409,
      'hash-config',
    );
    expect(await installed('Security/Hash')).toEqual(['1.0.0']);

    const removed = await trellis.admin.envelope.DELETE('/plugins', {
      body: { Type: 'Data/Base64', Version: '1.0.0' },
    });
    expect(removed.messages).toEqual(['Plugin "Data/Base64" 1.0.0 was uninstalled.']);
    expect(await installed('Data/Base64')).toEqual([]);
    await expectFailure(
      trellis.admin.DELETE('/plugins', { body: { Type: 'Data/Base64', Version: '1.0.0' } }),
      404,
    );
    // And back, from the built-in catalog.
    await trellis.admin.POST('/plugins', { body: { Type: 'Data/Base64', Version: 'latest' } });
    expect(await installed('Data/Base64')).toEqual(['1.0.0']);
  });

  it('validates bodies exactly as spelled (Type, Version), changing nothing', async () => {
    const before = await trellis.admin.GET('/plugins');
    const error = await expectFailure(
      trellis.admin.POST('/plugins', { body: { type: 'Flow/Log', version: '1.0.0' } as never }),
      400,
    );
    expect(error.messages).toEqual(
      expect.arrayContaining([
        'body.Type: is required',
        'body.Version: is required',
        'body.type: is not allowed',
      ]),
    );
    await expectRawFailure(
      sendRaw(trellis.baseUrl, 'POST', '/plugins', { body: 'Type=x', contentType: 'text/plain' }),
      415,
    );
    await expectRawFailure(
      sendRaw(trellis.baseUrl, 'DELETE', '/plugins', {
        body: '{"Type":',
        contentType: 'application/json',
      }),
      400,
    );
    expect(await trellis.admin.GET('/plugins')).toEqual(before);
  });

  it('refuses installs by another role (403), installing nothing', async () => {
    await trellis.admin.DELETE('/plugins', { body: { Type: 'Flow/Delay', Version: '1.0.0' } });
    await expectFailure(
      trellis
        .client(basicAs('workflow'))
        .POST('/plugins', { body: { Type: 'Flow/Delay', Version: '1.0.0' } }),
      403,
    );
    expect(await installed('Flow/Delay')).toEqual([]);
    await trellis
      .client(basicAs('plugins'))
      .POST('/plugins', { body: { Type: 'Flow/Delay', Version: '1.0.0' } });
    expect(await installed('Flow/Delay')).toEqual(['1.0.0']);
  });
});
