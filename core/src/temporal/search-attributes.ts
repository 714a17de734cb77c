/**
 * Search attributes set on every Trellis run so operators can find it in the Temporal UI
 * (DESIGN.md §7), e.g. `TrellisWorkflowName="NightlyReport"` in the workflow list filter.
 *
 * On the embedded dev server they are registered at start (`--search-attribute`) and again by
 * `ensureSearchAttributes`. On a real cluster the launcher calls `ensureSearchAttributes` at boot,
 * which needs permission to call the operator service; without it, register them once by hand:
 *
 *   temporal operator search-attribute create --namespace <ns> \
 *     --name TrellisWorkflowId --type Keyword \
 *     --name TrellisWorkflowName --type Keyword \
 *     --name TrellisExecutionId --type Keyword
 *
 * (Temporal Cloud: `tcld namespace search-attributes add`, or the Cloud UI.)
 */
import type { Connection } from '@temporalio/client';
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
// Not re-exported by the package index; importing it keeps @temporalio/proto out of the workflow
// bundle, which imports the keys from this file.
import { encodeSearchAttributeIndexedValueType } from '@temporalio/common/lib/search-attributes.js';

export const TrellisWorkflowId = defineSearchAttributeKey(
  'TrellisWorkflowId',
  SearchAttributeType.KEYWORD,
);
export const TrellisWorkflowName = defineSearchAttributeKey(
  'TrellisWorkflowName',
  SearchAttributeType.KEYWORD,
);
export const TrellisExecutionId = defineSearchAttributeKey(
  'TrellisExecutionId',
  SearchAttributeType.KEYWORD,
);

/** Every Trellis search attribute; all are Keyword. */
export const trellisSearchAttributes = [
  TrellisWorkflowId,
  TrellisWorkflowName,
  TrellisExecutionId,
] as const;

/**
 * Registers the Trellis search attributes in `namespace` when missing. Idempotent: attributes
 * already present are left alone; returns the names it added.
 */
export async function ensureSearchAttributes(
  connection: Connection,
  namespace: string,
): Promise<string[]> {
  const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
  const missing = trellisSearchAttributes.filter((key) => !(key.name in (customAttributes ?? {})));
  if (missing.length === 0) return [];
  try {
    await connection.operatorService.addSearchAttributes({
      namespace,
      searchAttributes: Object.fromEntries(
        missing.map((key) => [key.name, encodeSearchAttributeIndexedValueType(key.type)!]),
      ),
    });
  } catch (error) {
    // Two processes booting at once race here; the loser sees "already exists", which is success.
    if (!/already exists/i.test(String((error as Error).message))) throw error;
  }
  return missing.map((key) => key.name);
}
