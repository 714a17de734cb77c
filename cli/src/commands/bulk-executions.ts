import { createInterface } from 'node:readline/promises';
import { TrellisApiError, type BulkSelection, type components } from '@trellis/sdk';
import { workflowIdOf } from '@trellis/sdk/mcp';
import { InvalidArgumentError, Option, type Command } from 'commander';
import type { Context } from '../context.js';
import { CliError, UsageError } from '../failures.js';
import { styleStatus } from '../output/format.js';
import { table } from '../output/table.js';

type Schemas = components['schemas'];
type ExecutionStatus = Schemas['ExecutionStatus'];
type BulkAnswer = Schemas['BulkRerun'] | Schemas['BulkCancel'];
type BulkItem = Schemas['BulkExecutionResult'] & Partial<Schemas['BulkRerunResult']>;

const statuses: ExecutionStatus[] = [
  'Pending',
  'Running',
  'Paused',
  'Completed',
  'Failed',
  'Canceled',
];

/** The selection's options, beside the optional `[workflow]` argument. */
export interface BulkOptions {
  id?: string[];
  status?: ExecutionStatus[];
  trigger?: string;
  startedBy?: string;
  since?: string;
  until?: string;
  dryRun?: boolean;
  yes?: boolean;
}

/** Adds the options that select executions in bulk (the explorer's filters, or ids). */
export function withBulkOptions(command: Command): Command {
  return command
    .option('--id <id...>', 'bulk: these executions (up to 500)')
    .addOption(
      new Option('--status <status...>', 'bulk: executions in these statuses').choices(statuses),
    )
    .option('--trigger <trigger>', 'bulk: started by manual, TimeBased, Webhook or a trigger id')
    .option('--started-by <user>', 'bulk: started by this user')
    .option('--since <time>', 'bulk: started at or after (ISO time, or 30m, 6h, 2d ago)', (text) =>
      since(text),
    )
    .option('--until <time>', 'bulk: started before (ISO time, or 30m, 6h, 2d ago)', (text) =>
      since(text),
    )
    .option('--dry-run', 'bulk: show what would be done, and do nothing')
    .option('-y, --yes', 'bulk: do it without asking');
}

/** Refuses bulk options beside one execution's id (they would be ignored). */
export function assertSingle(options: BulkOptions & { latest?: boolean }): void {
  const bulk = [
    'id',
    'status',
    'trigger',
    'startedBy',
    'since',
    'until',
    'dryRun',
    'yes',
    'latest',
  ];
  const given = bulk.filter((name) => options[name as keyof typeof options] !== undefined);
  if (given.length > 0) {
    throw new UsageError(
      `--${given.map((name) => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)).join(', --')} select executions in bulk: leave out the execution id, or these options.`,
    );
  }
}

/** A time given as ISO 8601, or as how long ago (`30m`, `6h`, `2d`). */
export function since(text: string, now = Date.now()): string {
  const ago = /^(\d+)(m|h|d)$/.exec(text.trim());
  if (ago) {
    const unit = { m: 60_000, h: 3_600_000, d: 86_400_000 }[ago[2] as 'm' | 'h' | 'd'];
    return new Date(now - Number(ago[1]) * unit).toISOString();
  }
  const time = Date.parse(text);
  if (Number.isNaN(time) || !/^\d{4}-\d{2}-\d{2}/.test(text)) {
    throw new InvalidArgumentError('Give an ISO time (2026-11-29T08:00:00Z) or 30m, 6h, 2d.');
  }
  return new Date(time).toISOString();
}

/** The body's selection from the command line: `--id`, or the filters (the workflow among them). */
async function selectionOf(
  context: Context,
  workflow: string | undefined,
  options: BulkOptions,
): Promise<BulkSelection> {
  const filter = {
    ...(workflow !== undefined
      ? { workflowId: await workflowIdOf(context.trellis, workflow) }
      : {}),
    ...(options.status ? { status: options.status } : {}),
    ...(options.trigger !== undefined ? { trigger: options.trigger } : {}),
    ...(options.startedBy !== undefined ? { startedBy: options.startedBy } : {}),
    ...(options.since !== undefined ? { from: options.since } : {}),
    ...(options.until !== undefined ? { to: options.until } : {}),
  };
  if (options.id) {
    if (Object.keys(filter).length > 0) {
      throw new UsageError('Give --id, or a workflow and filters, not both.');
    }
    return { ids: options.id };
  }
  if (Object.keys(filter).length === 0) {
    throw new UsageError(
      'Say which executions: an execution id, --id, or a workflow and filters (--status, --since, ...).',
      'For example: trellis executions rerun --status Failed --since 6h --dry-run',
    );
  }
  return { filter };
}

/** What a bulk command does with the selection: its verb, and the call that previews or acts. */
export interface BulkVerb {
  /** `rerun`, `cancel`. */
  name: string;
  /** What the API is asked (`preview: true` changes nothing). */
  send(
    trellis: Context['trellis'],
    body: BulkSelection & { preview: boolean },
  ): Promise<BulkAnswer>;
}

/**
 * Runs a bulk rerun or cancel: a preview first (shown, and for `--dry-run` the end), then, with
 * `--yes` or a confirmation on a terminal, the action, each execution's result shown. A project
 * limit part-way shows what was done and how to send the rest.
 */
export async function runBulk(
  context: Context,
  verb: BulkVerb,
  workflow: string | undefined,
  options: BulkOptions,
): Promise<number | void> {
  const { trellis, output } = context;
  const selection = await selectionOf(context, workflow, options);
  if (options.dryRun || !options.yes) {
    const preview = await verb.send(trellis, { ...selection, preview: true });
    if (options.dryRun || preview.counts.acted === 0) {
      show(context, preview);
      return;
    }
    output.line(describe(context, preview));
    if (!(await confirmed(context, `${verb.name} ${count(preview.counts.acted)}?`))) {
      throw new CliError(
        `Nothing was done: ${count(preview.counts.acted)} would be ${verb.name === 'rerun' ? 'rerun' : 'canceled'}.`,
        'Add --yes to do it without asking, or --dry-run to only see what it would do.',
      );
    }
  }
  try {
    show(context, await verb.send(trellis, { ...selection, preview: false }));
  } catch (error) {
    const partial = partialAnswer(error);
    if (!partial) throw error;
    show(context, partial.data);
    const left = partial.data.executions.filter((item) => item.outcome === 'NotDone');
    throw new CliError(
      `${partial.error.messages.join('; ')} ${count(left.length)} not done.`,
      `Send them again after ${partial.error.retryAfterSeconds ?? 60} s: trellis executions ${verb.name} ${left
        .map((item) => `--id ${item.executionId}`)
        .join(' ')}`,
    );
  }
}

/** A 429 that stopped a bulk action part-way: its data says what was done. */
function partialAnswer(error: unknown) {
  if (!(error instanceof TrellisApiError) || error.status !== 429) return undefined;
  const data = (error.body as { data?: BulkAnswer | null } | undefined)?.data;
  return data ? { error, data } : undefined;
}

const count = (n: number) => `${n} execution${n === 1 ? '' : 's'}`;

async function confirmed(context: Context, question: string): Promise<boolean> {
  if (!process.stdin.isTTY || context.output.json) return false;
  const prompt = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y(es)?$/i.test((await prompt.question(`${question} [y/N] `)).trim());
  } finally {
    prompt.close();
  }
}

/** The answer for people: a table of each execution, then how many went each way. */
function describe(context: Context, answer: BulkAnswer): string {
  const { colors } = context.output;
  const rerun = 'revision' in answer;
  const rows = (answer.executions as BulkItem[]).map((item) => [
    item.executionId,
    item.workflowName ?? '-',
    item.status ? styleStatus(colors, item.status) : '-',
    outcomeWord(item.outcome, answer.preview, rerun),
    ...(rerun ? [revisions(item)] : []),
    item.newExecutionId ?? item.reason?.message ?? '',
  ]);
  const head = ['EXECUTION', 'WORKFLOW', 'STATUS', 'OUTCOME', ...(rerun ? ['REVISION'] : [])];
  const { selected, acted, skipped, notDone } = answer.counts;
  const summary = `${count(selected)} selected: ${acted} ${answer.preview ? `would be ${rerun ? 'rerun' : 'canceled'}` : rerun ? 'rerun' : 'canceled'}, ${skipped} skipped${notDone > 0 ? `, ${notDone} not done` : ''}.`;
  return [
    table(colors, [...head, rerun ? 'NEW EXECUTION / REASON' : 'REASON'], rows),
    summary,
  ].join('\n');
}

/** What became of an execution, in the verb's words (`would rerun`, `canceled`...). */
function outcomeWord(outcome: BulkItem['outcome'], preview: boolean, rerun: boolean): string {
  if (outcome === 'WouldAct') return rerun ? 'would rerun' : 'would cancel';
  if (outcome === 'Done') return rerun ? 'rerun' : 'cancel requested';
  if (outcome === 'NotDone') return 'not done';
  return preview ? 'would skip' : 'skipped';
}

function revisions(item: BulkItem): string {
  if (item.rerunRevision === null || item.rerunRevision === undefined) return '-';
  const ran = item.ranRevision ?? '?';
  return ran === item.rerunRevision ? `${ran}` : `${ran} → ${item.rerunRevision}`;
}

function show(context: Context, answer: BulkAnswer): void {
  context.output.data(answer);
  context.output.line(describe(context, answer));
}
