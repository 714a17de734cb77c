/**
 * The notification delivery log (admins): every attempt to deliver an event to a configured
 * webhook, newest first, with its outcome, the receiver's answer and what went wrong; filtered by
 * event or run, read on a page at a time after the last attempt shown.
 */
import type { components, TrellisClient } from '@trellis/sdk';
import { useState } from 'preact/hooks';
import { Loading, OlderPager, Problems, shortId, useCursorPages } from '../components/common.js';
import { formatDateTime } from '../format.js';

type DeliveryOutcome = components['schemas']['DeliveryOutcome'];

const pageSize = 50;

/** Each event in words. */
const eventWords: Record<components['schemas']['NotificationEvent'], string> = {
  ApprovalRequested: 'Approval requested',
  ExecutionFailed: 'Run failed',
  ExecutionCompleted: 'Run completed',
};

const outcomeClass: Record<DeliveryOutcome, string> = {
  Delivered: 'status-Completed',
  Failed: 'status-Paused',
  Abandoned: 'status-Failed',
};

interface Filters {
  eventId: string;
  executionId: string;
}

export function NotificationsPage({ client }: { client: TrellisClient }) {
  const [draft, setDraft] = useState<Filters>({ eventId: '', executionId: '' });
  const [filters, setFilters] = useState<Filters>(draft);
  const [invalid, setInvalid] = useState<string[]>([]);
  const {
    first,
    items: deliveries,
    restart,
    ...older
  } = useCursorPages(
    (after?: string) =>
      client.GET('/notifications/deliveries', {
        params: {
          query: {
            ...(filters.eventId ? { eventId: filters.eventId } : {}),
            ...(filters.executionId ? { executionId: filters.executionId } : {}),
            ...(after ? { after } : {}),
            pageSize,
          },
        },
      }),
    [JSON.stringify(filters)],
    pageSize,
  );
  const field = (name: keyof Filters, label: string, hint: string) => (
    <div class="field">
      <label for={`deliveries-${name}`}>{label}</label>
      <input
        id={`deliveries-${name}`}
        value={draft[name]}
        autocomplete="off"
        aria-describedby={`deliveries-${name}-hint`}
        onInput={(event) => setDraft({ ...draft, [name]: event.currentTarget.value })}
      />
      <p class="hint" id={`deliveries-${name}-hint`}>
        {hint}
      </p>
    </div>
  );

  return (
    <main id="main">
      <h1>Notifications</h1>
      <p class="lead">
        Every attempt to deliver an event to the configured webhooks (
        <code>Notifications.Webhooks</code>), newest first. A failed attempt is tried again until
        the last one, which abandons the event.
      </p>
      <form
        class="filters"
        aria-label="Filter the deliveries"
        onSubmit={(event) => {
          event.preventDefault();
          const executionId = draft.executionId.trim();
          if (executionId && !uuid.test(executionId)) {
            return setInvalid(['A run is named by its full id (a UUID).']);
          }
          setInvalid([]);
          restart();
          setFilters({ eventId: draft.eventId.trim(), executionId });
        }}
      >
        {field('eventId', 'Event', "An event's id: every attempt to deliver it.")}
        {field('executionId', 'Run', "A run's id: the attempts of the events about it.")}
        <button type="submit" class="primary">
          Show deliveries
        </button>
      </form>
      <Problems messages={invalid} />
      <Loading loaded={first}>
        {() =>
          deliveries.length === 0 ? (
            <p class="muted">No delivery attempts match.</p>
          ) : (
            <>
              <div
                class="table-scroll"
                tabIndex={0}
                role="region"
                aria-label="Notification deliveries"
              >
                <table class="deliveries">
                  <caption class="visually-hidden">Notification deliveries</caption>
                  <thead>
                    <tr>
                      <th scope="col">When</th>
                      <th scope="col">Event</th>
                      <th scope="col">Target</th>
                      <th scope="col">Attempt</th>
                      <th scope="col">Status</th>
                      <th scope="col">Answer or error</th>
                    </tr>
                  </thead>
                  <tbody>
                    {deliveries.map((delivery) => (
                      <tr key={delivery.id} data-delivery={delivery.id}>
                        <td class="nowrap">{formatDateTime(delivery.attemptedAt)}</td>
                        <td>
                          {eventWords[delivery.event]}
                          <br />
                          <span class="muted">
                            run <code>{shortId(delivery.executionId)}</code>, event{' '}
                            <code title={delivery.eventId}>{shortId(delivery.eventId)}</code>
                          </span>
                        </td>
                        <td class="wrap url">{delivery.url}</td>
                        <td>{delivery.attempt}</td>
                        <td>
                          <span class={`badge ${outcomeClass[delivery.outcome]}`}>
                            {delivery.outcome}
                          </span>
                        </td>
                        <td class="wrap">
                          {delivery.statusCode !== null && <>HTTP {delivery.statusCode}. </>}
                          {delivery.error}
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              <OlderPager
                pages={older}
                label="Older attempts"
                oldest="The oldest attempt is shown."
              />
            </>
          )
        }
      </Loading>
    </main>
  );
}

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
