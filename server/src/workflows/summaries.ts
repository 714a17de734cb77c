import * as workflowRepository from '#store/workflow-repository.js';
import * as triggerRepository from '#store/trigger-repository.js';
import { latestRunsOf, type RecentRun } from '#store/project-execution-repository.js';
import type { WorkflowTriggerRow } from '#store/tables.js';
import { cronProperties, nextFiringOf } from '#application/triggers/schedules.js';
import type { HandlerMap } from '../handler.js';
import { listReply, requestedPage } from '../lists.js';
import { toListItem } from './handlers.js';

/** Groups rows by their workflow, keeping their order. */
function byWorkflow<T extends { workflowId: string }>(rows: T[]): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const row of rows) {
    const group = groups.get(row.workflowId);
    if (group) group.push(row);
    else groups.set(row.workflowId, [row]);
  }
  return groups;
}

function toTriggerBrief(row: WorkflowTriggerRow, now: Date) {
  const { cron } = cronProperties(row.properties);
  return {
    id: row.id,
    type: row.type,
    status: row.status,
    cron: row.type === 'TimeBased' && typeof cron === 'string' ? cron : null,
    nextFiring: nextFiringOf(row, now)?.toISOString() ?? null,
  };
}

const toRecentRun = (run: RecentRun) => ({
  id: run.id,
  status: run.status,
  executionStart: run.executionStart.toISOString(),
});

/**
 * `GET /workflow-summaries`: the page `GET /workflows` lists, each workflow with its latest runs,
 * its triggers and its next firing, read in three queries whatever the page's size.
 */
export const workflowSummaryHandlers = {
  listWorkflowSummaries: async ({ deps, project, query }) => {
    const paged = await workflowRepository.list(deps.db, project.id, requestedPage(query));
    const ids = paged.items.map((workflow) => workflow.id);
    const [runs, triggers] = await Promise.all([
      latestRunsOf(deps.db, ids, query.runs ?? 10),
      triggerRepository.listByWorkflows(deps.db, ids),
    ]);
    const runsOf = byWorkflow(runs);
    const triggersOf = byWorkflow(triggers);
    const now = new Date();
    return listReply(paged, query, (workflow) => {
      const briefs = (triggersOf.get(workflow.id) ?? []).map((row) => toTriggerBrief(row, now));
      const firings = briefs.flatMap((brief) => (brief.nextFiring ? [brief.nextFiring] : []));
      return {
        ...toListItem(workflow),
        recentRuns: (runsOf.get(workflow.id) ?? []).map(toRecentRun),
        triggers: briefs,
        nextFiring: firings.sort()[0] ?? null,
      };
    });
  },
} satisfies Partial<HandlerMap>;
