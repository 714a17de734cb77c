/**
 * The audit trail, newest first: who changed what, where from, and how it was answered; filtered
 * by actor, operation and time, and by project for instance admins (anyone else reads the
 * project they work in). "Older entries" pages on from the last entry shown.
 */
import type { TrellisClient } from '@trellis/sdk';
import { useState } from 'preact/hooks';
import { Loading, OlderPager, useCursorPages } from '../components/common.js';
import { formatDateTime } from '../format.js';
import type { ProjectChoice } from '../session.js';

const pageSize = 50;

interface Filters {
  actor: string;
  operation: string;
  from: string;
  to: string;
  /** A project's id; '' for every project (instance admins only). */
  project: string;
}

interface AuditPageProps {
  client: TrellisClient;
  /** The project the console works in. */
  project: ProjectChoice | null;
  /** Every project, for an instance admin, who may read any of them or all; null for others. */
  projects: ProjectChoice[] | null;
}

export function AuditPage({ client, project, projects }: AuditPageProps) {
  const initial: Filters = {
    actor: '',
    operation: '',
    from: '',
    to: '',
    project: project?.id ?? '',
  };
  const [draft, setDraft] = useState<Filters>(initial);
  const [filters, setFilters] = useState<Filters>(initial);

  const query = (after?: string) => ({
    ...(filters.project ? { project: filters.project } : {}),
    ...(filters.actor.trim() ? { actor: filters.actor.trim() } : {}),
    ...(filters.operation.trim() ? { operation: filters.operation.trim() } : {}),
    ...(filters.from ? { from: new Date(filters.from).toISOString() } : {}),
    ...(filters.to ? { to: new Date(filters.to).toISOString() } : {}),
    ...(after ? { after } : {}),
    pageSize,
  });
  const {
    first,
    items: entries,
    restart,
    ...older
  } = useCursorPages(
    (after?: string) => client.GET('/audit', { params: { query: query(after) } }),
    [JSON.stringify(filters)],
    pageSize,
  );
  const field = (name: 'actor' | 'operation' | 'from' | 'to') => ({
    id: `audit-${name}`,
    value: draft[name],
    onInput: (event: { currentTarget: HTMLInputElement }) =>
      setDraft({ ...draft, [name]: event.currentTarget.value }),
  });

  return (
    <main id="main">
      <h1>Audit trail</h1>
      <p class="lead">
        Every change and decision, newest first
        {projects ? '' : ` in project ${project?.name ?? 'default'}`}.
      </p>
      <form
        class="filters"
        aria-label="Filter the audit trail"
        onSubmit={(event) => {
          event.preventDefault();
          restart();
          setFilters(draft);
        }}
      >
        {projects && (
          <div class="field">
            <label for="audit-project">Project</label>
            <select
              id="audit-project"
              value={draft.project}
              onChange={(event) => setDraft({ ...draft, project: event.currentTarget.value })}
            >
              <option value="">All projects</option>
              {projects.map(({ id, name }) => (
                <option key={id} value={id}>
                  {name}
                </option>
              ))}
            </select>
          </div>
        )}
        <div class="field">
          <label for="audit-actor">Actor</label>
          <input {...field('actor')} autocomplete="off" />
        </div>
        <div class="field">
          <label for="audit-operation">Operation</label>
          <input {...field('operation')} autocomplete="off" placeholder="createApiKey" />
        </div>
        <div class="field">
          <label for="audit-from">From</label>
          <input {...field('from')} type="datetime-local" />
        </div>
        <div class="field">
          <label for="audit-to">To</label>
          <input {...field('to')} type="datetime-local" />
        </div>
        <button type="submit" class="primary">
          Show entries
        </button>
      </form>
      <Loading loaded={first}>
        {() =>
          entries.length === 0 ? (
            <p class="muted">No entries match.</p>
          ) : (
            <>
              <div class="table-scroll" tabIndex={0} role="region" aria-label="Audit entries">
                <table class="audit">
                  <caption class="visually-hidden">Audit entries</caption>
                  <thead>
                    <tr>
                      <th scope="col">Time</th>
                      <th scope="col">Actor</th>
                      <th scope="col">Operation</th>
                      {projects && <th scope="col">Project</th>}
                      <th scope="col">Targets</th>
                      <th scope="col">Status</th>
                      <th scope="col">Request id</th>
                      <th scope="col">Address</th>
                    </tr>
                  </thead>
                  <tbody>
                    {entries.map((entry) => (
                      <tr key={entry.id} data-operation={entry.operation}>
                        <td class="nowrap">{formatDateTime(entry.at)}</td>
                        <td class="wrap">
                          {entry.actor} <span class="muted">({entry.actorKind})</span>
                        </td>
                        <td>{entry.operation}</td>
                        {projects && <td class="nowrap">{entry.project ?? '—'}</td>}
                        <td class="wrap">
                          {Object.entries(entry.targets).map(([name, value]) => (
                            <div key={name}>
                              {name}: <code>{value}</code>
                            </div>
                          ))}
                        </td>
                        <td>{entry.status}</td>
                        <td class="wrap">
                          <code>{entry.requestId ?? '—'}</code>
                        </td>
                        <td>{entry.address ?? '—'}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              <OlderPager pages={older} label="Older entries" oldest="The oldest entry is shown." />
            </>
          )
        }
      </Loading>
    </main>
  );
}
