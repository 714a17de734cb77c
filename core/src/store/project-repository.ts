import { sql, type Kysely } from 'kysely';
import { LRUCache } from 'lru-cache';
import { Conflict } from '#definition/errors.js';
import type { Role } from '#platform/config/types.js';
import { translateConstraintErrors } from './constraint-errors.js';
import { isUuid, newId } from './ids.js';
import { paginate, type Page, type Paged } from './paging.js';
import type { Database, ProjectLimits, ProjectMemberRow, ProjectRow } from './tables.js';

/**
 * Projects and their members. A project is named by its id or its name wherever a caller names
 * it (the `X-Trellis-Project` header, `/projects/{projectId}`); `default` holds what existed
 * before projects and cannot be renamed or deleted.
 */

export const defaultProjectName = 'default';

/** A project named as callers name it: its id, or its name. */
export async function findByIdOrName(
  db: Kysely<Database>,
  key: string,
): Promise<ProjectRow | undefined> {
  return db
    .selectFrom('project')
    .selectAll()
    .where((eb) => (isUuid(key) ? eb('id', '=', key) : eb('name', '=', key)))
    .executeTakeFirst();
}

export async function findById(db: Kysely<Database>, id: string): Promise<ProjectRow | undefined> {
  return db.selectFrom('project').selectAll().where('id', '=', id).executeTakeFirst();
}

/** How long this process keeps a project row it read by id: a change elsewhere shows within it. */
export const projectRowTtlMs = 5_000;

// Every start and every task attempt asks its project's limits, allowed plugins or name, which
// change rarely: one read per project every few seconds instead of one per ask. Keyed by id alone:
// project ids are random UUIDs, unique across the databases one process may serve (tests).
const projectRows = new LRUCache<string, ProjectRow, Kysely<Database>>({
  max: 1_000,
  ttl: projectRowTtlMs,
  fetchMethod: (id, _stale, { context }) => findById(context, id),
});

/**
 * The project with this id as this process last read it, at most {@link projectRowTtlMs} ago
 * (changes made through this process show at once); undefined when unknown.
 */
export async function projectById(
  db: Kysely<Database>,
  id: string,
): Promise<ProjectRow | undefined> {
  return projectRows.fetch(id, { context: db });
}

/** The name of the project with this id (runs carry it to Temporal); undefined when unknown. */
export async function nameOf(db: Kysely<Database>, id: string): Promise<string | undefined> {
  return (await projectById(db, id))?.name;
}

/** Every project by name; one page of them when `page` is given. */
export async function list(db: Kysely<Database>, page?: Page): Promise<Paged<ProjectRow>> {
  return paginate(db.selectFrom('project').selectAll().orderBy('name').orderBy('id'), page);
}

/** The projects where one of `names` is a member (and `default` when `withDefault`), by name. */
export async function listForMember(
  db: Kysely<Database>,
  names: string[],
  withDefault: boolean,
  page?: Page,
): Promise<Paged<ProjectRow>> {
  return paginate(
    db
      .selectFrom('project')
      .selectAll()
      .where((eb) =>
        eb.or([
          eb(
            'id',
            'in',
            eb.selectFrom('projectMember').select('projectId').where('name', 'in', names),
          ),
          ...(withDefault ? [eb('name', '=', defaultProjectName)] : []),
        ]),
      )
      .orderBy('name')
      .orderBy('id'),
    page,
  );
}

const nameTaken = (name: string) => () =>
  new Conflict(`A project named "${name}" already exists.`, { code: 'project.name_taken' });

export async function insert(
  db: Kysely<Database>,
  name: string,
  limits: ProjectLimits = {},
): Promise<ProjectRow> {
  return translateConstraintErrors(
    () =>
      db
        .insertInto('project')
        .values({ id: newId(), name, limits: JSON.stringify(limits) })
        .returningAll()
        .executeTakeFirstOrThrow(),
    { unique: nameTaken(name) },
  );
}

/** Renames a project, and gives it `limits` when given; undefined when unknown. */
export async function update(
  db: Kysely<Database>,
  id: string,
  change: { name: string; limits?: ProjectLimits },
): Promise<ProjectRow | undefined> {
  const { name, limits } = change;
  projectRows.delete(id);
  return translateConstraintErrors(
    () =>
      db
        .updateTable('project')
        .set({ name, ...(limits ? { limits: JSON.stringify(limits) } : {}) })
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirst(),
    { unique: nameTaken(name) },
  );
}

/** Restricts the plugins a project's workflows may use to `types`; null lifts the restriction. */
export async function setAllowedPlugins(
  db: Kysely<Database>,
  id: string,
  types: string[] | null,
): Promise<void> {
  projectRows.delete(id);
  await db
    .updateTable('project')
    .set({ allowedPlugins: types === null ? null : JSON.stringify([...new Set(types)]) })
    .where('id', '=', id)
    .execute();
}

/**
 * The start time of the project's `n`th latest execution started since `since` (subworkflow
 * children aside: they run within their parent's start); undefined when it started fewer.
 */
/**
 * Serializes the starts of one project until the transaction ends: the starts-a-minute check
 * reads the count and writes the start under it.
 */
export async function lockStarts(trx: Kysely<Database>, projectId: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`project-starts:${projectId}`}, 0))`.execute(
    trx,
  );
}

/**
 * A project's API requests by the database's clock: the count of the current minute (the
 * request just counted included) and of the minute before, and how far into the current minute
 * it is (0 to 1).
 */
export interface RequestWindow {
  count: number;
  previousCount: number;
  elapsed: number;
}

/** Counts one API request of the project, in one statement whatever the API process. */
export async function countRequest(
  db: Kysely<Database>,
  projectId: string,
): Promise<RequestWindow> {
  const { rows } = await sql<{ count: number; previous: number; elapsed: number }>`
    insert into project_request_rate as r (project_id, window_start, count, previous_count)
    values (${projectId}, date_trunc('minute', now()), 1, 0)
    on conflict (project_id) do update set
      previous_count = case
        when r.window_start = excluded.window_start then r.previous_count
        when r.window_start = excluded.window_start - interval '1 minute' then r.count
        else 0 end,
      count = case when r.window_start = excluded.window_start then r.count + 1 else 1 end,
      window_start = excluded.window_start
    returning count, previous_count as previous,
      (extract(epoch from now() - window_start) / 60)::float8 as elapsed`.execute(db);
  const row = rows[0]!;
  return { count: row.count, previousCount: row.previous, elapsed: row.elapsed };
}

/** Takes back a request counted by `countRequest` (one that was refused). */
export async function uncountRequest(db: Kysely<Database>, projectId: string): Promise<void> {
  await db
    .updateTable('projectRequestRate')
    .set((eb) => ({ count: eb('count', '-', 1) }))
    .where('projectId', '=', projectId)
    .where('count', '>', 0)
    .where('windowStart', '=', sql<Date>`date_trunc('minute', now())`)
    .execute();
}

export async function nthLatestStart(
  db: Kysely<Database>,
  projectId: string,
  since: Date,
  n: number,
): Promise<Date | undefined> {
  const row = await db
    .selectFrom('workflowExecution')
    .select('executionStart')
    .where('projectId', '=', projectId)
    .where('executionStart', '>', since)
    .where('parentExecutionId', 'is', null)
    .orderBy('executionStart', 'desc')
    .offset(n - 1)
    .limit(1)
    .executeTakeFirst();
  return row?.executionStart;
}

/**
 * Deletes a project with its members; `Conflict` while it still owns workflows or
 * configurations (their rows refer to it).
 */
export async function remove(db: Kysely<Database>, project: ProjectRow): Promise<void> {
  projectRows.delete(project.id);
  await translateConstraintErrors(
    () => db.deleteFrom('project').where('id', '=', project.id).execute(),
    {
      foreignKey: () =>
        new Conflict(
          `Project "${project.name}" still owns workflows or configurations; delete them first.`,
          { code: 'project.not_empty' },
        ),
    },
  );
}

/** A project's members by name; one page of them when `page` is given. */
export async function listMembers(
  db: Kysely<Database>,
  projectId: string,
  page?: Page,
): Promise<Paged<ProjectMemberRow>> {
  return paginate(
    db.selectFrom('projectMember').selectAll().where('projectId', '=', projectId).orderBy('name'),
    page,
  );
}

export async function findMember(
  db: Kysely<Database>,
  projectId: string,
  name: string,
): Promise<ProjectMemberRow | undefined> {
  return db
    .selectFrom('projectMember')
    .selectAll()
    .where('projectId', '=', projectId)
    .where('name', '=', name)
    .executeTakeFirst();
}

/** Makes `name` a member with `roles`, or gives a member those roles instead of its own. */
export async function putMember(
  db: Kysely<Database>,
  projectId: string,
  name: string,
  roles: Role[],
): Promise<ProjectMemberRow> {
  const stored = JSON.stringify([...new Set(roles)]);
  return db
    .insertInto('projectMember')
    .values({ projectId, name, roles: stored })
    .onConflict((conflict) =>
      conflict.columns(['projectId', 'name']).doUpdateSet({ roles: stored }),
    )
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Removes a member; false when `name` was not one. */
export async function removeMember(
  db: Kysely<Database>,
  projectId: string,
  name: string,
): Promise<boolean> {
  const result = await db
    .deleteFrom('projectMember')
    .where('projectId', '=', projectId)
    .where('name', '=', name)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** The projects where any of `names` is a member, each with the roles their rows give there, by name. */
export async function listMemberships(
  db: Kysely<Database>,
  names: string[],
): Promise<(ProjectRow & { roles: Role[] })[]> {
  const rows = await db
    .selectFrom('projectMember')
    .innerJoin('project', 'project.id', 'projectMember.projectId')
    .selectAll('project')
    .select('projectMember.roles')
    .where('projectMember.name', 'in', names)
    .orderBy('project.name')
    .execute();
  const byProject = new Map<string, ProjectRow & { roles: Role[] }>();
  for (const { roles, ...project } of rows) {
    const held = byProject.get(project.id)?.roles ?? [];
    byProject.set(project.id, { ...project, roles: [...new Set([...held, ...roles])] });
  }
  return [...byProject.values()];
}

/**
 * What the membership rows of any of `names` (a user's name, its groups) give in a project: their
 * roles together; undefined when none of them is a member.
 */
export async function membershipRoles(
  db: Kysely<Database>,
  projectId: string,
  names: string[],
): Promise<Role[] | undefined> {
  const rows = await db
    .selectFrom('projectMember')
    .select('roles')
    .where('projectId', '=', projectId)
    .where('name', 'in', names)
    .execute();
  if (rows.length === 0) return undefined;
  return [...new Set(rows.flatMap((row) => row.roles))];
}
