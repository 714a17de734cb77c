import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createExecutionWithTasks } from '#store/execution-repository.js';
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

  it(
    'lists and summarizes executions across workflows (buckets and percentiles in PGlite)',
    { timeout: 240_000 },
    async () => {
      const trellis = await startTrellis({ database: 'pglite' });
      running.push(trellis);
      const workflow = await trellis.admin.POST('/workflows/Add', {
        body: { definition: simpleDefinition('summarized') },
      });
      const start = Date.parse('2026-11-20T10:15:00Z');
      for (const [index, status] of (['Completed', 'Failed', 'Completed'] as const).entries()) {
        await createExecutionWithTasks(trellis.db, {
          workflowId: workflow.id,
          workflowName: 'summarized',
          definition: simpleDefinition('summarized'),
          taskNames: [],
          temporalWorkflowId: `pglite-${index}`,
          status,
          executionStart: new Date(start + index * 3_600_000),
          executionEnd: new Date(start + index * 3_600_000 + (index + 1) * 1000),
        });
      }
      const listed = await trellis.admin.GET('/executions', {
        params: { query: { status: ['Completed'], pageSize: 1 } },
      });
      expect(listed).toMatchObject([{ workflowName: 'summarized', status: 'Completed' }]);
      const summary = await trellis.admin.GET('/executions/summary', {
        params: { query: { from: '2026-11-20T10:00:00Z', to: '2026-11-20T13:00:00Z' } },
      });
      expect(summary.buckets.map((bucket) => bucket.counts.completed)).toEqual([1, 0, 1]);
      expect(summary.buckets.map((bucket) => bucket.counts.failed)).toEqual([0, 1, 0]);
      expect(summary.failureRate).toBeCloseTo(1 / 3, 10);
      expect(summary.durationP50Ms).toBeCloseTo(2000, 6);
      expect(summary.durationP95Ms).toBeCloseTo(2900, 6);
      expect(summary.recentFailures).toMatchObject([
        { workflowName: 'summarized', taskName: null },
      ]);
    },
  );
});
