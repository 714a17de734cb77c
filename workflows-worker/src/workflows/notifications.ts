/**
 * The run's side of notifications (`Notifications.Webhooks`): one `deliverNotification` activity
 * per event and webhook that takes it, retried by Temporal with backoff (1 s doubling to 1 min)
 * up to the configured attempts, so a worker restart loses no event. Deliveries run beside the
 * run and never fail it; a run waits for its deliveries before it closes. Deterministic: event
 * ids come from the workflow's seeded `uuid4`.
 */
import { CancellationScope, proxyActivities, uuid4 } from '@temporalio/workflow';
import type { NotificationEvent, NotifyTargets } from '#protocol/notifications.js';
import type { TrellisActivities } from '../activities/index.js';
import type { RunVersion } from './run-version.js';

export class Notifications {
  private readonly deliveries: Array<Promise<unknown>> = [];
  private enabled: boolean | undefined;

  constructor(
    private readonly executionId: string,
    private readonly targets: NotifyTargets | undefined,
    private readonly version: RunVersion,
  ) {}

  /** Starts delivering `event` to every webhook that takes it; returns at once. */
  send(event: NotificationEvent, approvalId?: string): void {
    const webhooks = this.targets?.webhooks.filter((webhook) => webhook.events.includes(event));
    if (!this.targets || !webhooks || webhooks.length === 0) return;
    this.enabled ??= this.version.has('notifications');
    if (!this.enabled) return;
    const activities = proxyActivities<TrellisActivities>({
      summary: `Notify ${event}`,
      startToCloseTimeout: '2 minutes',
      retry: {
        initialInterval: '1 second',
        backoffCoefficient: 2,
        maximumInterval: '1 minute',
        maximumAttempts: this.targets.maxAttempts,
      },
    });
    for (const webhook of webhooks) {
      const input = {
        eventId: `msg_${uuid4()}`,
        event,
        url: webhook.url,
        executionId: this.executionId,
        ...(approvalId !== undefined ? { approvalId } : {}),
      };
      // Not canceled with the run's tasks: an event once due is delivered.
      const delivery = CancellationScope.nonCancellable(() =>
        activities.deliverNotification(input),
      ).catch(() => undefined); // abandoned: the delivery log says why
      this.deliveries.push(delivery);
    }
  }

  /** Waits until every delivery started has been made or abandoned. */
  async settled(): Promise<void> {
    await Promise.all(this.deliveries);
  }
}
