import { sql, type Kysely } from 'kysely';
import { Conflict } from '#definition/errors.js';
import { translateConstraintErrors } from './constraint-errors.js';
import { isUuid, newId } from './ids.js';
import { paginate, type Page, type Paged } from './paging.js';
import { preparedQuery } from './prepared.js';
import { defaultProjectName, findByIdOrName as findProject } from './project-repository.js';
import type { Database, WorkflowRevisionRow, WorkflowRow } from './tables.js';

/**
 * Stored workflows: the definition text as the client sent it, named by the definition's name.
 * Every definition a workflow has had is kept as a numbered revision (1 when added, one more at
 * each update), written in the same statement or transaction as the workflow row.
 */

export interface WorkflowInput {
  /** The definition's name: unique within the workflow's project. */
  name: string;
  /** The definition text, stored unchanged. */
  definition: string;
}

/** Where a new revision's definition came from (a Git commit), as `apply` is told. */
export interface RevisionSource {
  source?: string | null;
}

/** A list item: everything but the definition text. */
export type WorkflowSummary = Pick<
  WorkflowRow,
  'id' | 'name' | 'createdAt' | 'modifiedDate' | 'revision'
>;

const duplicateName = (name: string) => () =>
  new Conflict(`A workflow named "${name}" already exists`, { code: 'workflow.name_taken' });

/** A project's workflows by name, without their definitions; one page of them when `page` is given. */
export async function list(
  db: Kysely<Database>,
  projectId: string,
  page?: Page,
): Promise<Paged<WorkflowSummary>> {
  return paginate(
    db
      .selectFrom('workflow')
      .select(['id', 'name', 'createdAt', 'modifiedDate', 'revision'])
      .where('projectId', '=', projectId)
      .where('draftUntil', 'is', null)
      .orderBy('name')
      .orderBy('id'),
    page,
  );
}

/** A project's workflows with their definitions, by name. */
export async function listWithDefinitions(
  db: Kysely<Database>,
  projectId: string,
): Promise<WorkflowRow[]> {
  return db
    .selectFrom('workflow')
    .selectAll()
    .where('projectId', '=', projectId)
    .where('draftUntil', 'is', null)
    .orderBy('name')
    .execute();
}

/** Every workflow with its definition, e.g. to find the ones using a plugin or configuration. */
export async function listAll(db: Kysely<Database>): Promise<WorkflowRow[]> {
  return db
    .selectFrom('workflow')
    .selectAll()
    .where('draftUntil', 'is', null)
    .orderBy('name')
    .execute();
}

/**
 * The project's workflows whose definition text holds `text` (ignoring case), with their
 * definitions: those that may call a workflow name its id.
 */
export async function listMentioning(
  db: Kysely<Database>,
  projectId: string,
  text: string,
): Promise<StoredDefinition[]> {
  return db
    .selectFrom('workflow')
    .select(['id', 'projectId', 'name', 'definition', 'revision'])
    .where('projectId', '=', projectId)
    .where('draftUntil', 'is', null)
    .where(sql<boolean>`strpos(lower(definition), ${text.toLowerCase()}) > 0`)
    .orderBy('name')
    .orderBy('id')
    .execute();
}

const selectById = preparedQuery((db, values: { id: string }) =>
  db.selectFrom('workflow').selectAll().where('id', '=', values.id).where('draftUntil', 'is', null),
);

export async function findById(db: Kysely<Database>, id: string): Promise<WorkflowRow | undefined> {
  if (!isUuid(id)) return undefined;
  const [row] = await selectById(db, { id });
  return row;
}

/** A stored workflow as `GET /workflows/{id}` shows it: no timestamps to read and parse. */
export type StoredDefinition = Pick<
  WorkflowRow,
  'id' | 'projectId' | 'name' | 'definition' | 'revision'
>;

const selectDefinitionById = preparedQuery((db, values: { id: string }) =>
  db
    .selectFrom('workflow')
    .select(['id', 'projectId', 'name', 'definition', 'revision'])
    .where('id', '=', values.id)
    .where('draftUntil', 'is', null),
);

export async function findDefinitionById(
  db: Kysely<Database>,
  id: string,
): Promise<StoredDefinition | undefined> {
  if (!isUuid(id)) return undefined;
  const [row] = await selectDefinitionById(db, { id });
  return row;
}

/** The stored workflow of this name (in this project when given). */
export async function findByName(
  db: Kysely<Database>,
  name: string,
  projectId?: string,
): Promise<WorkflowRow | undefined> {
  return db
    .selectFrom('workflow')
    .selectAll()
    .where('name', '=', name)
    .$if(projectId !== undefined, (q) => q.where('projectId', '=', projectId!))
    .where('draftUntil', 'is', null)
    .executeTakeFirst();
}

async function defaultProjectId(db: Kysely<Database>): Promise<string> {
  const row = await findProject(db, defaultProjectName);
  if (!row) throw new Error('The project "default" is missing; run the migrations.');
  return row.id;
}

/** Runs `work` in the caller's transaction, or in a new one. */
function inTransaction<T>(
  db: Kysely<Database>,
  work: (trx: Kysely<Database>) => Promise<T>,
): Promise<T> {
  return db.isTransaction ? work(db) : db.transaction().execute(work);
}

async function insertRevision(
  db: Kysely<Database>,
  row: WorkflowRow,
  source: string | null,
): Promise<void> {
  await db
    .insertInto('workflowRevision')
    .values({
      workflowId: row.id,
      revision: row.revision,
      name: row.name,
      definition: row.definition,
      createdAt: row.modifiedDate,
      source,
    })
    .execute();
}

/**
 * The workflow row and its revision 1 in one statement (a data-modifying CTE is atomic): one round
 * trip where a transaction took four, on the path every `POST /workflows/Add` takes.
 */
const insertWithRevision = preparedQuery(
  (
    db,
    values: {
      id: string;
      projectId: string;
      name: string;
      definition: string;
      source: string | null;
    },
  ) =>
    db
      .with('added', (db) =>
        db
          .insertInto('workflow')
          .values({
            id: values.id,
            projectId: values.projectId,
            name: values.name,
            definition: values.definition,
            revision: 1,
            modifiedDate: sql<Date>`now()`,
          })
          .returningAll(),
      )
      .with('kept', (db) =>
        db
          .insertInto('workflowRevision')
          .columns(['workflowId', 'revision', 'name', 'definition', 'createdAt', 'source'])
          .expression(
            db
              .selectFrom('added')
              .select([
                'id',
                'revision',
                'name',
                'definition',
                'modifiedDate',
                sql<string | null>`${values.source}::text`.as('source'),
              ]),
          ),
      )
      .selectFrom('added')
      .selectAll(),
);

/**
 * Stores a new workflow of a project (absent: `default`) as its revision 1; `Conflict` when the
 * name is taken there.
 */
export async function insert(
  db: Kysely<Database>,
  input: WorkflowInput & RevisionSource & { projectId?: string },
): Promise<WorkflowRow> {
  const projectId = input.projectId ?? (await defaultProjectId(db));
  const [row] = await translateConstraintErrors(
    () =>
      insertWithRevision(db, {
        id: newId(),
        projectId,
        name: input.name,
        definition: input.definition,
        source: input.source ?? null,
      }),
    { unique: duplicateName(input.name) },
  );
  return row!;
}

/**
 * Replaces the definition (and name) with a new revision, keeping the previous one, and stamps
 * `modifiedDate`; undefined when unknown.
 */
export async function update(
  db: Kysely<Database>,
  id: string,
  { source = null, ...input }: WorkflowInput & RevisionSource,
): Promise<WorkflowRow | undefined> {
  if (!isUuid(id)) return undefined;
  return inTransaction(db, async (trx) => {
    const row = await translateConstraintErrors(
      () =>
        trx
          .updateTable('workflow')
          .set((eb) => ({
            ...input,
            revision: eb('revision', '+', 1),
            modifiedDate: sql<Date>`now()`,
          }))
          .where('id', '=', id)
          .where('draftUntil', 'is', null)
          .returningAll()
          .executeTakeFirst(),
      { unique: duplicateName(input.name) },
    );
    if (row) await insertRevision(trx, row, source);
    return row;
  });
}

/** A revision as listed: everything but the definition text. */
export type RevisionSummary = Pick<
  WorkflowRevisionRow,
  'revision' | 'name' | 'createdAt' | 'source'
>;

/** A workflow's revisions, newest first; one page of them when `page` is given. */
export async function listRevisions(
  db: Kysely<Database>,
  workflowId: string,
  page?: Page,
): Promise<Paged<RevisionSummary>> {
  return paginate(
    db
      .selectFrom('workflowRevision')
      .select(['revision', 'name', 'createdAt', 'source'])
      .where('workflowId', '=', workflowId)
      .orderBy('revision', 'desc'),
    page,
  );
}

/** One revision of a workflow; undefined when it never had that number. */
export async function findRevision(
  db: Kysely<Database>,
  workflowId: string,
  revision: number,
): Promise<WorkflowRevisionRow | undefined> {
  if (!isUuid(workflowId) || !Number.isSafeInteger(revision)) return undefined;
  return db
    .selectFrom('workflowRevision')
    .selectAll()
    .where('workflowId', '=', workflowId)
    .where('revision', '=', revision)
    .executeTakeFirst();
}

/** Deletes a workflow with its revisions, triggers and executions (cascade); false when unknown. */
export async function remove(db: Kysely<Database>, id: string): Promise<boolean> {
  if (!isUuid(id)) return false;
  const result = await db
    .deleteFrom('workflow')
    .where('id', '=', id)
    .where('draftUntil', 'is', null)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/**
 * A draft of a project: the row its runs of a definition not stored hang on (docs/ARCHITECTURE.md
 * #workflow-tests), kept until `until`. No list or lookup above sees it.
 */
export async function insertDraft(
  db: Kysely<Database>,
  input: WorkflowInput & { projectId: string; until: Date },
): Promise<WorkflowRow> {
  return db
    .insertInto('workflow')
    .values({
      id: newId(),
      projectId: input.projectId,
      name: input.name,
      definition: input.definition,
      revision: 0,
      modifiedDate: sql<Date>`now()`,
      draftUntil: input.until,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * Removes a project's drafts none of whose runs is still going, with their runs (cascade): those
 * whose time has passed, or with `all` (the project is deleted) every one; how many.
 */
export async function removeEndedDrafts(
  db: Kysely<Database>,
  projectId: string,
  { all = false }: { all?: boolean } = {},
): Promise<number> {
  const result = await db
    .deleteFrom('workflow')
    .where('projectId', '=', projectId)
    .where('draftUntil', 'is not', null)
    .$if(!all, (q) => q.where('draftUntil', '<', sql<Date>`now()`))
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('workflowExecution as e')
            .select('e.id')
            .whereRef('e.workflowId', '=', 'workflow.id')
            .where('e.status', 'in', ['Pending', 'Running', 'Paused']),
        ),
      ),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
