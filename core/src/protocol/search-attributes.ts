/**
 * Search attributes set on every Trellis run so operators can find it in the Temporal UI
 * with e.g. `TrellisWorkflowName="NightlyReport"`, `TrellisStatus="Paused"` or
 * `TrellisProject="partner-a"` in the workflow list filter.
 *
 * On the embedded dev server they are registered at start (`--search-attribute`) and again by
 * `ensureSearchAttributes`. On a real cluster the launcher calls `ensureSearchAttributes` at boot,
 * which needs permission to call the operator service; without it, register them once by hand:
 *
 *   temporal operator search-attribute create --namespace <ns> \
 *     --name TrellisWorkflowId --type Keyword \
 *     --name TrellisWorkflowName --type Keyword \
 *     --name TrellisExecutionId --type Keyword \
 *     --name TrellisStatus --type Keyword \
 *     --name TrellisProject --type Keyword \
 *     --name TrellisDryRun --type Bool
 *
 * (Temporal Cloud: `tcld namespace search-attributes add`, or the Cloud UI.) The first three are
 * set when a run starts, so runs cannot start without them; `TrellisStatus` is upserted by the
 * run as its status changes, only when the worker found it registered at its start;
 * `TrellisProject` is set when a run starts, only when the starting process found it registered;
 * `TrellisDryRun` likewise, on a dry run's start.
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

/**
 * The run's Trellis status (`Running`, `Paused`, `Completed`, `Failed`, `Canceled`), kept
 * current by the run itself: `TrellisStatus = "Paused"` lists the runs that wait for people.
 */
export const TrellisStatus = defineSearchAttributeKey('TrellisStatus', SearchAttributeType.KEYWORD);

/**
 * The name of the run's project when the run started (a project renamed later leaves its earlier
 * runs under the old name): `TrellisProject = "partner-a"` lists one project's runs.
 */
export const TrellisProject = defineSearchAttributeKey(
  'TrellisProject',
  SearchAttributeType.KEYWORD,
);

/**
 * True on a dry run's Temporal run (set when it starts; a real run has none):
 * `TrellisDryRun = true` lists the dry runs, `TrellisDryRun is null` the real ones.
 */
export const TrellisDryRun = defineSearchAttributeKey('TrellisDryRun', SearchAttributeType.BOOL);

/** Every Trellis search attribute; all are Keyword but `TrellisDryRun` (Bool). */
export const trellisSearchAttributes = [
  TrellisWorkflowId,
  TrellisWorkflowName,
  TrellisExecutionId,
  TrellisStatus,
  TrellisProject,
  TrellisDryRun,
] as const;

/**
 * The attributes runs go on without when a namespace lacks them (a cluster where Trellis may not
 * register attributes, upgraded to a version that added them).
 */
export const optionalSearchAttributes = [TrellisStatus, TrellisProject, TrellisDryRun] as const;

/** How `temporal operator search-attribute create` and the dev server name an attribute's type. */
export function searchAttributeTypeName(key: (typeof trellisSearchAttributes)[number]): string {
  return key.type === SearchAttributeType.BOOL ? 'Bool' : 'Keyword';
}

/**
 * Registers the Trellis search attributes in `namespace` when missing. Idempotent: attributes
 * already present are left alone; returns the names it added.
 */
export async function ensureSearchAttributes(
  connection: Connection,
  namespace: string,
): Promise<string[]> {
  const registered = await registeredSearchAttributes(connection, namespace);
  const missing = trellisSearchAttributes.filter((key) => !registered.has(key.name));
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

/** The names of the custom search attributes the namespace has. */
export async function registeredSearchAttributes(
  connection: Connection,
  namespace: string,
): Promise<Set<string>> {
  const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
  return new Set(Object.keys(customAttributes ?? {}));
}
