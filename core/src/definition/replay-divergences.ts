/**
 * Where a replay of a candidate definition diverges from the execution it replays: another
 * branch (a task that ran then and not now, or the reverse), a task's other outcome or output,
 * another final status, another workflow output. Pure.
 */
import { jsonDifferences } from './test-cases.js';

/** A finished run as its rows say: its status and message, outputs, and top-level tasks. */
export interface RunOutcome {
  status: string;
  message: string;
  outputs: Record<string, unknown> | null;
  tasks: readonly { name: string; status: string; output: unknown }[];
}

export type DivergenceKind = 'branch' | 'taskOutput' | 'status' | 'output' | 'inputs';

export interface Divergence {
  kind: DivergenceKind;
  task: string | null;
  path: string;
  then: unknown;
  now: unknown;
  message: string;
}

/** A task ran when it reached an end of its own: it was neither skipped nor left unreached. */
const ran = (status: string | undefined) => status === 'Completed' || status === 'Failed';

/** Each way `now` (the replay) diverges from `then` (the execution); none when they agree. */
export function replayDivergences(then: RunOutcome, now: RunOutcome): Divergence[] {
  const divergences: Divergence[] = [];
  if (then.status !== now.status) {
    const why = now.status === 'Failed' && now.message ? ` (${now.message})` : '';
    divergences.push({
      kind: 'status',
      task: null,
      path: 'status',
      then: then.status,
      now: now.status,
      message: `the run ended ${then.status} then, ${now.status} now${why}`,
    });
  }
  const before = new Map(then.tasks.map((task) => [task.name, task]));
  const after = new Map(now.tasks.map((task) => [task.name, task]));
  for (const name of new Set([...before.keys(), ...after.keys()])) {
    const was = before.get(name);
    const is = after.get(name);
    if (ran(was?.status) !== ran(is?.status)) {
      divergences.push({
        kind: 'branch',
        task: name,
        path: name,
        then: was?.status ?? null,
        now: is?.status ?? null,
        message: ran(was?.status)
          ? `task ${name} ran then (${was.status}), not now (${is ? is.status : 'not in the candidate'})`
          : `task ${name} runs now (${is!.status}), not then (${was ? was.status : 'not in the definition'})`,
      });
      continue;
    }
    if (!was || !is || !ran(was.status)) continue;
    if (was.status !== is.status) {
      divergences.push({
        kind: 'status',
        task: name,
        path: name,
        then: was.status,
        now: is.status,
        message: `task ${name} ended ${was.status} then, ${is.status} now`,
      });
    } else if (jsonDifferences(was.output, is.output, [name]).length > 0) {
      divergences.push({
        kind: 'taskOutput',
        task: name,
        path: name,
        then: was.output ?? null,
        now: is.output ?? null,
        message: `task ${name} gave another output`,
      });
    }
  }
  if (then.status === 'Completed' && now.status === 'Completed') {
    for (const difference of jsonDifferences(then.outputs ?? {}, now.outputs ?? {}, ['outputs'])) {
      divergences.push({
        kind: 'output',
        task: null,
        path: difference.path,
        then: difference.expected,
        now: difference.actual,
        message: `${difference.path} was ${shown(difference.expected)}, is ${shown(difference.actual)}`,
      });
    }
  }
  return divergences;
}

const shown = (value: unknown) => JSON.stringify(value) ?? 'nothing';
