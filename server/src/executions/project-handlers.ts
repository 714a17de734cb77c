import { Invalid } from '#definition/errors.js';
import { problemAt, renderProblem } from '#definition/validation/problem.js';
import {
  cancelExecutions,
  rerunExecutions,
  type BulkOutcome,
  type BulkResult,
  type ExecutionSelection,
} from '#application/executions/bulk-executions.js';
import { withExecutionLog } from '#application/executions/start-execution.js';
import { summarizeExecutions } from '#application/executions/summarize-executions.js';
import * as projectExecutionRepository from '#store/project-execution-repository.js';
import type {
  ProjectExecutionFilter,
  StartedThrough,
} from '#store/project-execution-repository.js';
import { noteAudit } from '../audit/operations.js';
import type { AppDeps, HandlerMap, RequestBody } from '../handler.js';
import type { RequestProject } from '../projects/request-project.js';
import { findWorkflow } from '../workflows/handlers.js';
import { iso } from './handlers.js';

/** The `trigger` filter (the contract's pattern has checked it): a word, or a trigger's id. */
function startedThrough(trigger: string): StartedThrough {
  if (trigger === 'manual' || trigger === 'TimeBased' || trigger === 'Webhook') return trigger;
  return { triggerId: trigger.toLowerCase() };
}

/** An optional RFC 3339 time of the query. */
const timeOf = (value: string | undefined) => (value === undefined ? undefined : new Date(value));

/** The explorer's filters (the query's, or a bulk action's `body.filter`), checked. */
async function executionFilter(
  deps: AppDeps,
  project: RequestProject,
  given: FilterFields,
  at: string,
): Promise<ProjectExecutionFilter> {
  if (given.workflowId !== undefined) await findWorkflow(deps, project, given.workflowId);
  const from = timeOf(given.from);
  const to = timeOf(given.to);
  if (from && to && from.getTime() > to.getTime()) {
    throw new Invalid(problemAt(`${at}.from`, 'must not be after `to`'));
  }
  return {
    ...(given.status !== undefined ? { statuses: given.status } : {}),
    ...(given.workflowId !== undefined ? { workflowId: given.workflowId } : {}),
    ...(given.trigger !== undefined ? { startedThrough: startedThrough(given.trigger) } : {}),
    ...(given.startedBy !== undefined ? { startedBy: given.startedBy } : {}),
    ...(from ? { from } : {}),
    ...(to ? { to } : {}),
  };
}

type FilterFields = Extract<RequestBody<'cancelExecutions'>, { filter: unknown }>['filter'];

/** A bulk action's selection: `ids`, or a `filter` (the contract's `oneOf` has checked it is one). */
async function selectionOf(
  deps: AppDeps,
  project: RequestProject,
  selection: RequestBody<'cancelExecutions'> | RequestBody<'rerunExecutions'>,
): Promise<ExecutionSelection> {
  if ('ids' in selection) return { ids: selection.ids };
  return { filter: await executionFilter(deps, project, selection.filter, 'body.filter') };
}

/** One selected execution as the answer shows it. */
function bulkItem(result: BulkResult) {
  const { execution, reason } = result;
  return {
    executionId: result.executionId,
    workflowId: execution?.workflowId ?? null,
    workflowName: execution?.workflowName ?? null,
    status: execution?.status ?? null,
    outcome: result.outcome,
    reason: reason && {
      code: reason.code,
      message: renderProblem(reason),
      ...(reason.path === undefined ? {} : { path: reason.path }),
    },
  };
}

function countsOf(results: readonly BulkResult[]) {
  const count = (outcomes: BulkOutcome[]) =>
    results.filter((result) => outcomes.includes(result.outcome)).length;
  return {
    selected: results.length,
    acted: count(['WouldAct', 'Done']),
    skipped: count(['Skipped']),
    notDone: count(['NotDone']),
  };
}

const executions = (count: number) => `${count} execution${count === 1 ? '' : 's'}`;

/** What a bulk action did, in one line: how many, and how many skipped or left. */
function bulkSummary(
  counts: ReturnType<typeof countsOf>,
  preview: boolean,
  did: { would: string; done: string },
): string {
  const acted = `${executions(counts.acted)} ${preview ? did.would : did.done}`;
  const skipped = counts.skipped > 0 ? `; ${counts.skipped} skipped` : '';
  const left =
    counts.notDone > 0
      ? `; ${counts.notDone} not done (a project limit): send them again later`
      : '';
  return `${acted}${skipped}${left}.`;
}

/** `/executions`: a project's executions across its workflows, listed, summarized, and acted on in bulk. */
export const projectExecutionHandlers = {
  listAllExecutions: async ({ deps, project, query }) => {
    const filter = {
      ...(await executionFilter(deps, project, query, 'query')),
      ...(query.dryRun !== undefined ? { dryRun: query.dryRun } : {}),
    };
    const items = await projectExecutionRepository.listProjectExecutions(
      deps.db,
      project.id,
      filter,
      {
        ...(query.after !== undefined ? { after: query.after } : {}),
        limit: query.pageSize ?? 100,
      },
    );
    return {
      data: items.map((item) => ({
        id: item.id,
        status: item.status,
        executionStart: item.executionStart.toISOString(),
        executionEnd: iso(item.executionEnd),
        dryRun: item.dryRun,
        workflowId: item.workflowId,
        workflowName: item.workflowName,
      })),
    };
  },

  /** The audit entry names each execution rerun (`rerun <id>`) with its new execution. */
  rerunExecutions: async ({ deps, project, body, user, log, req }) => {
    const preview = body.preview === true;
    const revision = body.revision ?? 'ran';
    const { results, stoppedBy } = await rerunExecutions(
      withExecutionLog(deps, log),
      project.id,
      await selectionOf(deps, project, body),
      { revision, preview, startedBy: user.name },
    );
    const done = results.filter((result) => result.newExecutionId !== null);
    if (done.length > 0) {
      noteAudit(req, {
        targets: Object.fromEntries(
          done.map((result) => [`rerun ${result.executionId}`, result.newExecutionId!]),
        ),
      });
    }
    const counts = countsOf(results);
    const on = revision === 'latest' ? 'on the latest revision' : 'on the revision they ran';
    return {
      data: {
        preview,
        revision,
        counts,
        executions: results.map((result) => ({
          ...bulkItem(result),
          ranRevision: result.execution?.revision ?? null,
          rerunRevision: result.rerunRevision,
          newExecutionId: result.newExecutionId,
        })),
      },
      messages: [
        bulkSummary(counts, preview, { would: `would be rerun ${on}`, done: `rerun ${on}` }),
      ],
      ...(stoppedBy
        ? {
            stoppedPartWay: { status: 429, problems: stoppedBy.problems },
            headers: { 'Retry-After': String(stoppedBy.retryAfterSeconds) },
          }
        : {}),
    };
  },

  /** The audit entry names each execution whose cancel was requested (`canceled <id>`). */
  cancelExecutions: async ({ deps, project, body, user, log, req }) => {
    const preview = body.preview === true;
    const { results } = await cancelExecutions(
      withExecutionLog(deps, log),
      project.id,
      await selectionOf(deps, project, body),
      { preview, requestedBy: user.name, log },
    );
    const done = results.filter((result) => result.outcome === 'Done');
    if (done.length > 0) {
      noteAudit(req, {
        targets: Object.fromEntries(
          done.map((result) => [`canceled ${result.executionId}`, result.executionId]),
        ),
      });
    }
    const counts = countsOf(results);
    return {
      data: { preview, counts, executions: results.map(bulkItem) },
      messages: [
        bulkSummary(counts, preview, {
          would: 'would be canceled',
          done: 'asked to stop (cancellation requested)',
        }),
      ],
    };
  },

  summarizeExecutions: async ({ deps, project, query }) => {
    const from = timeOf(query.from);
    const to = timeOf(query.to);
    const summary = await summarizeExecutions(deps.db, project.id, {
      ...(from ? { from } : {}),
      ...(to ? { to } : {}),
      bucket: query.bucket ?? 'hour',
      failures: query.failures ?? 10,
    });
    return {
      data: {
        ...summary,
        from: summary.from.toISOString(),
        to: summary.to.toISOString(),
        buckets: summary.buckets.map((bucket) => ({
          start: bucket.start.toISOString(),
          counts: bucket.counts,
        })),
        recentFailures: summary.recentFailures.map((failure) => ({
          ...failure,
          executionStart: failure.executionStart.toISOString(),
          executionEnd: iso(failure.executionEnd),
        })),
      },
    };
  },
} satisfies Partial<HandlerMap>;
