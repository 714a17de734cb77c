/**
 * Subworkflow links between executions: the chain of parents above a run (its depth), the child
 * a subworkflow task started, the parent an execution was started by.
 */
import { sql, type Kysely } from 'kysely';
import { isUuid } from './ids.js';
import type { Database } from './tables.js';

/** One execution of a chain of subworkflows. */
export interface ChainLink {
  executionId: string;
  workflowName: string;
}

/**
 * The chain of executions from the root run down to `executionId` (its parent's parent first),
 * at most `limit` of them: the nearest `limit` when the chain is longer.
 */
export async function chainOf(
  db: Kysely<Database>,
  executionId: string,
  limit: number,
): Promise<ChainLink[]> {
  // Result keys come back camelCased, as every query's do.
  const { rows } = await sql<{ id: string; workflowName: string; level: number }>`
    with recursive chain (id, workflow_name, parent_execution_id, level) as (
      select id, workflow_name, parent_execution_id, 1
        from workflow_execution where id = ${executionId}
      union all
      select e.id, e.workflow_name, e.parent_execution_id, chain.level + 1
        from workflow_execution e join chain on e.id = chain.parent_execution_id
       where chain.level < ${limit}
    )
    select id, workflow_name, level from chain order by level desc
  `.execute(db);
  return rows.map((row) => ({ executionId: row.id, workflowName: row.workflowName }));
}

/** The first `limit` failed tasks of an execution, in definition order, with their messages. */
export async function failedTasksOf(
  db: Kysely<Database>,
  executionId: string,
  limit: number,
): Promise<Array<{ name: string; message: string }>> {
  return db
    .selectFrom('taskExecution')
    .select(['name', 'message'])
    .where('executionId', '=', executionId)
    .where('status', '=', 'Failed')
    .orderBy('position')
    .limit(limit)
    .execute();
}

/** The child execution a subworkflow task started last (a retry starts a new one). */
export async function latestChildOf(
  db: Kysely<Database>,
  taskExecutionId: string,
): Promise<{ id: string; workflowId: string } | undefined> {
  if (!isUuid(taskExecutionId)) return undefined;
  return db
    .selectFrom('workflowExecution')
    .select(['id', 'workflowId'])
    .where('parentTaskExecutionId', '=', taskExecutionId)
    .orderBy('executionStart', 'desc')
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/** The workflow of an execution (a parent's, for its child's detail); undefined when gone. */
export async function workflowIdOf(
  db: Kysely<Database>,
  executionId: string,
): Promise<string | undefined> {
  const row = await db
    .selectFrom('workflowExecution')
    .select('workflowId')
    .where('id', '=', executionId)
    .executeTakeFirst();
  return row?.workflowId;
}
