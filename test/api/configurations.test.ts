import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basicAs, startTrellis, type Trellis } from '../support/harness.js';
import { expectFailure } from './api-error.js';
import { describeAuthMatrix } from './auth-matrix.js';
import { expectRawFailure, sendRaw } from './http.js';

let trellis: Trellis;
beforeAll(async () => {
  trellis = await startTrellis();
});
afterAll(async () => {
  await trellis?.stop();
});

const unknownId = '00000000-0000-4000-8000-000000000000';

const httpConfiguration = (name: string, specifications: Record<string, unknown> = {}) => ({
  name,
  type: 'Net/Http',
  version: '1.0.0',
  specifications,
});

async function create(body: ReturnType<typeof httpConfiguration>) {
  return trellis.admin.POST('/config', { body });
}

async function listNames(): Promise<string[]> {
  return (await trellis.admin.GET('/config')).map((item) => item.name);
}

describeAuthMatrix({
  role: 'config',
  trellis: () => trellis,
  call: (client) => client.GET('/config'),
});

describe('/config', () => {
  it('creates, lists, reads, updates and deletes a configuration, with confirmations', async () => {
    const created = await trellis.admin.envelope.POST('/config', {
      body: httpConfiguration('crud-api', { baseUrl: 'https://one.test', bearerToken: 't0ken' }),
    });
    expect(created.succeeded).toBe(true);
    expect(created.messages).toEqual(['Configuration "crud-api" was created.']);
    const { id } = created.data;
    expect(created.data).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'crud-api',
    });

    const listed = (await trellis.admin.GET('/config')).find((item) => item.id === id);
    expect(listed).toEqual({
      id,
      name: 'crud-api',
      type: 'Net/Http',
      version: '1.0.0',
      modifiedTime: null,
    });

    const detail = await trellis.admin.GET('/config/{configId}', {
      params: { path: { configId: id } },
    });
    expect(detail).toEqual({
      id,
      name: 'crud-api',
      type: 'Net/Http',
      version: '1.0.0',
      specifications: { baseUrl: 'https://one.test', bearerToken: '********' },
    });

    // The secret is encrypted at rest, never stored as sent.
    const stored = await trellis.db
      .selectFrom('pluginConfiguration')
      .select('specifications')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    expect(JSON.stringify(stored.specifications)).not.toContain('t0ken');
    expect(stored.specifications['bearerToken']).toMatch(/^enc:v2:/);

    const updated = await trellis.admin.envelope.PUT('/config/{configId}', {
      params: { path: { configId: id } },
      // The redacted placeholder keeps the stored secret (while it goes where it went).
      body: httpConfiguration('crud-api-renamed', {
        baseUrl: 'https://one.test',
        bearerToken: '********',
      }),
    });
    expect(updated).toMatchObject({ data: {}, succeeded: true });
    expect(updated.messages).toEqual(['Configuration "crud-api-renamed" was updated.']);
    const after = await trellis.db
      .selectFrom('pluginConfiguration')
      .select(['specifications', 'modifiedTime', 'name'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    expect(after.specifications['bearerToken']).toBe(stored.specifications['bearerToken']);
    expect(after.name).toBe('crud-api-renamed');
    const relisted = (await trellis.admin.GET('/config')).find((item) => item.id === id);
    expect(relisted?.modifiedTime).toEqual(after.modifiedTime?.toISOString());
    expect(relisted?.modifiedTime).not.toBeNull();

    const deleted = await trellis.admin.envelope.DELETE('/config/{configId}', {
      params: { path: { configId: id } },
    });
    expect(deleted.messages).toEqual(['Configuration "crud-api-renamed" was deleted.']);
    await expectFailure(
      trellis.admin.GET('/config/{configId}', { params: { path: { configId: id } } }),
      404,
      id,
    );
  });

  it('asks for the secrets again when an update changes where they are sent, changing nothing', async () => {
    const client = trellis.client(basicAs('config'));
    const { id } = await client.POST('/config', {
      body: httpConfiguration('moving-api', {
        baseUrl: 'https://one.test/v1/',
        bearerToken: 'first-token-0123456789',
      }),
    });
    const stored = async () =>
      (
        await trellis.db
          .selectFrom('pluginConfiguration')
          .select('specifications')
          .where('id', '=', id)
          .executeTakeFirstOrThrow()
      ).specifications;
    const before = await stored();
    const update = (specifications: Record<string, unknown>) =>
      client.PUT('/config/{configId}', {
        params: { path: { configId: id } },
        body: httpConfiguration('moving-api', specifications),
      });

    for (const destination of [{ baseUrl: 'https://collector.test/' }, {}]) {
      const error = await expectFailure(
        update({ ...destination, bearerToken: '********' }),
        400,
        'body.specifications.bearerToken: this update changes baseUrl, where the stored secret is sent: send bearerToken again (or leave it out to drop it).',
      );
      expect(error.errors).toEqual([
        {
          code: 'configuration.secret_required',
          message: expect.any(String) as string,
          path: 'body.specifications.bearerToken',
        },
      ]);
      expect(await stored()).toEqual(before);
    }

    // Where it goes unchanged, the placeholder keeps it; with the secret sent again, it moves.
    await update({ baseUrl: 'https://one.test/v1/', bearerToken: '********' });
    expect((await stored())['bearerToken']).toBe(before['bearerToken']);
    await update({ baseUrl: 'https://two.test/', bearerToken: 'second-token-0123456789' });
    expect((await stored())['bearerToken']).not.toBe(before['bearerToken']);
    await client.DELETE('/config/{configId}', { params: { path: { configId: id } } });
  });

  it('lets the config role write', async () => {
    const client = trellis.client(basicAs('config'));
    const { id } = await client.POST('/config', { body: httpConfiguration('by-config-role') });
    await client.DELETE('/config/{configId}', { params: { path: { configId: id } } });
  });

  it('pages the list on request', async () => {
    for (const name of ['page-a', 'page-b', 'page-c']) await create(httpConfiguration(name));
    const page = await trellis.admin.page('/config', {
      params: { query: { page: 2, pageSize: 2 } },
    });
    expect(page.pagination).toMatchObject({ page: 2, pageSize: 2 });
    expect(page.pagination.totalCount).toBeGreaterThanOrEqual(3);
    expect(page.data.length).toBeLessThanOrEqual(2);
    const unpaged = await trellis.admin.envelope.GET('/config');
    expect(unpaged.pagination).toBeUndefined();
    await expectFailure(
      trellis.admin.GET('/config', { params: { query: { pageSize: 5000 } } }),
      400,
      'query.pageSize',
    );
  });

  it('refuses a plugin type or version that is not installed, naming it, and stores nothing', async () => {
    const before = await listNames();
    await expectFailure(
      create({ ...httpConfiguration('ghost-type'), type: 'Net/Gopher' }),
      409,
      'plugin "Net/Gopher" is not installed',
    );
    await expectFailure(
      create({ ...httpConfiguration('ghost-version'), version: '9.9.9' }),
      409,
      /"Net\/Http" 9\.9\.9 is not installed/,
    );
    expect(await listNames()).toEqual(before);
  });

  it('checks specifications against the plugin: unknown keys, wrong types, missing required', async () => {
    const before = await listNames();
    const error = await expectFailure(
      create(httpConfiguration('bad-specs', { baseUrl: 42, colour: 'blue' })),
      400,
    );
    // A built-in plugin's settings are typed in the document, so the request's validation names
    // them; a plugin installed from a package has them checked by its manifest (settings.ts).
    expect(error.messages).toEqual([
      'body.specifications.colour: is not allowed',
      'body.specifications.baseUrl: must be string or null',
    ]);
    await expectFailure(
      trellis.admin.POST('/config', {
        body: {
          name: 'pg-missing',
          type: 'Database/PostgreSql',
          version: '1.0.0',
          specifications: {},
        },
      }),
      400,
      'body.specifications.connectionString: is required',
    );
    expect(await listNames()).toEqual(before);
  });

  it('validates the body: one message per field problem', async () => {
    const error = await expectFailure(
      trellis.admin.POST('/config', {
        body: { name: 7, type: '', specifications: 'none' } as never,
      }),
      400,
    );
    expect(error.messages).toEqual(
      expect.arrayContaining([
        'body.name: must be string',
        'body.version: is required',
        'body.specifications: must be object',
      ]),
    );
  });

  it('answers 409 for a duplicate name on create and on rename, changing nothing', async () => {
    const first = await create(httpConfiguration('dup-one', { baseUrl: 'https://keep.test' }));
    await create(httpConfiguration('dup-two'));
    await expectFailure(create(httpConfiguration('dup-one')), 409, 'dup-one');
    await expectFailure(
      trellis.admin.PUT('/config/{configId}', {
        params: { path: { configId: first.id } },
        body: httpConfiguration('dup-two', { baseUrl: 'https://changed.test' }),
      }),
      409,
      'dup-two',
    );
    const detail = await trellis.admin.GET('/config/{configId}', {
      params: { path: { configId: first.id } },
    });
    expect(detail).toMatchObject({
      name: 'dup-one',
      specifications: { baseUrl: 'https://keep.test' },
    });
    expect((await listNames()).filter((name) => name === 'dup-one')).toHaveLength(1);
  });

  it('answers 400 for a malformed id and 404 for an unknown one, on every by-id operation', async () => {
    const body = httpConfiguration('whatever');
    const malformed = { params: { path: { configId: 'not-a-uuid' } } };
    await expectFailure(
      trellis.admin.GET('/config/{configId}', malformed),
      400,
      'path.configId: must match format "uuid"',
    );
    await expectFailure(
      trellis.admin.PUT('/config/{configId}', { ...malformed, body }),
      400,
      'path.configId',
    );
    await expectFailure(
      trellis.admin.DELETE('/config/{configId}', malformed),
      400,
      'path.configId',
    );
    const unknown = { params: { path: { configId: unknownId } } };
    await expectFailure(trellis.admin.GET('/config/{configId}', unknown), 404, unknownId);
    await expectFailure(
      trellis.admin.PUT('/config/{configId}', { ...unknown, body }),
      404,
      unknownId,
    );
    await expectFailure(trellis.admin.DELETE('/config/{configId}', unknown), 404, unknownId);
    expect(await listNames()).not.toContain('whatever');
  });

  it('refuses to delete a configuration a stored workflow uses (409 naming it)', async () => {
    const { id } = await create(httpConfiguration('used-by-workflow'));
    const definition = JSON.stringify({
      name: 'uses-config',
      tasks: [
        { name: 'call', type: 'used-by-workflow', parameters: { url: 'https://example.test/' } },
      ],
    });
    await trellis.admin.POST('/workflows/Add', { body: { definition } });
    await expectFailure(
      trellis.admin.DELETE('/config/{configId}', { params: { path: { configId: id } } }),
      409,
      'uses-config',
    );
    expect(await listNames()).toContain('used-by-workflow');
  });

  it('rejects malformed JSON (400), other content types (415) and oversized bodies (413), storing nothing', async () => {
    const before = await listNames();
    await expectRawFailure(
      sendRaw(trellis.baseUrl, 'POST', '/config', {
        body: '{"name": "broken",',
        contentType: 'application/json',
      }),
      400,
    );
    await expectRawFailure(
      sendRaw(trellis.baseUrl, 'POST', '/config', {
        body: 'name=plain',
        contentType: 'text/plain',
      }),
      415,
    );
    const huge = JSON.stringify(
      httpConfiguration('huge', { baseUrl: 'x'.repeat(trellis.config.Server.BodyLimitBytes) }),
    );
    await expectRawFailure(
      sendRaw(trellis.baseUrl, 'POST', '/config', { body: huge, contentType: 'application/json' }),
      413,
    );
    expect(await listNames()).toEqual(before);
  });

  it('refuses writes by another role (403) and leaves the data unchanged', async () => {
    const before = await listNames();
    await expectFailure(
      trellis.client(basicAs('workflow')).POST('/config', { body: httpConfiguration('sneaky') }),
      403,
    );
    expect(await listNames()).toEqual(before);
  });
});
