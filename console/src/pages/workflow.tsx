/**
 * One workflow: its DAG, the form that starts a run (from its declared inputs), its triggers and
 * its runs, newest first.
 */
import type { TrellisClient } from '@trellis/sdk';
import { useMemo, useState } from 'preact/hooks';
import { DagView } from '../components/dag-view.js';
import { InputsForm } from '../components/inputs-form.js';
import { Loading, Pager, shortId, useLoad } from '../components/common.js';
import { StatusBadge } from '../components/status.js';
import { parseDefinitionText } from '../definition.js';
import { durationBetween, formatDateTime } from '../format.js';
import { Link, navigate } from '../router.js';
import { revisionsPath } from './revisions.js';

const runsPerPage = 10;

export function WorkflowPage({
  client,
  workflowId,
}: {
  client: TrellisClient;
  workflowId: string;
}) {
  const workflow = useLoad(
    () => client.GET('/workflows/{workflowId}', { params: { path: { workflowId } } }),
    [workflowId],
  );
  return (
    <main id="main">
      <Loading loaded={workflow}>
        {(detail) => (
          <WorkflowDetail
            client={client}
            workflowId={workflowId}
            name={detail.name}
            text={detail.workflow}
            revision={detail.revision}
          />
        )}
      </Loading>
    </main>
  );
}

interface DetailProps {
  client: TrellisClient;
  workflowId: string;
  name: string;
  text: string;
  revision: number;
}

function WorkflowDetail({ client, workflowId, name, text, revision }: DetailProps) {
  const definition = useMemo(() => parseDefinitionText(text), [text]);
  const start = async (inputs: Record<string, unknown>) => {
    const started = await client.POST('/workflows/{workflowId}/executions', {
      params: { path: { workflowId } },
      body: { workflowId, inputs },
    });
    navigate(`/workflows/${workflowId}/runs/${started.executionId}`);
  };
  return (
    <>
      <div class="page-head">
        <div>
          <p class="crumbs">
            <Link to="/workflows">Workflows</Link> /
          </p>
          <h1>
            {name} <span class="badge">revision {revision}</span>
          </h1>
          {definition?.description && <p class="lead">{definition.description}</p>}
        </div>
        <Link to={`/workflows/${workflowId}/edit`} class="button">
          Edit definition
        </Link>
      </div>
      <section aria-labelledby="graph-heading">
        <h2 id="graph-heading">Graph</h2>
        {definition ? (
          <DagView definition={definition} label={`Tasks of ${name}`} />
        ) : (
          <p class="muted">The stored definition cannot be read as JSON.</p>
        )}
      </section>
      <div class="columns">
        <section aria-labelledby="run-heading">
          <h2 id="run-heading">Start a run</h2>
          <InputsForm
            declarations={definition?.inputs ?? {}}
            submitLabel="Start run"
            onSubmit={start}
          />
        </section>
        <section aria-labelledby="triggers-heading">
          <h2 id="triggers-heading">Triggers</h2>
          <Triggers client={client} workflowId={workflowId} />
          <p>
            <Link to={`/workflows/${workflowId}/triggers`}>Manage triggers</Link>
          </p>
        </section>
      </div>
      <section aria-labelledby="runs-heading">
        <h2 id="runs-heading">Runs</h2>
        <Runs client={client} workflowId={workflowId} />
      </section>
      <section aria-labelledby="revisions-heading">
        <h2 id="revisions-heading">Revisions</h2>
        <Revisions
          client={client}
          workflowId={workflowId}
          current={text}
          currentRevision={revision}
        />
      </section>
    </>
  );
}

function Triggers({ client, workflowId }: { client: TrellisClient; workflowId: string }) {
  const triggers = useLoad(
    () => client.GET('/workflows/{workflowId}/triggers', { params: { path: { workflowId } } }),
    [workflowId],
  );
  return (
    <Loading loaded={triggers}>
      {(list) =>
        list.length === 0 ? (
          <p class="muted">None: runs start here, from the API or the CLI.</p>
        ) : (
          <ul class="plain-list">
            {list.map((trigger) => (
              <li key={trigger.id}>
                <strong>{trigger.type}</strong>{' '}
                <span class={`badge trigger-${trigger.status}`}>
                  {trigger.status === 'Active' ? 'active' : 'paused'}
                </span>
                {trigger.type === 'Webhook' && (
                  <>
                    {' '}
                    <code>POST /hooks/{trigger.id}</code>
                    {typeof trigger.properties.signature === 'string' &&
                      ` (${trigger.properties.signature})`}
                  </>
                )}
                {typeof trigger.properties.cron === 'string' && (
                  <>
                    {' '}
                    <code>{trigger.properties.cron}</code>
                    {typeof trigger.properties.timezone === 'string' &&
                      ` (${trigger.properties.timezone})`}
                  </>
                )}
              </li>
            ))}
          </ul>
        )
      }
    </Loading>
  );
}

function Runs({ client, workflowId }: { client: TrellisClient; workflowId: string }) {
  const [page, setPage] = useState(1);
  const runs = useLoad(
    () =>
      client.page('/workflows/{workflowId}/executions', {
        params: { path: { workflowId }, query: { page, pageSize: runsPerPage } },
      }),
    [workflowId, page],
  );
  return (
    <Loading loaded={runs}>
      {({ data, pagination }) =>
        data.length === 0 ? (
          <p class="muted">No runs yet.</p>
        ) : (
          <>
            <div class="table-scroll">
              <table>
                <caption class="visually-hidden">Runs, newest first</caption>
                <thead>
                  <tr>
                    <th scope="col">Run</th>
                    <th scope="col">Status</th>
                    <th scope="col">Started</th>
                    <th scope="col">Took</th>
                  </tr>
                </thead>
                <tbody>
                  {data.map((run) => (
                    <tr key={run.id}>
                      <td>
                        <Link
                          to={`/workflows/${workflowId}/runs/${run.id}`}
                          aria-label={`Run ${run.id}`}
                        >
                          <code>{shortId(run.id)}</code>
                        </Link>
                      </td>
                      <td>
                        <StatusBadge status={run.status} />
                        {run.dryRun && <span class="badge dry-run">Dry run</span>}
                      </td>
                      <td>{formatDateTime(run.executionStart)}</td>
                      <td>
                        {run.executionEnd
                          ? durationBetween(run.executionStart, run.executionEnd)
                          : '—'}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            <Pager
              page={pagination.page}
              totalPages={pagination.totalPages}
              totalCount={pagination.totalCount}
              label="Run pages"
              onPage={setPage}
            />
          </>
        )
      }
    </Loading>
  );
}

const revisionsPerPage = 10;

interface RevisionsProps {
  client: TrellisClient;
  workflowId: string;
  /** The current revision's definition, which an earlier one is compared with. */
  current: string;
  currentRevision: number;
}

/**
 * Every definition the workflow has had, newest first; one of them drawn on request, beside its
 * changes to the current one.
 */
function Revisions({ client, workflowId, current, currentRevision }: RevisionsProps) {
  const [page, setPage] = useState(1);
  const [shown, setShown] = useState<number | null>(null);
  const revisions = useLoad(
    () =>
      client.page('/workflows/{workflowId}/revisions', {
        params: { path: { workflowId }, query: { page, pageSize: revisionsPerPage } },
      }),
    [workflowId, page],
  );
  return (
    <Loading loaded={revisions}>
      {({ data, pagination }) => (
        <>
          <div class="table-scroll">
            <table>
              <caption class="visually-hidden">Revisions, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">Revision</th>
                  <th scope="col">Name</th>
                  <th scope="col">Stored</th>
                  <th scope="col">Definition</th>
                  <th scope="col">Side by side</th>
                </tr>
              </thead>
              <tbody>
                {data.map((revision) => (
                  <tr key={revision.revision}>
                    <td>
                      {revision.revision} {revision.current && <span class="badge">current</span>}
                    </td>
                    <td>{revision.name}</td>
                    <td>{formatDateTime(revision.createdAt)}</td>
                    <td>
                      <button
                        type="button"
                        class="link"
                        aria-expanded={shown === revision.revision}
                        onClick={() =>
                          setShown((before) =>
                            before === revision.revision ? null : revision.revision,
                          )
                        }
                      >
                        {shown === revision.revision ? 'Hide' : 'Show'} revision {revision.revision}
                      </button>
                    </td>
                    <td>
                      {revision.revision !== currentRevision ? (
                        <Link to={revisionsPath(workflowId, revision.revision, currentRevision)}>
                          Compare revision {revision.revision} with the current one
                        </Link>
                      ) : revision.revision > 1 ? (
                        <Link
                          to={revisionsPath(workflowId, revision.revision - 1, revision.revision)}
                        >
                          Compare with revision {revision.revision - 1}
                        </Link>
                      ) : (
                        '—'
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <Pager
            page={pagination.page}
            totalPages={pagination.totalPages}
            totalCount={pagination.totalCount}
            label="Revision pages"
            onPage={setPage}
          />
          {shown !== null && (
            <RevisionView
              client={client}
              workflowId={workflowId}
              revision={shown}
              current={current}
            />
          )}
        </>
      )}
    </Loading>
  );
}

function RevisionView({
  client,
  workflowId,
  revision,
  current,
}: Omit<RevisionsProps, 'currentRevision'> & { revision: number }) {
  const detail = useLoad(
    () =>
      Promise.all([
        client.GET('/workflows/{workflowId}/revisions/{revision}', {
          params: { path: { workflowId, revision } },
        }),
        // CodeMirror, for the comparison: loaded when a revision is shown.
        import('../components/code-editor.js'),
      ]),
    [workflowId, revision],
  );
  return (
    <Loading loaded={detail}>
      {([stored, { TextComparison }]) => {
        const definition = parseDefinitionText(stored.workflow);
        return (
          <div class="revision">
            <h3>Revision {stored.revision}</h3>
            {definition && (
              <DagView definition={definition} label={`Tasks of revision ${stored.revision}`} />
            )}
            <details>
              <summary>Its definition (JSON)</summary>
              <pre class="json" tabIndex={0}>
                {stored.workflow}
              </pre>
            </details>
            {stored.workflow !== current && (
              <>
                <h4>Its changes to the current revision</h4>
                <TextComparison
                  before={stored.workflow}
                  after={current}
                  beforeLabel={`Revision ${stored.revision}`}
                  afterLabel="Current revision"
                />
              </>
            )}
          </div>
        );
      }}
    </Loading>
  );
}
