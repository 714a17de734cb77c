import { Invalid } from '#definition/errors.js';
import { problemAt } from '#definition/validation/problem.js';
import { summarizeExecutions } from '#application/executions/summarize-executions.js';
import * as projectExecutionRepository from '#store/project-execution-repository.js';
import type { StartedThrough } from '#store/project-execution-repository.js';
import type { HandlerMap } from '../handler.js';
import { findWorkflow } from '../workflows/handlers.js';
import { iso } from './handlers.js';

/** The `trigger` filter (the contract's pattern has checked it): a word, or a trigger's id. */
function startedThrough(trigger: string): StartedThrough {
  if (trigger === 'manual' || trigger === 'TimeBased' || trigger === 'Webhook') return trigger;
  return { triggerId: trigger.toLowerCase() };
}

/** An optional RFC 3339 time of the query. */
const timeOf = (value: string | undefined) => (value === undefined ? undefined : new Date(value));

/** `/executions`: a project's executions across its workflows, listed and summarized. */
export const projectExecutionHandlers = {
  listAllExecutions: async ({ deps, project, query }) => {
    if (query.workflowId !== undefined) await findWorkflow(deps, project, query.workflowId);
    const from = timeOf(query.from);
    const to = timeOf(query.to);
    if (from && to && from.getTime() > to.getTime()) {
      throw new Invalid(problemAt('query.from', 'must not be after `to`'));
    }
    const items = await projectExecutionRepository.listProjectExecutions(
      deps.db,
      project.id,
      {
        ...(query.status !== undefined ? { statuses: query.status } : {}),
        ...(query.workflowId !== undefined ? { workflowId: query.workflowId } : {}),
        ...(query.trigger !== undefined ? { startedThrough: startedThrough(query.trigger) } : {}),
        ...(query.startedBy !== undefined ? { startedBy: query.startedBy } : {}),
        ...(from ? { from } : {}),
        ...(to ? { to } : {}),
      },
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
