import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startTrellis, type Trellis } from '../support/harness.js';
import { expectFailure } from './api-error.js';
import { simpleDefinition } from './definitions.js';

const running: Trellis[] = [];
let dataDirectory: string | undefined;
afterAll(async () => {
  for (const trellis of running) await trellis.stop();
  if (dataDirectory) await rm(dataDirectory, { recursive: true, force: true });
});

async function start(): Promise<Trellis> {
  const trellis = await startTrellis({ database: 'pglite', dataDirectory });
  running.push(trellis);
  return trellis;
}

describe('embedded PGlite', () => {
  it(
    'serves the API with no PostgreSQL installed, and keeps every change across a restart',
    { timeout: 240_000 },
    async () => {
      dataDirectory = await mkdtemp(path.join(tmpdir(), 'trellis-pglite-'));
      const first = await start();
      expect(first.databaseUrl).toBeUndefined();

      const config = await first.admin.POST('/config', {
        body: {
          name: 'kept-config',
          type: 'Net/Http',
          version: '1.0.0',
          specifications: { bearerToken: 'sekret' },
        },
      });
      const workflow = await first.admin.POST('/workflows/Add', {
        body: { definition: simpleDefinition('kept-workflow') },
      });
      const { triggerId } = await first.admin.POST('/workflows/{workflowId}/triggers', {
        params: { path: { workflowId: workflow.id } },
        body: {
          workflowId: workflow.id,
          type: 'Manual',
          status: 'DeActive',
          properties: { owner: 'ops' },
        },
      });
      // Concurrent requests share the embedded database's single connection.
      await Promise.all(
        ['a', 'b', 'c', 'd'].map((suffix) =>
          first.admin.POST('/workflows', {
            body: { definition: simpleDefinition(`parallel-${suffix}`) },
          }),
        ),
      );
      await expectFailure(
        first.admin.POST('/workflows/Add', {
          body: { definition: simpleDefinition('kept-workflow') },
        }),
        409,
      );
      await first.stop();
      running.length = 0;

      const second = await start();
      expect(
        await second.admin.GET('/config/{configId}', { params: { path: { configId: config.id } } }),
      ).toMatchObject({
        name: 'kept-config',
        specifications: { bearerToken: '********' },
      });
      const detail = await second.admin.GET('/workflows/{workflowId}', {
        params: { path: { workflowId: workflow.id } },
      });
      expect(detail.workflow).toBe(simpleDefinition('kept-workflow'));
      expect((await second.admin.GET('/workflows')).map((w) => w.name).sort()).toEqual([
        'kept-workflow',
        'parallel-a',
        'parallel-b',
        'parallel-c',
        'parallel-d',
      ]);
      expect(
        await second.admin.GET('/workflows/{workflowId}/triggers/{triggerId}', {
          params: { path: { workflowId: workflow.id, triggerId } },
        }),
      ).toMatchObject({ type: 'Manual', status: 'DeActive', properties: { owner: 'ops' } });
      // Built-ins are not installed twice.
      const plugins = await second.admin.GET('/plugins/{group}/{name}', {
        params: { path: { group: 'Net', name: 'Http' } },
      });
      expect(plugins).toHaveLength(1);
    },
  );
});
