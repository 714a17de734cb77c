/**
 * The executions explorer: the project's runs across its workflows, newest first, filtered by
 * status, workflow, how they were started, who started them and a time range (all applied by the
 * API, `GET /executions`). "Older runs" pages on from the last run shown. Runs selected by their
 * checkboxes, or every run matching the filter, are rerun or canceled together (`BulkAction`).
 */
import type { BulkSelection, components, TrellisClient } from '@trellis/sdk';
import { useState } from 'preact/hooks';
import {
  collect,
  Loading,
  shortId,
  OlderPager,
  useCursorPages,
  useLoad,
} from '../components/common.js';
import { StatusBadge } from '../components/status.js';
import { BulkAction, type BulkKind } from '../components/bulk-action.js';
import { durationBetween, formatDateTime } from '../format.js';
import { Link } from '../router.js';

type ExecutionStatus = components['schemas']['ExecutionStatus'];

const pageSize = 50;
const statuses: ExecutionStatus[] = [
  'Pending',
  'Running',
  'Paused',
  'Completed',
  'Failed',
  'Canceled',
];

interface Filters {
  statuses: ExecutionStatus[];
  workflowId: string;
  /** '' for any way; `manual`, `TimeBased` or `Webhook`. */
  trigger: string;
  startedBy: string;
  from: string;
  to: string;
}

const noFilters: Filters = {
  statuses: [],
  workflowId: '',
  trigger: '',
  startedBy: '',
  from: '',
  to: '',
};

export function ExecutionsPage({ client }: { client: TrellisClient }) {
  const [draft, setDraft] = useState<Filters>(noFilters);
  const [filters, setFilters] = useState<Filters>(noFilters);
  /** The runs ticked, or every run matching the filter. */
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [allMatching, setAllMatching] = useState(false);
  const [action, setAction] = useState<{
    kind: BulkKind;
    selection: BulkSelection;
    described: string;
  }>();
  const [refreshes, setRefreshes] = useState(0);
  const workflows = useLoad(
    () => collect(client.all('/workflows', { params: { query: { pageSize: 1000 } } })),
    [],
  );

  const filter = {
    ...(filters.statuses.length > 0 ? { status: filters.statuses } : {}),
    ...(filters.workflowId ? { workflowId: filters.workflowId } : {}),
    ...(filters.trigger ? { trigger: filters.trigger } : {}),
    ...(filters.startedBy.trim() ? { startedBy: filters.startedBy.trim() } : {}),
    ...(filters.from ? { from: new Date(filters.from).toISOString() } : {}),
    ...(filters.to ? { to: new Date(filters.to).toISOString() } : {}),
  };
  const filtered = Object.keys(filter).length > 0;
  const query = (after?: string) => ({ ...filter, ...(after ? { after } : {}), pageSize });
  const {
    first,
    items: runs,
    restart,
    ...older
  } = useCursorPages(
    (after?: string) => client.GET('/executions', { params: { query: query(after) } }),
    [JSON.stringify(filters), refreshes],
    pageSize,
  );
  const clearSelection = () => {
    setSelected(new Set());
    setAllMatching(false);
  };
  const tick = (id: string, on: boolean) => {
    const next = new Set(selected);
    if (on) next.add(id);
    else next.delete(id);
    setSelected(next);
    setAllMatching(false);
  };
  const open = (kind: BulkKind) =>
    setAction({
      kind,
      selection: allMatching ? { filter } : { ids: [...selected] },
      described: allMatching
        ? 'every run matching the filter'
        : `${selected.size} selected run${selected.size === 1 ? '' : 's'}`,
    });
  const chosen = allMatching || selected.size > 0;
  const text = (name: 'startedBy' | 'from' | 'to') => ({
    id: `executions-${name}`,
    value: draft[name],
    onInput: (event: { currentTarget: HTMLInputElement }) =>
      setDraft({ ...draft, [name]: event.currentTarget.value }),
  });
  const toggle = (status: ExecutionStatus, on: boolean) =>
    setDraft({
      ...draft,
      statuses: on
        ? statuses.filter((each) => each === status || draft.statuses.includes(each))
        : draft.statuses.filter((each) => each !== status),
    });

  return (
    <main id="main">
      <h1>Executions</h1>
      <p class="lead">The runs of every workflow, newest first.</p>
      <form
        class="filters"
        aria-label="Filter the executions"
        onSubmit={(event) => {
          event.preventDefault();
          restart();
          clearSelection();
          setAction(undefined);
          setFilters(draft);
          // The same filters again read the runs as they are now.
          setRefreshes((count) => count + 1);
        }}
      >
        <fieldset class="field statuses">
          <legend>Status</legend>
          {statuses.map((status) => (
            <label key={status} class="check">
              <input
                type="checkbox"
                checked={draft.statuses.includes(status)}
                onChange={(event) => toggle(status, event.currentTarget.checked)}
              />
              {status === 'Paused' ? 'Waiting for approval' : status}
            </label>
          ))}
        </fieldset>
        <div class="field">
          <label for="executions-workflow">Workflow</label>
          <select
            id="executions-workflow"
            value={draft.workflowId}
            onChange={(event) => setDraft({ ...draft, workflowId: event.currentTarget.value })}
          >
            <option value="">All workflows</option>
            {(workflows.data ?? []).map(({ id, name }) => (
              <option key={id} value={id}>
                {name}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="executions-trigger">Started</label>
          <select
            id="executions-trigger"
            value={draft.trigger}
            onChange={(event) => setDraft({ ...draft, trigger: event.currentTarget.value })}
          >
            <option value="">Any way</option>
            <option value="manual">By a person or a run</option>
            <option value="TimeBased">On a schedule</option>
            <option value="Webhook">By a webhook</option>
          </select>
        </div>
        <div class="field">
          <label for="executions-startedBy">Started by</label>
          <input {...text('startedBy')} autocomplete="off" />
        </div>
        <div class="field">
          <label for="executions-from">From</label>
          <input {...text('from')} type="datetime-local" />
        </div>
        <div class="field">
          <label for="executions-to">To</label>
          <input {...text('to')} type="datetime-local" />
        </div>
        <button type="submit" class="primary">
          Show runs
        </button>
      </form>
      {action && (
        <BulkAction
          client={client}
          {...action}
          onClose={() => setAction(undefined)}
          onDone={() => {
            clearSelection();
            restart();
            setRefreshes((count) => count + 1);
          }}
        />
      )}
      <Loading loaded={first}>
        {() =>
          runs.length === 0 ? (
            <p class="muted">No runs match.</p>
          ) : (
            <>
              <div class="bulk-bar" role="group" aria-label="Act on the selected runs">
                <span class="muted" role="status">
                  {allMatching
                    ? 'Every run matching the filter is selected.'
                    : `${selected.size} selected.`}
                </span>
                <button
                  type="button"
                  disabled={!filtered || allMatching}
                  title={filtered ? undefined : 'Filter the runs first'}
                  onClick={() => {
                    setSelected(new Set(runs.map((run) => run.id)));
                    setAllMatching(true);
                  }}
                >
                  Select all matching the filter
                </button>
                {chosen && (
                  <button type="button" onClick={clearSelection}>
                    Clear selection
                  </button>
                )}
                <button type="button" disabled={!chosen} onClick={() => open('rerun')}>
                  Rerun…
                </button>
                <button type="button" disabled={!chosen} onClick={() => open('cancel')}>
                  Cancel…
                </button>
              </div>
              <div class="table-scroll">
                <table class="executions">
                  <caption class="visually-hidden">Executions</caption>
                  <thead>
                    <tr>
                      <th scope="col">
                        <input
                          type="checkbox"
                          aria-label="Select every run shown"
                          checked={runs.every((run) => allMatching || selected.has(run.id))}
                          onChange={(event) => {
                            setAllMatching(false);
                            setSelected(
                              event.currentTarget.checked
                                ? new Set(runs.map((run) => run.id))
                                : new Set(),
                            );
                          }}
                        />
                      </th>
                      <th scope="col">Run</th>
                      <th scope="col">Workflow</th>
                      <th scope="col">Status</th>
                      <th scope="col">Started</th>
                      <th scope="col">Took</th>
                    </tr>
                  </thead>
                  <tbody>
                    {runs.map((run) => (
                      <tr key={run.id} data-execution={run.id}>
                        <td>
                          <input
                            type="checkbox"
                            aria-label={`Select run ${shortId(run.id)}`}
                            checked={allMatching || selected.has(run.id)}
                            onChange={(event) => tick(run.id, event.currentTarget.checked)}
                          />
                        </td>
                        <td>
                          <Link to={`/workflows/${run.workflowId}/runs/${run.id}`}>
                            Run {shortId(run.id)}
                          </Link>
                        </td>
                        <td class="wrap">
                          <Link to={`/workflows/${run.workflowId}`}>{run.workflowName}</Link>
                        </td>
                        <td>
                          <StatusBadge status={run.status} />
                          {run.dryRun && <span class="badge dry-run">Dry run</span>}
                        </td>
                        <td class="nowrap">{formatDateTime(run.executionStart)}</td>
                        <td class="nowrap">
                          {run.executionEnd
                            ? durationBetween(run.executionStart, run.executionEnd)
                            : '—'}
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              <OlderPager pages={older} label="Older runs" oldest="The oldest run is shown." />
            </>
          )
        }
      </Loading>
    </main>
  );
}
