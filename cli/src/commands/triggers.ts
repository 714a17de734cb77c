import type { Command } from 'commander';
import type { components } from '@trellis/sdk';
import { isId, workflowIdOf } from '@trellis/sdk/mcp';
import { UsageError } from '../failures.js';
import { styleStatus, time } from '../output/format.js';
import { table } from '../output/table.js';
import type { Act } from './act.js';
import { positiveCount } from './executions.js';

type Trigger = components['schemas']['Trigger'];

/** What tells a trigger apart at a glance: a schedule's cron, a webhook's signature. */
function settingOf(trigger: Trigger): string {
  const { properties } = trigger;
  if (trigger.type === 'TimeBased' && typeof properties.cron === 'string') return properties.cron;
  if (trigger.type === 'Webhook' && typeof properties.signature === 'string') {
    return `signature ${properties.signature}`;
  }
  return '';
}

/** A trigger's id as given: triggers have no names. */
function triggerIdOf(trigger: string): string {
  if (isId(trigger)) return trigger;
  throw new UsageError(
    `"${trigger}" is not a trigger id.`,
    'trellis triggers list <workflow> shows its triggers and their ids.',
  );
}

/** `trellis triggers list|rotate-secret|deliveries`: a workflow's triggers (role workflow). */
export function triggerCommands(program: Command, act: Act): void {
  const triggers = program
    .command('triggers')
    .alias('trigger')
    .description(
      'a workflow\u2019s triggers: list, rotate a webhook\u2019s secret, its deliveries',
    );

  triggers
    .command('list')
    .alias('ls')
    .description('list a workflow\u2019s triggers (a webhook\u2019s secret never shown)')
    .argument('<workflow>', 'its name or id')
    .action(
      act<[string]>(async ({ trellis, output }, [workflow]) => {
        const workflowId = await workflowIdOf(trellis, workflow);
        const items: Trigger[] = [];
        for await (const trigger of trellis.all('/workflows/{workflowId}/triggers', {
          params: { path: { workflowId }, query: { pageSize: 1000 } },
        })) {
          items.push(trigger);
        }
        output.data(items);
        if (items.length === 0) return output.line('No triggers.');
        const rows = items.map((trigger) => [
          trigger.id,
          trigger.type,
          trigger.status,
          settingOf(trigger),
          time(trigger.lastModified),
        ]);
        output.line(table(output.colors, ['ID', 'TYPE', 'STATUS', 'SETTING', 'MODIFIED'], rows));
      }),
    );

  triggers
    .command('rotate-secret')
    .description('give a signing Webhook trigger a new secret and print it: shown only this once')
    .argument('<workflow>', 'its name or id')
    .argument('<trigger>', 'the trigger id')
    .action(
      act<[string, string]>(async ({ trellis, output }, [workflow, trigger]) => {
        const triggerId = triggerIdOf(trigger);
        const workflowId = await workflowIdOf(trellis, workflow);
        const rotated = await trellis.POST(
          '/workflows/{workflowId}/triggers/{triggerId}/rotate-secret',
          { params: { path: { workflowId, triggerId } } },
        );
        output.data(rotated);
        output.line(rotated.secret);
        output.note(
          `Trigger ${triggerId} has a new signing secret (above). Store it now: it is shown only this once, and the previous one no longer verifies.`,
        );
      }),
    );

  triggers
    .command('deliveries')
    .description('list the deliveries a Webhook trigger accepted and refused, newest first')
    .argument('<workflow>', 'its name or id')
    .argument('<trigger>', 'the trigger id')
    .option('--after <id>', 'the page after this delivery (the last ID of the page before)')
    .option('-n, --limit <count>', 'at most this many (1-1000)', positiveCount, 20)
    .action(
      act<[string, string], { after?: string; limit: number }>(
        async ({ trellis, output }, [workflow, trigger], { after, limit }) => {
          const triggerId = triggerIdOf(trigger);
          const workflowId = await workflowIdOf(trellis, workflow);
          const deliveries = await trellis.GET(
            '/workflows/{workflowId}/triggers/{triggerId}/deliveries',
            {
              params: {
                path: { workflowId, triggerId },
                query: { pageSize: limit, ...(after === undefined ? {} : { after }) },
              },
            },
          );
          output.data(deliveries);
          if (deliveries.length === 0) {
            return output.line(after === undefined ? 'No deliveries yet.' : 'No more deliveries.');
          }
          const { colors } = output;
          const rows = deliveries.map((delivery) => [
            delivery.id,
            delivery.webhookId === delivery.id ? '' : (delivery.webhookId ?? '-'),
            time(delivery.receivedAt),
            delivery.outcome === 'Accepted'
              ? colors.green(delivery.outcome)
              : colors.red(`${delivery.outcome} ${delivery.status ?? ''}`.trim()),
            delivery.executionId === undefined
              ? (delivery.code ?? '')
              : `${delivery.executionId} ${styleStatus(colors, delivery.executionStatus ?? 'Pending')}`,
            delivery.reason ?? '',
          ]);
          const head = [
            'ID',
            'WEBHOOK-ID (if other)',
            'RECEIVED',
            'OUTCOME',
            'RUN / CODE',
            'REASON',
          ];
          output.line(table(colors, head, rows));
          if (deliveries.length === limit) {
            output.line(colors.dim(`More with --after ${deliveries.at(-1)?.id}.`));
          }
        },
      ),
    );
}
