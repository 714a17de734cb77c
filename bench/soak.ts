/**
 * Soak: executions started at a steady 80 % of the measured maximum rate for `seconds`, as a
 * service under constant load meets them (open loop: a slow spell does not slow the arrivals).
 * - the maximum: 3-task `Flow/NoOp` chains, `inFlight` at a time, completed per second;
 * - each execution's latency: `POST .../executions` until its Temporal run completed;
 * - `soak_stuck_runs`: runs not Completed in PostgreSQL a minute after the last start (stuck or
 *   lost), which must be 0;
 * - `soak_p99_growth`: p99 latency of the last minute ÷ that of the first (target ≤ 1.5);
 * - `soak_rss_growth_pct`: growth of the api's and the worker's resident memory from the end of
 *   the warm-up (the first fifth) to the end, the larger of the two (target < 10 %);
 * - `bench/results/soak.svg`: latency p50/p99 per 10 s and both processes' RSS over the run.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { executionWorkflowId } from '#protocol/ids.js';
import { chainDefinition, uniqueWorkflowName } from '../test/resilience/support/workload.js';
import { residentBytes } from './cpu.js';
import type { BenchEnvironment } from './environment.js';
import type { Plan } from './plan.js';
import type { BenchOutcome } from './report.js';
import { percentile, round } from './stats.js';

const resultsDirectory = fileURLToPath(new URL('./results/', import.meta.url));
const windowSeconds = 10;

interface Sample {
  /** Seconds since the soak began when the run was started. */
  at: number;
  latencyMs?: number;
  failed?: string;
}

export async function benchmarkSoak(
  env: BenchEnvironment,
  plan: Plan['soak'],
): Promise<BenchOutcome> {
  // The calibration's runs and the soak's are of two workflows, so the soak's can be counted.
  const addChain = async () =>
    (
      await env.admin.POST('/workflows/Add', {
        body: {
          definition: JSON.stringify(
            chainDefinition(uniqueWorkflowName('bench-soak'), ['noop', 'noop', 'noop']),
          ),
        },
      })
    ).id;
  const calibration = await addChain();
  const workflowId = await addChain();
  const runOnce = async (workflowId: string): Promise<number> => {
    const began = performance.now();
    const { executionId } = await env.admin.POST('/workflows/{workflowId}/executions', {
      params: { path: { workflowId } },
      body: { workflowId },
    });
    await env.temporal.workflow.getHandle(executionWorkflowId(executionId)).result();
    return performance.now() - began;
  };

  // The maximum rate, closed loop.
  const measuredStart = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: plan.inFlight }, async () => {
      while (next++ < plan.calibrationRuns) await runOnce(calibration);
    }),
  );
  const maxPerSecond = plan.calibrationRuns / ((performance.now() - measuredStart) / 1000);
  const perSecond = maxPerSecond * 0.8;

  // The soak, open loop.
  const samples: Sample[] = [];
  const memory: { at: number; api: number; worker: number }[] = [];
  const pending: Promise<void>[] = [];
  const began = performance.now();
  const elapsed = () => (performance.now() - began) / 1000;
  const sampler = setInterval(() => {
    void Promise.all([residentBytes(env.api.pid), residentBytes(env.worker.pid)]).then(
      ([api, worker]) => memory.push({ at: elapsed(), api, worker }),
    );
  }, 2000);
  const total = Math.round(perSecond * plan.seconds);
  for (let index = 0; index < total; index++) {
    const due = (index / perSecond) * 1000;
    const wait = due - (performance.now() - began);
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const sample: Sample = { at: elapsed() };
    samples.push(sample);
    pending.push(
      runOnce(workflowId).then(
        (latency) => void (sample.latencyMs = latency),
        (error: unknown) => void (sample.failed = String(error)),
      ),
    );
  }
  const drained = await Promise.race([
    Promise.all(pending).then(() => true),
    new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 60_000)),
  ]);
  clearInterval(sampler);

  const rows = await env.db
    .selectFrom('workflowExecution')
    .select(['status'])
    .where('workflowId', '=', workflowId)
    .execute();
  const completed = rows.filter((row) => row.status === 'Completed').length;
  const stuck = total - completed;
  const latencies = (from: number, to: number) =>
    samples
      .filter((sample) => sample.at >= from && sample.at < to && sample.latencyMs !== undefined)
      .map((sample) => sample.latencyMs!);
  const minute = Math.min(60, plan.seconds / 2);
  const firstP99 = percentile(latencies(0, minute), 99);
  const lastP99 = percentile(latencies(plan.seconds - minute, plan.seconds), 99);
  const warm = memory.find((point) => point.at >= plan.seconds / 5) ?? memory[0]!;
  const last = memory.at(-1)!;
  const growth = (from: number, to: number) => ((to - from) / from) * 100;
  const apiGrowth = growth(warm.api, last.api);
  const workerGrowth = growth(warm.worker, last.worker);

  const windows = Array.from({ length: Math.ceil(plan.seconds / windowSeconds) }, (_, index) => {
    const values = latencies(index * windowSeconds, (index + 1) * windowSeconds);
    return {
      at: index * windowSeconds,
      p50: percentile(values, 50),
      p99: percentile(values, 99),
      count: values.length,
    };
  });
  const chart = path.join(resultsDirectory, 'soak.svg');
  await writeFile(chart, soakChart(windows, memory, plan.seconds));

  return {
    results: {
      soak_stuck_runs: stuck,
      soak_p99_growth: round(lastP99 / firstP99, 2),
      soak_rss_growth_pct: round(Math.max(apiGrowth, workerGrowth), 1),
    },
    rows: [
      {
        metric: `soak ${plan.seconds} s at ${round(perSecond, 1)} exec/s (80 % of ${round(maxPerSecond, 1)}): stuck or lost`,
        ours: `${stuck} of ${total}${drained ? '' : ' (some still running a minute after the last start)'}`,
        baseline: '',
        ratio: '',
        target: '0',
      },
      {
        metric: `soak p99 ms, first ${minute} s → last ${minute} s`,
        ours: `${round(firstP99, 0)} → ${round(lastP99, 0)} (× ${round(lastP99 / firstP99, 2)})`,
        baseline: '',
        ratio: '',
        target: '≤ 1.5×',
      },
      {
        metric: 'soak RSS growth after warm-up, api / worker %',
        ours: `${round(apiGrowth, 1)} / ${round(workerGrowth, 1)} (${round(last.api / 2 ** 20, 0)} / ${round(last.worker / 2 ** 20, 0)} MiB)`,
        baseline: '',
        ratio: '',
        target: '< 10',
      },
    ],
    details: {
      ...plan,
      maxPerSecond: round(maxPerSecond, 2),
      perSecond: round(perSecond, 2),
      started: total,
      completed,
      failures: samples.filter((sample) => sample.failed).map((sample) => sample.failed),
      firstMinuteP99Ms: firstP99,
      lastMinuteP99Ms: lastP99,
      rssMiB: {
        warm: { at: warm.at, api: warm.api / 2 ** 20, worker: warm.worker / 2 ** 20 },
        last: { at: last.at, api: last.api / 2 ** 20, worker: last.worker / 2 ** 20 },
      },
      windows,
      chart: path.relative(process.cwd(), chart),
    },
  };
}

/** Latency p50/p99 per window (left axis, ms) and RSS of both processes (right axis, MiB). */
function soakChart(
  windows: { at: number; p50: number; p99: number }[],
  memory: { at: number; api: number; worker: number }[],
  seconds: number,
): string {
  const width = 720;
  const height = 320;
  const pad = { left: 56, right: 64, top: 24, bottom: 40 };
  const plotWidth = width - pad.left - pad.right;
  const plotHeight = height - pad.top - pad.bottom;
  const maxMs = Math.max(1, ...windows.map((window) => window.p99).filter(Number.isFinite));
  const maxMiB = Math.max(1, ...memory.map((point) => Math.max(point.api, point.worker) / 2 ** 20));
  const x = (at: number) => pad.left + (at / seconds) * plotWidth;
  const yMs = (ms: number) => pad.top + plotHeight - (ms / maxMs) * plotHeight;
  const yMiB = (mib: number) => pad.top + plotHeight - (mib / maxMiB) * plotHeight;
  const line = (points: [number, number][], color: string, dash = '') =>
    `<polyline fill="none" stroke="${color}" stroke-width="2"${dash ? ` stroke-dasharray="${dash}"` : ''} points="${points
      .filter(([, y]) => Number.isFinite(y))
      .map(([px, py]) => `${px.toFixed(1)},${py.toFixed(1)}`)
      .join(' ')}"/>`;
  const label = (text: string, px: number, py: number, anchor = 'start') =>
    `<text x="${px}" y="${py}" font-size="12" font-family="sans-serif" text-anchor="${anchor}">${text}</text>`;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">`,
    `<rect width="${width}" height="${height}" fill="white"/>`,
    `<rect x="${pad.left}" y="${pad.top}" width="${plotWidth}" height="${plotHeight}" fill="none" stroke="#999"/>`,
    line(
      windows.map((window) => [x(window.at + windowSeconds / 2), yMs(window.p50)]),
      '#1f77b4',
    ),
    line(
      windows.map((window) => [x(window.at + windowSeconds / 2), yMs(window.p99)]),
      '#d62728',
    ),
    line(
      memory.map((point) => [x(point.at), yMiB(point.api / 2 ** 20)]),
      '#2ca02c',
      '6 3',
    ),
    line(
      memory.map((point) => [x(point.at), yMiB(point.worker / 2 ** 20)]),
      '#9467bd',
      '6 3',
    ),
    label(`${round(maxMs, 0)} ms`, pad.left - 6, pad.top + 10, 'end'),
    label('0', pad.left - 6, pad.top + plotHeight, 'end'),
    label(`${round(maxMiB, 0)} MiB`, width - pad.right + 6, pad.top + 10),
    label(`${seconds} s`, pad.left + plotWidth, height - pad.bottom + 16, 'end'),
    label(
      'latency p50 (blue), p99 (red) per 10 s; RSS api (green), worker (purple), dashed',
      pad.left,
      height - 10,
    ),
    '</svg>',
    '',
  ].join('\n');
}
