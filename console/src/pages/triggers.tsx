/**
 * Triggers: a workflow's (listed, created, edited, deleted), one trigger's page (a TimeBased
 * one's next firings and backfill, a Webhook one's address, secret rotation and delivery log),
 * and the project's triggers across its workflows.
 */
import type { components, TrellisClient } from '@trellis/sdk';
import { useState } from 'preact/hooks';
import {
  collect,
  Loading,
  messagesOf,
  Problems,
  shortId,
  OlderPager,
  useCursorPages,
  useLoad,
} from '../components/common.js';
import { ConfirmAction, RowActions } from '../components/confirm-action.js';
import { ShownOnce } from '../components/shown-once.js';
import { StatusBadge } from '../components/status.js';
import { TriggerForm } from '../components/trigger-form.js';
import { formatDateTime } from '../format.js';
import { Link } from '../router.js';
import {
  comesToSign,
  draftOf,
  newWebhookSecret,
  newDraft,
  overlaps,
  triggerSummary,
  type ScheduleOverlap,
  type Trigger,
  type TriggerCreate,
} from '../triggers.js';

type TriggerStatus = components['schemas']['TriggerStatus'];

const typeNames = { TimeBased: 'Schedule', Webhook: 'Webhook', Manual: 'Manual' } as const;

function TriggerStatusBadge({ status }: { status: TriggerStatus }) {
  return <span class={`badge trigger-${status}`}>{status === 'Active' ? 'active' : 'paused'}</span>;
}

/** The address another system posts a Webhook trigger's deliveries to. */
const hookUrl = (triggerId: string) => `${location.origin}/hooks/${triggerId}`;

/** A secret just generated (on creation or rotation), shown this once. */
interface FreshSecret {
  triggerId: string;
  secret: string;
}

function WebhookSecretOnce({
  fresh,
  level,
  id = 'webhook-secret',
}: {
  fresh: FreshSecret;
  level?: 2 | 3;
  id?: string;
}) {
  return (
    <ShownOnce
      level={level}
      id={id}
      title={`Signing secret of trigger ${shortId(fresh.triggerId)}`}
      label="The signing secret"
      secret={fresh.secret}
    >
      Copy the secret now and give it to the system that sends the webhooks: it is shown only this
      once. Trellis keeps it encrypted and shows it masked from now on.
    </ShownOnce>
  );
}

interface WorkflowProps {
  client: TrellisClient;
  workflowId: string;
}

/** The workflow's name, for headings and crumbs. */
function useWorkflowName(client: TrellisClient, workflowId: string) {
  return useLoad(
    () =>
      client
        .GET('/workflows/{workflowId}', { params: { path: { workflowId } } })
        .then((workflow) => workflow.name),
    [workflowId],
  );
}

/** A workflow's triggers: listed, created, deleted. */
export function WorkflowTriggersPage({ client, workflowId }: WorkflowProps) {
  const name = useWorkflowName(client, workflowId);
  const triggers = useLoad(
    () => client.GET('/workflows/{workflowId}/triggers', { params: { path: { workflowId } } }),
    [workflowId],
  );
  const [creating, setCreating] = useState(false);
  const [fresh, setFresh] = useState<FreshSecret | null>(null);
  const [deleting, setDeleting] = useState<string | null>(null);
  const [problems, setProblems] = useState<string[]>([]);
  const create = async (body: TriggerCreate) => {
    const created = await client.POST('/workflows/{workflowId}/triggers', {
      params: { path: { workflowId } },
      body,
    });
    setFresh(created.secret ? { triggerId: created.triggerId, secret: created.secret } : null);
    setCreating(false);
    triggers.reload();
  };
  const remove = async (triggerId: string) => {
    setProblems([]);
    try {
      await client.DELETE('/workflows/{workflowId}/triggers/{triggerId}', {
        params: { path: { workflowId, triggerId } },
      });
      setDeleting(null);
      if (fresh?.triggerId === triggerId) setFresh(null);
      triggers.reload();
    } catch (error) {
      setProblems(messagesOf(error));
    }
  };
  return (
    <main id="main">
      <Loading loaded={name}>
        {(workflowName) => (
          <>
            <div class="page-head">
              <div>
                <p class="crumbs">
                  <Link to="/workflows">Workflows</Link> /{' '}
                  <Link to={`/workflows/${workflowId}`}>{workflowName}</Link> /
                </p>
                <h1>Triggers</h1>
                <p class="lead">What starts runs of {workflowName} besides a person.</p>
              </div>
              {!creating && (
                <button type="button" class="primary" onClick={() => setCreating(true)}>
                  New trigger
                </button>
              )}
            </div>
            {fresh && <WebhookSecretOnce fresh={fresh} />}
            {creating && (
              <section aria-labelledby="new-trigger-heading">
                <h2 id="new-trigger-heading">New trigger</h2>
                <TriggerForm
                  id="new-trigger"
                  initial={newDraft}
                  submitLabel="Create trigger"
                  onSubmit={create}
                  onCancel={() => setCreating(false)}
                />
              </section>
            )}
            <Problems messages={problems} />
            <Loading loaded={triggers}>
              {(list) =>
                list.length === 0 ? (
                  <p class="muted">No triggers: runs start from the console, the API or the CLI.</p>
                ) : (
                  <div class="table-scroll">
                    <table class="triggers">
                      <caption class="visually-hidden">Triggers of {workflowName}</caption>
                      <thead>
                        <tr>
                          <th scope="col">Trigger</th>
                          <th scope="col">Status</th>
                          <th scope="col">Fires</th>
                          <th scope="col">Next firing</th>
                          <th scope="col">Changed</th>
                          <th scope="col">
                            <span class="visually-hidden">Actions</span>
                          </th>
                        </tr>
                      </thead>
                      <tbody>
                        {list.map((trigger) => {
                          const label = `${typeNames[trigger.type]} ${shortId(trigger.id)}`;
                          return (
                            <tr key={trigger.id} data-trigger={trigger.id}>
                              <td>
                                <Link to={`/workflows/${workflowId}/triggers/${trigger.id}`}>
                                  {label}
                                </Link>
                              </td>
                              <td>
                                <TriggerStatusBadge status={trigger.status} />
                              </td>
                              <td class="wrap">
                                {trigger.type === 'TimeBased' ? (
                                  <code>{triggerSummary(trigger)}</code>
                                ) : (
                                  triggerSummary(trigger)
                                )}
                              </td>
                              <td class="nowrap">
                                {trigger.type === 'TimeBased' ? (
                                  <NextFiring
                                    client={client}
                                    workflowId={workflowId}
                                    trigger={trigger}
                                  />
                                ) : (
                                  '—'
                                )}
                              </td>
                              <td class="nowrap">{formatDateTime(trigger.lastModified)}</td>
                              <RowActions
                                action="Delete"
                                name={label}
                                id={trigger.id}
                                asking={deleting}
                                setAsking={setDeleting}
                                onConfirm={() => void remove(trigger.id)}
                              />
                            </tr>
                          );
                        })}
                      </tbody>
                    </table>
                  </div>
                )
              }
            </Loading>
          </>
        )}
      </Loading>
    </main>
  );
}

/** A TimeBased trigger's next firing, as its schedule computes it. */
function NextFiring({
  client,
  workflowId,
  trigger,
}: {
  client: TrellisClient;
  workflowId: string;
  trigger: Trigger;
}) {
  const upcoming = useLoad(
    () =>
      client.GET('/workflows/{workflowId}/triggers/{triggerId}/upcoming', {
        params: { path: { workflowId, triggerId: trigger.id }, query: { count: 1 } },
      }),
    [trigger.id, trigger.lastModified],
  );
  if (upcoming.error !== undefined) return <span class="muted">unknown</span>;
  if (!upcoming.data) return <span class="muted">…</span>;
  const [next] = upcoming.data.times;
  if (upcoming.data.paused) return <span class="muted">paused</span>;
  return next ? <time dateTime={next}>{formatDateTime(next)}</time> : <>—</>;
}

interface TriggerProps extends WorkflowProps {
  triggerId: string;
}

/** One trigger: what it does, its edit form, and what its type offers. */
export function TriggerPage({ client, workflowId, triggerId }: TriggerProps) {
  const name = useWorkflowName(client, workflowId);
  const trigger = useLoad(
    () =>
      client.GET('/workflows/{workflowId}/triggers/{triggerId}', {
        params: { path: { workflowId, triggerId } },
      }),
    [workflowId, triggerId],
  );
  const [saved, setSaved] = useState<string | null>(null);
  const [fresh, setFresh] = useState<FreshSecret | null>(null);
  const save = async (body: TriggerCreate) => {
    // A trigger that comes to sign needs a secret in the update: made here, shown once.
    const secret = trigger.data && comesToSign(trigger.data, body) ? newWebhookSecret() : null;
    const sent = secret ? { ...body, properties: { ...body.properties, secret } } : body;
    const updated = await client.envelope.PUT('/workflows/{workflowId}/triggers/{triggerId}', {
      params: { path: { workflowId, triggerId } },
      body: { ...sent, workflowId, triggerId } as never,
    });
    setFresh(secret ? { triggerId, secret } : null);
    setSaved(updated.messages.join(' '));
    trigger.reload();
  };
  return (
    <main id="main">
      <Loading loaded={trigger}>
        {(shown) => (
          <>
            <div class="page-head">
              <div>
                <p class="crumbs">
                  <Link to="/workflows">Workflows</Link> /{' '}
                  <Link to={`/workflows/${workflowId}`}>{name.data ?? 'Workflow'}</Link> /{' '}
                  <Link to={`/workflows/${workflowId}/triggers`}>Triggers</Link> /
                </p>
                <h1>
                  {typeNames[shown.type]} trigger <code>{shortId(shown.id)}</code>{' '}
                  <TriggerStatusBadge status={shown.status} />
                </h1>
                <p class="lead">
                  {shown.type === 'TimeBased' ? (
                    <code>{triggerSummary(shown)}</code>
                  ) : (
                    triggerSummary(shown)
                  )}
                  ; changed {formatDateTime(shown.lastModified)}.
                </p>
              </div>
            </div>
            {shown.type === 'TimeBased' && (
              <div class="columns">
                <Upcoming client={client} workflowId={workflowId} trigger={shown} />
                <Backfill client={client} workflowId={workflowId} trigger={shown} />
              </div>
            )}
            {shown.type === 'Webhook' && (
              <>
                <WebhookEndpoint client={client} workflowId={workflowId} trigger={shown} />
                <Deliveries client={client} workflowId={workflowId} triggerId={shown.id} />
              </>
            )}
            {fresh && shown.type === 'Webhook' && (
              <WebhookSecretOnce fresh={fresh} id="saved-webhook-secret" />
            )}
            <section aria-labelledby="edit-trigger-heading">
              <h2 id="edit-trigger-heading">Edit</h2>
              <TriggerForm
                key={shown.lastModified}
                id="edit-trigger"
                initial={draftOf(shown)}
                submitLabel="Save trigger"
                onSubmit={save}
              />
              <p class="ok status-line" role="status">
                {saved}
              </p>
            </section>
          </>
        )}
      </Loading>
    </main>
  );
}

interface TriggerSectionProps {
  client: TrellisClient;
  workflowId: string;
  trigger: Trigger;
}

/** A TimeBased trigger's next firings, as its Temporal schedule computes them (jitter included). */
function Upcoming({ client, workflowId, trigger }: TriggerSectionProps) {
  const upcoming = useLoad(
    () =>
      client.GET('/workflows/{workflowId}/triggers/{triggerId}/upcoming', {
        params: { path: { workflowId, triggerId: trigger.id }, query: { count: 10 } },
      }),
    [trigger.id, trigger.lastModified],
  );
  return (
    <section aria-labelledby="upcoming-heading">
      <h2 id="upcoming-heading">Next firings</h2>
      <Loading loaded={upcoming}>
        {({ paused, times }) =>
          paused ? (
            <p class="muted">Paused: nothing fires until the trigger is active again.</p>
          ) : (
            <ol class="firings" aria-label="Next firings">
              {times.map((time) => (
                <li key={time}>
                  <time dateTime={time}>{formatDateTime(time)}</time>
                </li>
              ))}
            </ol>
          )
        }
      </Loading>
    </section>
  );
}

/** Runs the firings of a past range now (Temporal's schedule backfill). */
function Backfill({ client, workflowId, trigger }: TriggerSectionProps) {
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  const [overlap, setOverlap] = useState<ScheduleOverlap>('BufferAll');
  const [problems, setProblems] = useState<string[]>([]);
  const [started, setStarted] = useState<{ message: string; times: string[] } | null>(null);
  const submit = async (event: Event) => {
    event.preventDefault();
    setProblems([]);
    setStarted(null);
    if (!from || !to) {
      setProblems(['Give the range: from and to.']);
      return;
    }
    try {
      const reply = await client.envelope.POST(
        '/workflows/{workflowId}/triggers/{triggerId}/backfill',
        {
          params: { path: { workflowId, triggerId: trigger.id } },
          body: {
            from: new Date(from).toISOString(),
            to: new Date(to).toISOString(),
            overlap,
          },
        },
      );
      setStarted({ message: reply.messages.join(' '), times: reply.data.times });
    } catch (error) {
      setProblems(messagesOf(error));
    }
  };
  return (
    <section aria-labelledby="backfill-heading">
      <h2 id="backfill-heading">Backfill</h2>
      <p class="hint">Runs now the firings the schedule would have made in a past range.</p>
      <form onSubmit={(event) => void submit(event)}>
        <div class="field">
          <label for="backfill-from">From (included)</label>
          <input
            id="backfill-from"
            type="datetime-local"
            value={from}
            onInput={(event) => setFrom(event.currentTarget.value)}
          />
        </div>
        <div class="field">
          <label for="backfill-to">To (excluded, not after now)</label>
          <input
            id="backfill-to"
            type="datetime-local"
            value={to}
            onInput={(event) => setTo(event.currentTarget.value)}
          />
        </div>
        <div class="field">
          <label for="backfill-overlap">While one of them still runs</label>
          <select
            id="backfill-overlap"
            value={overlap}
            onChange={(event) => setOverlap(event.currentTarget.value as ScheduleOverlap)}
          >
            {overlaps.map(({ value, label }) => (
              <option key={value} value={value}>
                {value === 'BufferAll' ? `${label} (default)` : label.replace(' (default)', '')}
              </option>
            ))}
          </select>
        </div>
        <Problems messages={problems} title="The backfill was not started:" />
        <button type="submit" disabled={trigger.status !== 'Active'}>
          Run the range's firings
        </button>
        {trigger.status !== 'Active' && (
          <p class="hint">A paused trigger does not fire, backfills included.</p>
        )}
      </form>
      {started && (
        <div role="status">
          <p class="ok">{started.message}</p>
          <ol class="firings">
            {started.times.map((time) => (
              <li key={time}>
                <time dateTime={time}>{formatDateTime(time)}</time>
              </li>
            ))}
          </ol>
        </div>
      )}
    </section>
  );
}

/** Where a Webhook trigger is posted to, its secret (masked) and its rotation. */
function WebhookEndpoint({ client, workflowId, trigger }: TriggerSectionProps) {
  const [asking, setAsking] = useState(false);
  const [fresh, setFresh] = useState<FreshSecret | null>(null);
  const [problems, setProblems] = useState<string[]>([]);
  const signed = typeof trigger.properties.secret === 'string';
  const rotate = async () => {
    setProblems([]);
    try {
      const rotated = await client.POST(
        '/workflows/{workflowId}/triggers/{triggerId}/rotate-secret',
        { params: { path: { workflowId, triggerId: trigger.id } } },
      );
      setFresh(rotated);
      setAsking(false);
    } catch (error) {
      setProblems(messagesOf(error));
    }
  };
  return (
    <section aria-labelledby="endpoint-heading">
      <h2 id="endpoint-heading">Address and secret</h2>
      <dl class="facts endpoint">
        <dt>Deliveries are posted to</dt>
        <dd>
          <code>POST {hookUrl(trigger.id)}</code>
        </dd>
        <dt>Signing secret</dt>
        <dd>
          {signed ? (
            <>
              <code aria-label="masked secret">{String(trigger.properties.secret)}</code>{' '}
              <span class="muted">(shown only when created or rotated)</span>
            </>
          ) : (
            <span class="muted">none: deliveries are not signed</span>
          )}
        </dd>
      </dl>
      {fresh && <WebhookSecretOnce fresh={fresh} level={3} />}
      {signed && (
        <div class="actions">
          {asking && (
            <p class="warning">
              The current secret stops verifying at once: deliveries signed with it are refused
              until the sender has the new one.
            </p>
          )}
          <ConfirmAction
            action="Rotate secret"
            name={`of trigger ${shortId(trigger.id)}`}
            asking={asking}
            onAsk={() => setAsking(true)}
            onKeep={() => setAsking(false)}
            onConfirm={() => void rotate()}
          />
        </div>
      )}
      <Problems messages={problems} />
    </section>
  );
}

const deliveriesPerPage = 20;

/** The deliveries a Webhook trigger accepted, newest first, with the runs they started. */
function Deliveries({
  client,
  workflowId,
  triggerId,
}: {
  client: TrellisClient;
  workflowId: string;
  triggerId: string;
}) {
  const { first, items, restart, ...older } = useCursorPages(
    (after?: string) =>
      client.GET('/workflows/{workflowId}/triggers/{triggerId}/deliveries', {
        params: {
          path: { workflowId, triggerId },
          query: { pageSize: deliveriesPerPage, ...(after ? { after } : {}) },
        },
      }),
    [triggerId],
    deliveriesPerPage,
  );
  return (
    <section aria-labelledby="deliveries-heading">
      <div class="page-head">
        <h2 id="deliveries-heading">Delivery log</h2>
        <button
          type="button"
          onClick={() => {
            restart();
            first.reload();
          }}
        >
          Refresh
        </button>
      </div>
      <p class="hint">
        Each delivery accepted, once per <code>webhook-id</code>, and the newest 100 refused (a bad
        signature, bad inputs, the trigger paused), which start nothing.
      </p>
      <Loading loaded={first}>
        {() =>
          items.length === 0 ? (
            <p class="muted">No deliveries yet.</p>
          ) : (
            <>
              <div class="table-scroll">
                <table class="deliveries">
                  <caption class="visually-hidden">Deliveries, newest first</caption>
                  <thead>
                    <tr>
                      <th scope="col">Received</th>
                      <th scope="col">
                        <code>webhook-id</code>
                      </th>
                      <th scope="col">Run, or refused</th>
                      <th scope="col">Run status, or why</th>
                    </tr>
                  </thead>
                  <tbody>
                    {items.map((delivery) => (
                      <tr key={delivery.id}>
                        <td class="nowrap">{formatDateTime(delivery.receivedAt)}</td>
                        <td class="wrap">
                          {delivery.webhookId === undefined ? (
                            <span class="muted">none</span>
                          ) : (
                            <code>{delivery.webhookId}</code>
                          )}
                        </td>
                        {delivery.executionId === undefined ? (
                          <>
                            <td>
                              Refused ({delivery.status}) <code>{delivery.code}</code>
                            </td>
                            <td class="wrap">{delivery.reason}</td>
                          </>
                        ) : (
                          <>
                            <td>
                              <Link to={`/workflows/${workflowId}/runs/${delivery.executionId}`}>
                                Run {shortId(delivery.executionId)}
                              </Link>
                            </td>
                            <td>
                              <StatusBadge status={delivery.executionStatus ?? null} />
                            </td>
                          </>
                        )}
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              <OlderPager pages={older} label="Older deliveries" />
            </>
          )
        }
      </Loading>
    </section>
  );
}

/** The project's triggers across its workflows, with their next firings. */
export function ProjectTriggersPage({ client }: { client: TrellisClient }) {
  const summaries = useLoad(
    () =>
      collect(
        client.all('/workflow-summaries', { params: { query: { pageSize: 1000, runs: 0 } } }),
      ),
    [],
  );
  return (
    <main id="main">
      <h1>Triggers</h1>
      <p class="lead">Every workflow's schedules and webhooks. A workflow's page manages them.</p>
      <Loading loaded={summaries}>
        {(workflows) => {
          const rows = workflows.flatMap((workflow) =>
            workflow.triggers.map((trigger) => ({ workflow, trigger })),
          );
          return rows.length === 0 ? (
            <p class="muted">
              No triggers yet: add one from a workflow's page (
              <Link to="/workflows">Workflows</Link>
              ).
            </p>
          ) : (
            <div class="table-scroll">
              <table class="triggers">
                <caption class="visually-hidden">The project's triggers</caption>
                <thead>
                  <tr>
                    <th scope="col">Workflow</th>
                    <th scope="col">Trigger</th>
                    <th scope="col">Status</th>
                    <th scope="col">Cron</th>
                    <th scope="col">Next firing</th>
                  </tr>
                </thead>
                <tbody>
                  {rows.map(({ workflow, trigger }) => (
                    <tr key={trigger.id}>
                      <td class="wrap">
                        <Link to={`/workflows/${workflow.id}/triggers`}>{workflow.name}</Link>
                      </td>
                      <td>
                        <Link to={`/workflows/${workflow.id}/triggers/${trigger.id}`}>
                          {typeNames[trigger.type]} {shortId(trigger.id)}
                        </Link>
                      </td>
                      <td>
                        <TriggerStatusBadge status={trigger.status} />
                      </td>
                      <td>{trigger.cron ? <code>{trigger.cron}</code> : '—'}</td>
                      <td class="nowrap">{formatDateTime(trigger.nextFiring)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          );
        }}
      </Loading>
    </main>
  );
}
