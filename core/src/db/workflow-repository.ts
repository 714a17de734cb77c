import { sql, type Kysely } from 'kysely';
import { Conflict } from '../errors.js';
import { translateConstraintErrors } from './constraint-errors.js';
import { isUuid, newId } from './ids.js';
import { paginate, type Page, type Paged } from './paging.js';
import { preparedQuery } from './prepared.js';
import type { Database, WorkflowRow } from './tables.js';

/** Stored workflows: the definition text as the client sent it, named by the definition's name. */

export interface WorkflowInput {
  /** The definition's name. */
  name: string;
  /** The definition text, stored unchanged. */
  definition: string;
}

/** A list item: everything but the definition text. */
export type WorkflowSummary = Pick<WorkflowRow, 'id' | 'name' | 'createdAt' | 'modifiedDate'>;

const duplicateName = (name: string) => () =>
  new Conflict(`A workflow named "${name}" already exists`, { code: 'workflow.name_taken' });

/** Workflows by name, without their definitions; one page of them when `page` is given. */
export async function list(db: Kysely<Database>, page?: Page): Promise<Paged<WorkflowSummary>> {
  return paginate(
    db
      .selectFrom('workflow')
      .select(['id', 'name', 'createdAt', 'modifiedDate'])
      .orderBy('name')
      .orderBy('id'),
    page,
  );
}

/** Every workflow with its definition, e.g. to find the ones using a plugin or configuration. */
export async function listAll(db: Kysely<Database>): Promise<WorkflowRow[]> {
  return db.selectFrom('workflow').selectAll().orderBy('name').execute();
}

const selectById = preparedQuery((db, values: { id: string }) =>
  db.selectFrom('workflow').selectAll().where('id', '=', values.id),
);

export async function findById(db: Kysely<Database>, id: string): Promise<WorkflowRow | undefined> {
  if (!isUuid(id)) return undefined;
  const [row] = await selectById(db, { id });
  return row;
}

/** A stored workflow as `GET /workflows/{id}` shows it: no timestamps to read and parse. */
export type StoredDefinition = Pick<WorkflowRow, 'id' | 'name' | 'definition'>;

const selectDefinitionById = preparedQuery((db, values: { id: string }) =>
  db.selectFrom('workflow').select(['id', 'name', 'definition']).where('id', '=', values.id),
);

export async function findDefinitionById(
  db: Kysely<Database>,
  id: string,
): Promise<StoredDefinition | undefined> {
  if (!isUuid(id)) return undefined;
  const [row] = await selectDefinitionById(db, { id });
  return row;
}

export async function findByName(
  db: Kysely<Database>,
  name: string,
): Promise<WorkflowRow | undefined> {
  return db.selectFrom('workflow').selectAll().where('name', '=', name).executeTakeFirst();
}

const insertWorkflow = preparedQuery(
  (db, values: { id: string; name: string; definition: string }) =>
    db
      .insertInto('workflow')
      .values({
        id: values.id,
        name: values.name,
        definition: values.definition,
        modifiedDate: sql<Date>`now()`,
      })
      .returningAll(),
);

/** Stores a new workflow; `Conflict` when the name is taken. */
export async function insert(db: Kysely<Database>, input: WorkflowInput): Promise<WorkflowRow> {
  const [row] = await translateConstraintErrors(
    () => insertWorkflow(db, { id: newId(), name: input.name, definition: input.definition }),
    { unique: duplicateName(input.name) },
  );
  if (!row) throw new Error('INSERT INTO workflow returned no row');
  return row;
}

/** Replaces the definition (and name) and stamps `modifiedDate`; undefined when unknown. */
export async function update(
  db: Kysely<Database>,
  id: string,
  input: WorkflowInput,
): Promise<WorkflowRow | undefined> {
  if (!isUuid(id)) return undefined;
  return translateConstraintErrors(
    () =>
      db
        .updateTable('workflow')
        .set({ ...input, modifiedDate: sql<Date>`now()` })
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirst(),
    { unique: duplicateName(input.name) },
  );
}

/** Deletes a workflow with its triggers and executions (cascade); false when unknown. */
export async function remove(db: Kysely<Database>, id: string): Promise<boolean> {
  if (!isUuid(id)) return false;
  const result = await db.deleteFrom('workflow').where('id', '=', id).executeTakeFirst();
  return result.numDeletedRows > 0n;
}
