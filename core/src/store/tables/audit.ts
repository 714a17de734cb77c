/** The audit trail: append-only, hash-chained by the database (see its migration). */
import type { ColumnType, Generated } from 'kysely';
import type { Json } from './columns.js';

/** Who made a change: a configured user, an API key, an OpenID Connect subject, or Trellis. */
export type AuditActorKind = 'user' | 'key' | 'oidc' | 'system';

/** One recorded change or decision. `id`, `at`, `prevHash` and `hash` are set by the database. */
export interface AuditEntryTable {
  /** A bigint, read as text; ascending in the order entries were appended. */
  id: Generated<string>;
  at: ColumnType<Date, never, never>;
  actor: string;
  actorKind: AuditActorKind;
  /** The project's name when recorded; null for instance-level operations. */
  project: string | null;
  /** The project's id: its entries whatever it is called now (and the name once it is gone). */
  projectId: string | null;
  /** The contract's operationId, or an event outside it (`signIn`, `signInLocked`). */
  operation: string;
  /** The ids the operation named or created, by name (`workflowId`, ...): never bodies. */
  targets: Json<Record<string, string>>;
  status: number;
  requestId: string | null;
  address: string | null;
  prevHash: ColumnType<string | null, never, never>;
  hash: ColumnType<string, never, never>;
}
