/**
 * Live streams at scale: `watchers` Server-Sent Events clients on the one API process following
 * `runs` concurrent executions (`watchers / runs` on each), each run a chain of `Flow/Delay`
 * tasks so its events come over a few seconds, as a real run's do.
 * - `sse_500_delivered`: 1 when every watcher received every event of its execution, in order
 *   (checked against `execution_event` in PostgreSQL once the runs ended), else 0;
 * - `sse_500_p99_ms`: p99 of the delay from an event's recording (`at`: the time of its
 *   transaction, at or before its commit, so the delay is if anything overstated) to its arrival
 *   at a client, over the events recorded after that client connected; target ≤ 250 ms;
 * - the API process's CPU time and resident memory per watcher over the phase (`/proc`).
 * The clients run in the benchmark's process on the same two cores: their own parsing competes
 * with the API for the CPU, which the delays include.
 */
import { performance } from 'node:perf_hooks';
import { uniqueWorkflowName } from '../test/resilience/support/workload.js';
import { processCpuMicros, residentBytes } from './cpu.js';
import type { BenchEnvironment } from './environment.js';
import type { Plan } from './plan.js';
import type { BenchOutcome } from './report.js';
import { percentile, round } from './stats.js';

interface Watcher {
  executionId: string;
  connectedAt: number;
  ids: number[];
  delays: number[];
  ended: Promise<void>;
}

export async function benchmarkStreams(
  env: BenchEnvironment,
  plan: Plan['streams'],
): Promise<BenchOutcome> {
  const definition = JSON.stringify({
    name: uniqueWorkflowName('bench-streams'),
    tasks: Array.from({ length: plan.tasks }, (_, index) => ({
      name: `Step${index + 1}`,
      type: { plugin: 'Flow/Delay' },
      parameters: { milliseconds: plan.taskMilliseconds },
      ...(index > 0 ? { dependencies: [`Step${index}`] } : {}),
    })),
  });
  const { id: workflowId } = await env.admin.POST('/workflows/Add', { body: { definition } });
  const start = () =>
    env.admin.POST('/workflows/{workflowId}/executions', {
      params: { path: { workflowId } },
      body: { workflowId },
    });

  const pid = env.api.pid;
  const rssBefore = await residentBytes(pid);
  const cpuBefore = await processCpuMicros(pid);
  let rssPeak = rssBefore;
  const sampler = setInterval(() => {
    void residentBytes(pid).then((rss) => (rssPeak = Math.max(rssPeak, rss)));
  }, 250);
  const began = performance.now();

  // Every run starts, then its watchers connect at once (each replays what it missed first).
  const executions = await Promise.all(
    Array.from({ length: plan.runs }, async () => (await start()).executionId),
  );
  const perRun = Math.ceil(plan.watchers / plan.runs);
  const watchers = executions.flatMap((executionId) =>
    Array.from({ length: perRun }, () => watch(env, workflowId, executionId)),
  );
  await Promise.all(watchers.map((watcher) => watcher.ended));
  const seconds = (performance.now() - began) / 1000;
  clearInterval(sampler);
  const cpuMicros = (await processCpuMicros(pid)) - cpuBefore;

  // What PostgreSQL recorded, per execution: every watcher must have all of it, in order.
  const recorded = new Map<string, number[]>();
  for (const executionId of executions) {
    const rows = await env.db
      .selectFrom('executionEvent')
      .select('seq')
      .where('executionId', '=', executionId)
      .orderBy('seq')
      .execute();
    recorded.set(
      executionId,
      rows.map((row) => Number(row.seq)),
    );
  }
  const incomplete = watchers.filter(
    (watcher) => watcher.ids.join(',') !== recorded.get(watcher.executionId)!.join(','),
  );
  const delays = watchers.flatMap((watcher) => watcher.delays);
  const events = watchers.reduce((sum, watcher) => sum + watcher.ids.length, 0);
  const p99 = percentile(delays, 99);
  const cpuMsPerWatcher = cpuMicros / 1000 / watchers.length;
  const kibPerWatcher = Math.max(0, rssPeak - rssBefore) / 1024 / watchers.length;

  return {
    results: {
      sse_500_delivered: incomplete.length === 0 ? 1 : 0,
      sse_500_p99_ms: round(p99, 1),
    },
    rows: [
      {
        metric: `${watchers.length} SSE watchers on ${plan.runs} runs: events delivered`,
        ours: `${events} (${incomplete.length} watchers missing any)`,
        baseline: '',
        ratio: '',
        target: 'every one',
      },
      {
        metric: 'SSE delay from recording to client, p50 / p99 ms',
        ours: `${round(percentile(delays, 50), 1)} / ${round(p99, 1)}`,
        baseline: '',
        ratio: '',
        target: 'p99 ≤ 250',
      },
      {
        metric: 'API per watcher: CPU ms over the phase, peak RSS KiB',
        ours: `${round(cpuMsPerWatcher, 1)} ms, ${round(kibPerWatcher, 1)} KiB (${round(seconds, 1)} s)`,
        baseline: '',
        ratio: '',
        target: 'reported',
      },
    ],
    details: {
      ...plan,
      watchers: watchers.length,
      events,
      liveEvents: delays.length,
      incomplete: incomplete.length,
      seconds: round(seconds, 1),
      delayMs: {
        p50: percentile(delays, 50),
        p90: percentile(delays, 90),
        p99,
        max: Math.max(...delays),
      },
      api: {
        cpuMs: round(cpuMicros / 1000, 0),
        rssBeforeMiB: round(rssBefore / 2 ** 20, 1),
        rssPeakMiB: round(rssPeak / 2 ** 20, 1),
        cpuMsPerWatcher: round(cpuMsPerWatcher, 2),
        kibPerWatcher: round(kibPerWatcher, 1),
      },
    },
  };
}

/** One client following an execution's events to the end of the stream. */
function watch(env: BenchEnvironment, workflowId: string, executionId: string): Watcher {
  const watcher: Watcher = {
    executionId,
    connectedAt: Date.now(),
    ids: [],
    delays: [],
    ended: Promise.resolve(),
  };
  watcher.ended = (async () => {
    const response = await fetch(
      `${env.apiUrl}/workflows/${workflowId}/executions/${executionId}/events`,
      { headers: { authorization: env.authorization, accept: 'text/event-stream' } },
    );
    if (response.status !== 200 || !response.body) {
      throw new Error(`events of ${executionId}: HTTP ${response.status}`);
    }
    watcher.connectedAt = Date.now();
    const decoder = new TextDecoder();
    let buffer = '';
    for await (const chunk of response.body) {
      const arrived = Date.now();
      buffer += decoder.decode(chunk as Uint8Array, { stream: true });
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        let id: number | undefined;
        let data: string | undefined;
        for (const line of frame.split('\n')) {
          if (line.startsWith('id: ')) id = Number(line.slice(4));
          else if (line.startsWith('data: ')) data = line.slice(6);
        }
        if (id === undefined || data === undefined) continue; // a heartbeat comment
        watcher.ids.push(id);
        const at = Date.parse((JSON.parse(data) as { at: string }).at);
        if (at >= watcher.connectedAt) watcher.delays.push(arrived - at);
      }
    }
  })();
  return watcher;
}
