/**
 * The workflows: a page of them at a time, or those whose name holds the search text, each with
 * its last run's status, its latest runs as marks, its triggers and its next firing (one request
 * a page: `GET /workflow-summaries`). The API lists workflows without a name filter, so a search
 * reads all of them (1,000 a request) and pages the matches here.
 */
import type { components, TrellisClient } from '@trellis/sdk';
import { useState } from 'preact/hooks';
import { Loading, Pager, shortId, useLoad } from '../components/common.js';
import { StatusBadge, statusLabel } from '../components/status.js';
import { formatDateTime } from '../format.js';
import { Link } from '../router.js';

const pageSize = 20;
/** How many of each workflow's latest runs are drawn as marks. */
const recentRuns = 10;

type WorkflowRow = components['schemas']['WorkflowSummary'];

interface Listing {
  rows: WorkflowRow[];
  page: number;
  totalPages: number;
  totalCount: number;
}

export function WorkflowsPage({ client }: { client: TrellisClient }) {
  const [search, setSearch] = useState('');
  const [page, setPage] = useState(1);
  const term = search.trim().toLowerCase();
  const listing = useLoad<Listing>(async () => {
    if (term === '') {
      const { data, pagination } = await client.page('/workflow-summaries', {
        params: { query: { page, pageSize, runs: recentRuns } },
      });
      return {
        rows: data,
        page,
        totalPages: pagination.totalPages,
        totalCount: pagination.totalCount,
      };
    }
    const matches: WorkflowRow[] = [];
    for await (const workflow of client.all('/workflow-summaries', {
      params: { query: { pageSize: 1000, runs: recentRuns } },
    })) {
      if (workflow.name.toLowerCase().includes(term)) matches.push(workflow);
    }
    const totalPages = Math.max(1, Math.ceil(matches.length / pageSize));
    const shown = Math.min(page, totalPages);
    return {
      rows: matches.slice((shown - 1) * pageSize, shown * pageSize),
      page: shown,
      totalPages,
      totalCount: matches.length,
    };
  }, [term, page]);

  return (
    <main id="main">
      <div class="page-head">
        <h1>Workflows</h1>
        <Link to="/workflows/new" class="button primary">
          New workflow
        </Link>
      </div>
      <form class="search" role="search" onSubmit={(event) => event.preventDefault()}>
        <label for="workflow-search">Search by name</label>
        <input
          id="workflow-search"
          type="search"
          value={search}
          onInput={(event) => {
            setSearch(event.currentTarget.value);
            setPage(1);
          }}
        />
      </form>
      <Loading loaded={listing}>
        {(found) =>
          found.rows.length === 0 ? (
            <p class="muted">
              {term ? `No workflow's name holds "${search.trim()}".` : 'No workflows yet.'}
            </p>
          ) : (
            <>
              <div class="table-scroll">
                <table>
                  <caption class="visually-hidden">Workflows</caption>
                  <thead>
                    <tr>
                      <th scope="col">Name</th>
                      <th scope="col">Last run</th>
                      <th scope="col">Latest runs</th>
                      <th scope="col">Triggers</th>
                      <th scope="col">Next firing</th>
                      <th scope="col">Last changed</th>
                    </tr>
                  </thead>
                  <tbody>
                    {found.rows.map((workflow) => (
                      <tr key={workflow.id} data-workflow={workflow.id}>
                        <td class="wrap">
                          <Link to={`/workflows/${workflow.id}`}>{workflow.name}</Link>
                        </td>
                        <td class="last-run">
                          {workflow.recentRuns[0] ? (
                            <StatusBadge status={workflow.recentRuns[0].status} />
                          ) : (
                            <span class="muted">never run</span>
                          )}
                        </td>
                        <td>
                          <RunMarks workflow={workflow} />
                        </td>
                        <td>
                          <TriggerCounts workflow={workflow} />
                        </td>
                        <td class="nowrap">{formatDateTime(workflow.nextFiring)}</td>
                        <td class="nowrap">{formatDateTime(workflow.modifiedDate)}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              <Pager
                page={found.page}
                totalPages={found.totalPages}
                totalCount={found.totalCount}
                label="Workflow pages"
                onPage={setPage}
              />
            </>
          )
        }
      </Loading>
    </main>
  );
}

/** The latest runs as coloured marks, oldest first so the newest is at the end; each a link. */
function RunMarks({ workflow }: { workflow: WorkflowRow }) {
  if (workflow.recentRuns.length === 0) return <span class="muted">—</span>;
  const runs = [...workflow.recentRuns].reverse();
  return (
    <ol class="run-marks" aria-label={`Latest runs of ${workflow.name}, oldest first`}>
      {runs.map((run) => {
        const label = `Run ${shortId(run.id)}: ${statusLabel(run.status)}, started ${formatDateTime(run.executionStart)}`;
        return (
          <li key={run.id}>
            <Link
              to={`/workflows/${workflow.id}/runs/${run.id}`}
              class="run-mark"
              aria-label={label}
            >
              <span class={`badge status-${run.status}`} aria-hidden="true" title={label} />
            </Link>
          </li>
        );
      })}
    </ol>
  );
}

const triggerWords = { TimeBased: 'schedule', Webhook: 'webhook', Manual: 'manual' } as const;

/** The workflow's triggers by type (`2 schedules, 1 webhook`), linking to its triggers page. */
function TriggerCounts({ workflow }: { workflow: WorkflowRow }) {
  if (workflow.triggers.length === 0) return <span class="muted">none</span>;
  const counts = new Map<string, number>();
  for (const trigger of workflow.triggers) {
    const word = triggerWords[trigger.type];
    counts.set(word, (counts.get(word) ?? 0) + 1);
  }
  const paused = workflow.triggers.filter((trigger) => trigger.status !== 'Active').length;
  const words = [...counts].map(([word, count]) => `${count} ${word}${count === 1 ? '' : 's'}`);
  return (
    <Link to={`/workflows/${workflow.id}/triggers`}>
      {words.join(', ')}
      {paused > 0 && ` (${paused} paused)`}
    </Link>
  );
}
