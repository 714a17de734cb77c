import { sql, type Kysely, type Selectable } from 'kysely';
import type { AuditEntryTable, Database } from './tables.js';

/**
 * The audit trail. The database numbers, times and chains each entry as it is appended and
 * refuses every change to it but the retention purge (see the `audit-trail` migration): this
 * repository only appends, reads, verifies and purges.
 */

export type AuditEntry = Selectable<AuditEntryTable>;

/** What the caller says of an entry; the rest is the database's. */
export type NewAuditEntry = Pick<
  AuditEntry,
  | 'actor'
  | 'actorKind'
  | 'project'
  | 'projectId'
  | 'operation'
  | 'targets'
  | 'status'
  | 'requestId'
  | 'address'
>;

/** An appended entry as the database completed it; `at` as PostgreSQL wrote it, to the microsecond. */
export interface AppendedEntry {
  id: string;
  at: string;
  hash: string;
}

/**
 * Appends entries in one statement, chained in the order given; their ids, times and hashes in
 * that order. One statement text whatever the count (a column of values per field), so that the
 * hot path builds no query.
 */
export async function appendEntries(
  db: Kysely<Database>,
  entries: NewAuditEntry[],
): Promise<AppendedEntry[]> {
  if (entries.length === 0) return [];
  const column = <T>(value: (entry: NewAuditEntry) => T) => entries.map(value);
  const { rows } = await sql<AppendedEntry>`
    insert into audit_entry
      (actor, actor_kind, project, project_id, operation, targets, status, request_id, address)
    select actor, actor_kind, project, project_id, operation, targets, status, request_id, address
    from unnest(
      ${column((entry) => entry.actor)}::text[],
      ${column((entry) => entry.actorKind)}::text[],
      ${column((entry) => entry.project)}::text[],
      ${column((entry) => entry.projectId)}::uuid[],
      ${column((entry) => entry.operation)}::text[],
      ${column((entry) => JSON.stringify(entry.targets))}::jsonb[],
      ${column((entry) => entry.status)}::integer[],
      ${column((entry) => entry.requestId)}::text[],
      ${column((entry) => entry.address)}::text[]
    ) with ordinality as given (
      actor, actor_kind, project, project_id, operation, targets, status, request_id, address,
      position
    )
    order by position
    returning id, to_json(at) #>> '{}' as at, hash`.execute(db);
  return rows;
}

/**
 * Which entries a list shows; each filter is optional, `from` inclusive and `to` exclusive.
 * `project` is a project as entries name it: its id (what it is called now does not matter), or
 * the name it had when they were recorded.
 */
export interface AuditFilter {
  project?: { id: string } | { name: string };
  actor?: string;
  operation?: string;
  from?: Date;
  to?: Date;
}

const largestId = 2n ** 63n - 1n;

/** A cursor past every id there can be (ids are `bigint`) reads as the largest: all entries are before it. */
const withinIds = (after: string) => (BigInt(after) > largestId ? largestId.toString() : after);

/** Entries newest first, `limit` of them, after the entry `after` (its id) when given. */
export async function listEntries(
  db: Kysely<Database>,
  filter: AuditFilter,
  page: { after?: string; limit: number },
): Promise<AuditEntry[]> {
  let query = db.selectFrom('auditEntry').selectAll().orderBy('id', 'desc').limit(page.limit);
  const { project } = filter;
  if (project !== undefined) {
    query =
      'id' in project
        ? query.where('projectId', '=', project.id)
        : query.where('project', '=', project.name);
  }
  if (filter.actor !== undefined) query = query.where('actor', '=', filter.actor);
  if (filter.operation !== undefined) query = query.where('operation', '=', filter.operation);
  if (filter.from !== undefined) query = query.where('at', '>=', filter.from);
  if (filter.to !== undefined) query = query.where('at', '<', filter.to);
  if (page.after !== undefined) query = query.where('id', '<', withinIds(page.after));
  return query.execute();
}

/**
 * Where a chain breaks: the entry's own fields no longer give its hash (`altered`), it does not
 * follow the entry before (`unlinked`), or it is the oldest entry yet neither the first ever
 * recorded nor the first a purge kept (`truncated`: older entries were deleted behind its back).
 */
export interface ChainBreak {
  id: string;
  reason: 'altered' | 'unlinked' | 'truncated';
}

/**
 * Walks the chain in order: each entry's hash must be its digest, and its `prev_hash` the hash of
 * the entry before. The oldest entry must be the first ever (no `prev_hash`) or the one the latest
 * purge's entry names as the first it kept, following the last entry it purged.
 */
export async function verifyChain(
  db: Kysely<Database>,
): Promise<{ entries: number; firstBreak: ChainBreak | null }> {
  const { rows } = await sql<{ entries: string; id: string | null; reason: ChainBreak['reason'] }>`
    with chain as (
      select id, prev_hash,
        hash is distinct from audit_entry_digest(prev_hash, id, at, actor, actor_kind, project,
          project_id, operation, targets, status, request_id, address) as altered,
        row_number() over (order by id) = 1 as oldest,
        prev_hash is distinct from lag(hash) over (order by id) as unlinked
      from audit_entry
    ),
    latest_purge as (
      select targets from audit_entry
      where operation = 'auditPurge' and actor_kind = 'system'
      order by id desc limit 1
    )
    select (select count(*) from chain) as entries, broken.id, broken.reason
    from (select 1) as one
    left join lateral (
      select id,
        case when altered then 'altered' when oldest then 'truncated' else 'unlinked' end as reason
      from chain
      where altered
        or (not oldest and unlinked)
        or (oldest and prev_hash is not null and not exists (
          select 1 from latest_purge
          where targets->>'firstRemainingId' = chain.id::text
            and targets->>'lastPurgedHash' = chain.prev_hash
        ))
      order by id limit 1
    ) as broken on true`.execute(db);
  const row = rows[0];
  if (!row) throw new Error('verifying the audit chain returned no row');
  return {
    entries: Number(row.entries),
    firstBreak: row.id === null ? null : { id: row.id, reason: row.reason },
  };
}

/**
 * Deletes the entries older than `retentionDays`, the one deletion the database allows, and
 * appends an `auditPurge` entry saying how many went and which is the first kept. Returns how
 * many went.
 */
export async function purgeEntries(db: Kysely<Database>, retentionDays: number): Promise<number> {
  const { rows } = await sql<{ purged: string }>`
    select purge_audit_entries(${retentionDays}::float8 * interval '1 day') as purged`.execute(db);
  return Number(rows[0]?.purged ?? 0);
}
