/**
 * The production topology (test/deploy/support/topology.ts) on a real Temporal cluster: compose's
 * `temporal` with its frontend, history, matching and worker services as processes of their own
 * on PostgreSQL (test/deploy/support/temporal-cluster.ts). Its history service is SIGKILLed with the api and
 * the worker, and started again; the search attributes are registered as on any cluster (by
 * Trellis at its start) and the runs are found by them.
 */
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { expect } from 'vitest';
import { TrellisStatus, TrellisWorkflowId } from '#protocol/search-attributes.js';
import { testServices } from '../support/services.js';
import { startTemporalCluster, type TemporalCluster } from './support/temporal-cluster.js';
import { describeTopology } from './support/topology.js';

let cluster: TemporalCluster;

describeTopology({
  name: 'a Temporal cluster',
  async start(folder) {
    cluster = await startTemporalCluster({
      adminUrl: testServices().pgAdminUrl,
      folder: path.join(folder, 'temporal'),
    });
  },
  get address() {
    return cluster.address;
  },
  async chaos() {
    await cluster.kill('history');
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    await cluster.restart('history');
  },
  async check(_db, workflowId) {
    const connection = await Connection.connect({ address: cluster.address });
    try {
      const { customAttributes } = await connection.operatorService.listSearchAttributes({
        namespace: cluster.namespace,
      });
      expect(Object.keys(customAttributes ?? {})).toEqual(
        expect.arrayContaining([TrellisStatus.name, TrellisWorkflowId.name]),
      );
      // Visibility on PostgreSQL finds the runs by Trellis's attributes, as operators search.
      const { count } = await connection.workflowService.countWorkflowExecutions({
        namespace: cluster.namespace,
        query: `${TrellisWorkflowId.name} = '${workflowId}' AND ExecutionStatus = 'Completed'`,
      });
      expect(Number(count)).toBeGreaterThanOrEqual(60);
    } finally {
      await connection.close();
    }
  },
  stop: () => cluster?.stop(),
});
