import type { Command } from 'commander';
import { exitCodes } from '../failures.js';
import { time } from '../output/format.js';
import { table } from '../output/table.js';
import type { Act } from './act.js';
import { positiveCount } from './executions.js';

interface ListOptions {
  project?: string;
  actor?: string;
  operation?: string;
  from?: string;
  to?: string;
  after?: string;
  limit: number;
}

const breaks = {
  altered: 'its fields are not those it was recorded with',
  unlinked: 'it does not follow the entry before it (one was removed or replaced)',
  truncated: 'it is the oldest entry, yet no purge kept it (older ones were removed)',
} as const;

/** `trellis audit list|verify`: the audit trail (role admin). */
export function auditCommands(program: Command, act: Act): void {
  const audit = program
    .command('audit')
    .description('the audit trail: who changed or decided what (role admin)');

  audit
    .command('list')
    .alias('ls')
    .description('list audit entries, newest first')
    .option('--project <name>', 'only those of this project')
    .option('--actor <name>', 'only those of this actor')
    .option('--operation <operationId>', 'only this operation (updateWorkflow, signIn, ...)')
    .option('--from <time>', 'only those recorded at or after this ISO 8601 time')
    .option('--to <time>', 'only those recorded before this ISO 8601 time')
    .option('--after <id>', 'the page after this entry (the last ID of the page before)')
    .option('-n, --limit <count>', 'at most this many (1-1000)', positiveCount, 20)
    .action(
      act<[], ListOptions>(async ({ trellis, output }, _args, { limit, ...filters }) => {
        const entries = await trellis.GET('/audit', {
          params: { query: { ...filters, pageSize: limit } },
        });
        output.data(entries);
        if (entries.length === 0) return output.line('No audit entries.');
        const rows = entries.map((entry) => [
          entry.id,
          time(entry.at),
          entry.actor,
          entry.project ?? '',
          entry.operation,
          Object.entries(entry.targets)
            .map(([name, id]) => `${name}=${id}`)
            .join(' '),
          String(entry.status),
          entry.address ?? '',
        ]);
        const head = ['ID', 'AT', 'ACTOR', 'PROJECT', 'OPERATION', 'TARGETS', 'STATUS', 'ADDRESS'];
        output.line(table(output.colors, head, rows));
        if (entries.length === limit) {
          output.line(output.colors.dim(`More with --after ${entries.at(-1)?.id}.`));
        }
      }),
    );

  audit
    .command('verify')
    .description('verify the audit trail\u2019s hash chain; exit code 1 where it breaks')
    .action(
      act<[], Record<string, never>>(async ({ trellis, output }) => {
        const verification = await trellis.GET('/audit/verify');
        output.data(verification);
        const { firstBreak, entries } = verification;
        if (firstBreak === null) {
          output.line(`The audit trail holds: ${entries} entries verified.`);
          return exitCodes.ok;
        }
        output.line(
          `The audit trail breaks at entry ${firstBreak.id}: ${breaks[firstBreak.reason]}.`,
        );
        return exitCodes.failed;
      }),
    );
}
