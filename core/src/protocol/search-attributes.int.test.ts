import { randomUUID } from 'node:crypto';
import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time.js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { testServices } from '../../../test/support/services.js';
import { ensureSearchAttributes } from './search-attributes.js';

let connection: Connection;

beforeAll(async () => {
  connection = await Connection.connect({ address: testServices().temporalAddress });
});
afterAll(() => connection?.close());

it('registers the five Keyword attributes and the Bool TrellisDryRun in a namespace that lacks them, once', async () => {
  // A fresh namespace, as on a real cluster where nobody passed --search-attribute.
  const namespace = `trellis-sa-${randomUUID().slice(0, 8)}`;
  await connection.workflowService.registerNamespace({
    namespace,
    workflowExecutionRetentionPeriod: msToTs('1 day'),
  });

  expect(await ensureSearchAttributes(connection, namespace)).toEqual([
    'TrellisWorkflowId',
    'TrellisWorkflowName',
    'TrellisExecutionId',
    'TrellisStatus',
    'TrellisProject',
    'TrellisDryRun',
  ]);
  const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
  for (const name of [
    'TrellisWorkflowId',
    'TrellisWorkflowName',
    'TrellisExecutionId',
    'TrellisStatus',
    'TrellisProject',
  ]) {
    expect(customAttributes?.[name]).toBe(2); // INDEXED_VALUE_TYPE_KEYWORD
  }
  expect(customAttributes?.TrellisDryRun).toBe(5); // INDEXED_VALUE_TYPE_BOOL
  expect(await ensureSearchAttributes(connection, namespace)).toEqual([]);
});
