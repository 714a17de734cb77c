import * as pluginRepository from '#store/plugin-repository.js';
import type { StoredDefinition, WorkflowSummary } from '#store/workflow-repository.js';
import type { WorkflowRow } from '#store/tables.js';
import * as workflowRepository from '#store/workflow-repository.js';
import * as triggerRepository from '#store/trigger-repository.js';
import { typedDefinitionSchema } from '#definition/typed-schema.js';
import type { WorkflowDefinition } from '#definition/types.js';
import { Invalid, NotFound } from '#definition/errors.js';
import { syncTriggerSchedule } from '#application/triggers/schedules.js';
import type { AppDeps } from '../handler.js';
import type { HandlerMap } from '../handler.js';
import { confirmation } from '../handler.js';
import { listReply, requestedPage } from '../lists.js';
import { validateWorkflowDefinition } from '#application/workflows/validate-definition.js';
import { acceptedBreaks, checkInterfaceChange } from '#application/workflows/interface-check.js';
import {
  assertNoActiveExecutions,
  removeWorkflow,
} from '#application/workflows/remove-workflow.js';
import {
  applyWorkflows,
  type ApplyAction,
  type AppliedWorkflow,
} from '#application/workflows/apply-workflows.js';
import { noteAudit } from '../audit/operations.js';
import type { RequestProject } from '../projects/request-project.js';

/** 404 for a workflow id that names nothing; shared with the triggers area. */
export const workflowNotFound = (id: string) =>
  new NotFound(`Workflow "${id}" was not found.`, { code: 'workflow.not_found' });

/**
 * The workflow of the request's project; 404 when unknown or another project's (the same answer,
 * so that no id of another project is told apart). Shared with the triggers and executions areas.
 */
export async function findWorkflow(
  deps: AppDeps,
  project: RequestProject,
  workflowId: string,
): Promise<WorkflowRow> {
  const row = await workflowRepository.findById(deps.db, workflowId);
  if (!row || row.projectId !== project.id) throw workflowNotFound(workflowId);
  return row;
}

/** {@link findWorkflow} without the timestamps: what `GET /workflows/{id}` shows. */
async function findDefinition(
  deps: AppDeps,
  project: RequestProject,
  workflowId: string,
): Promise<StoredDefinition> {
  const row = await workflowRepository.findDefinitionById(deps.db, workflowId);
  if (!row || row.projectId !== project.id) throw workflowNotFound(workflowId);
  return row;
}

/** 400 unless an id repeated in the body, when given, equals the one in the path. */
export function assertSameId(field: string, inBody: string | undefined, inPath: string): void {
  if (inBody !== undefined && inBody.toLowerCase() !== inPath.toLowerCase()) {
    throw new Invalid({
      code: 'validation.id_mismatch',
      path: `body.${field}`,
      message: `must equal the ${field} in the path (${inPath}), got ${inBody}.`,
    });
  }
}

/** A definition as a request sends it: its JSON text (the seed's form), or the object. */
type DefinitionInput = string | WorkflowDefinition;

/**
 * The text to validate and store: the text as sent, or the object as compact JSON, so that
 * reads return the string form whichever form was sent.
 */
export function definitionText(definition: DefinitionInput): string {
  return typeof definition === 'string' ? definition : JSON.stringify(definition);
}

export function toListItem(row: WorkflowSummary) {
  return {
    id: row.id,
    name: row.name,
    modifiedDate: row.modifiedDate.toISOString(),
    revision: row.revision,
  };
}

const revisionNotFound = (workflow: { id: string; revision: number }, revision: number) =>
  new NotFound(
    `Workflow "${workflow.id}" has no revision ${revision} (its revisions are 1 to ${workflow.revision}).`,
    { code: 'revision.not_found' },
  );

/** `POST /workflows/Add` and its alias `POST /workflows`. */
async function addWorkflow({
  deps,
  project,
  body,
}: {
  deps: AppDeps;
  project: RequestProject;
  body: { definition: DefinitionInput };
}) {
  const text = definitionText(body.definition);
  const definition = await validateWorkflowDefinition(
    deps.db,
    project.id,
    text,
    deps.config.Definitions,
    deps.installedPlugins,
  );
  const row = await workflowRepository.insert(deps.db, {
    projectId: project.id,
    name: definition.name,
    definition: text,
  });
  return {
    data: { id: row.id, name: row.name },
    messages: [`Workflow "${row.name}" was created.`],
  };
}

const counted = (workflows: readonly AppliedWorkflow[], action: ApplyAction) =>
  workflows.filter((workflow) => workflow.action === action).length;

/** The apply's outcome in one sentence: `Applied: 1 created, 2 updated, 3 unchanged, 0 deleted.` */
function applySummary(workflows: readonly AppliedWorkflow[], dryRun: boolean): string {
  const verbs = dryRun
    ? ['to create', 'to update', 'unchanged', 'to delete']
    : ['created', 'updated', 'unchanged', 'deleted'];
  const actions: ApplyAction[] = ['created', 'updated', 'unchanged', 'deleted'];
  const counts = actions.map((action, at) => `${counted(workflows, action)} ${verbs[at]}`);
  return `${dryRun ? 'Dry run' : 'Applied'}: ${counts.join(', ')}.`;
}

/** `/workflows`: stored workflow definitions. */
export const workflowHandlers = {
  listWorkflows: async ({ deps, project, query }) =>
    listReply(
      await workflowRepository.list(deps.db, project.id, requestedPage(query)),
      query,
      toListItem,
    ),

  getWorkflow: async ({ deps, project, params }) => {
    const row = await findDefinition(deps, project, params.workflowId);
    return {
      data: { id: row.id, name: row.name, workflow: row.definition, revision: row.revision },
    };
  },

  listWorkflowRevisions: async ({ deps, project, params, query }) => {
    const workflow = await findDefinition(deps, project, params.workflowId);
    const paged = await workflowRepository.listRevisions(
      deps.db,
      workflow.id,
      requestedPage(query),
    );
    return listReply(paged, query, (row) => ({
      revision: row.revision,
      name: row.name,
      createdAt: row.createdAt.toISOString(),
      current: row.revision === workflow.revision,
      source: row.source,
    }));
  },

  getWorkflowRevision: async ({ deps, project, params }) => {
    const workflow = await findDefinition(deps, project, params.workflowId);
    const row = await workflowRepository.findRevision(deps.db, workflow.id, params.revision);
    if (!row) throw revisionNotFound(workflow, params.revision);
    return {
      data: {
        workflowId: workflow.id,
        revision: row.revision,
        name: row.name,
        workflow: row.definition,
        createdAt: row.createdAt.toISOString(),
        current: row.revision === workflow.revision,
        source: row.source,
      },
    };
  },

  addWorkflow,
  createWorkflow: addWorkflow,

  /** The audit entry names each workflow the apply stored or deleted, by action and name. */
  applyWorkflows: async ({ deps, project, body, req }) => {
    const dryRun = body.dryRun === true;
    const { workflows, accepted } = await applyWorkflows(
      { db: deps.db, temporal: deps.temporal, config: deps.config, plugins: deps.installedPlugins },
      {
        project,
        definitions: body.workflows.map(({ definition }) => definitionText(definition)),
        ...(body.source === undefined ? {} : { source: body.source }),
        dryRun,
        prune: body.prune === true,
        acceptBreaking: body.acceptBreaking === true,
      },
    );
    if (!dryRun) {
      const changed = workflows.filter(({ action, id }) => action !== 'unchanged' && id !== null);
      noteAudit(req, {
        targets: Object.fromEntries(
          changed.map(({ action, name, id }) => [`${action} ${name}`, id!]),
        ),
      });
    }
    return {
      data: { dryRun, workflows },
      messages: [
        applySummary(workflows, dryRun),
        ...accepted.map(({ name, breaks }) => `Workflow "${name}": ${acceptedBreaks(breaks)}`),
      ],
    };
  },

  /**
   * Public, without the envelope: the schema itself, for editors. Built on each request (well
   * under a millisecond for the built-ins), so it always follows what is installed.
   */
  getWorkflowDefinitionSchema: async ({ deps }) => ({
    raw: typedDefinitionSchema(await pluginRepository.list(deps.db)),
  }),

  /**
   * Replaces the definition with a new revision (the previous one is kept), unless it breaks the
   * declared inputs or outputs and the request does not accept that (interface-check.ts). A rename also refreshes the schedules of the workflow's TimeBased
   * triggers (they carry its name for the Temporal UI), inside the same transaction.
   */
  updateWorkflow: async ({ deps, project, params, query, body }) => {
    assertSameId('workflowId', body.workflowId, params.workflowId);
    const existing = await findWorkflow(deps, project, params.workflowId);
    const text = definitionText(body.definition);
    const definition = await validateWorkflowDefinition(
      deps.db,
      project.id,
      text,
      deps.config.Definitions,
      deps.installedPlugins,
      { id: existing.id },
    );
    const accepted = await checkInterfaceChange(
      deps.db,
      existing,
      definition,
      deps.config.Definitions,
      query.acceptBreaking === true,
    );
    const row = await deps.db.transaction().execute(async (trx) => {
      const updated = await workflowRepository.update(trx, existing.id, {
        name: definition.name,
        definition: text,
      });
      if (!updated) throw workflowNotFound(params.workflowId);
      if (updated.name !== existing.name) {
        for (const trigger of await triggerRepository.listByWorkflow(trx, updated.id)) {
          if (trigger.type !== 'TimeBased') continue;
          await syncTriggerSchedule(deps.temporal, deps.config, trigger, {
            ...updated,
            project: project.name,
          });
        }
      }
      return updated;
    });
    const updated = confirmation(`Workflow "${row.name}" was updated (revision ${row.revision}).`);
    if (accepted.length > 0) updated.messages.push(acceptedBreaks(accepted));
    return updated;
  },

  /**
   * Deletes the workflow, its triggers and their schedules. The rows go in a transaction that
   * commits only after Temporal dropped the schedules, so an unavailable Temporal (503) leaves
   * the workflow as it was.
   */
  deleteWorkflow: async ({ deps, project, params }) => {
    const row = await findWorkflow(deps, project, params.workflowId);
    await assertNoActiveExecutions(deps.db, row);
    await deps.db.transaction().execute(async (trx) => {
      if (!(await removeWorkflow(trx, deps.temporal, deps.config, project.name, row.id))) {
        throw workflowNotFound(row.id);
      }
    });
    return confirmation(`Workflow "${row.name}" was deleted.`);
  },
} satisfies Partial<HandlerMap>;
