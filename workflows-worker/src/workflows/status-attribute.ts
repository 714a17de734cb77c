/**
 * `TrellisStatus` as a clean run (`trellisExecutionV2`) keeps it: the run started with it
 * (`Running`, among its start attributes) and upserts it only when it says something else.
 */
import { upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import { TrellisStatus } from '#protocol/search-attributes.js';
import type { ExecutionStatus } from '#protocol/statuses.js';

/** Whether the run's `TrellisStatus` says `status` already (from its start, or an upsert). */
export function statusIs(status: ExecutionStatus): boolean {
  return workflowInfo().typedSearchAttributes.get(TrellisStatus) === status;
}

/** Sets `TrellisStatus` to `status`, unless it says so already. */
export function showStatus(status: ExecutionStatus): void {
  if (!statusIs(status)) upsertSearchAttributes([{ key: TrellisStatus, value: status }]);
}
