/**
 * `api_read_ratio` / `api_write_ratio`: throughput of authenticated `GET /workflows/{id}` and
 * `POST /workflows/Add` (Basic auth, keep-alive, 32 connections) ÷ a plain Express + `pg` server
 * (`baseline/express-server.ts`) on the same PostgreSQL table: the bare single-row SELECT for
 * reads; for writes what any correct service does (authenticate, validate the body and its
 * definition with compiled JSON Schema validators, INSERT). Each round also measures the CPU
 * time each server process spent per request.
 */
import type { RawRequest } from 'autocannon';
import { databaseWork, rowsByTableLine } from './database-work.js';
import { poolSize, type BenchEnvironment } from './environment.js';
import { runHttpLoad, type LoadResult } from './http-load.js';
import type { Plan } from './plan.js';
import type { BenchOutcome, TableRow } from './report.js';
import { describeSummary, ratioSummary, round, summarize } from './stats.js';

const readSetSize = 100;
/** Writes sent one at a time while PostgreSQL's counters are read around them. */
const writesCounted = 100;

interface Side {
  url: string;
  /** Headers of every request. */
  headers: Record<string, string>;
  /** Headers of writes only (the read baseline does not authenticate). */
  writeHeaders: Record<string, string>;
  pid: number;
}

export async function benchmarkApi(
  env: BenchEnvironment,
  plan: Plan['api'],
): Promise<BenchOutcome> {
  const baselineServer = await env.startBaseline('express-server.ts', {
    database: env.databaseUrl,
    pool: String(poolSize),
    user: env.user.username,
    passwordHash: env.user.passwordHash,
  });
  const authorization = { authorization: env.authorization };
  const ours: Side = {
    url: env.apiUrl,
    headers: authorization,
    writeHeaders: {},
    pid: env.api.pid,
  };
  const baseline: Side = {
    url: baselineServer.ready.url!,
    headers: {},
    writeHeaders: authorization,
    pid: baselineServer.pid,
  };

  const ids: string[] = [];
  for (let index = 0; index < readSetSize; index++) {
    const created = await env.admin.POST('/workflows/Add', {
      body: { definition: definition(`bench-read-${Date.now()}-${index}`) },
    });
    ids.push(created.id);
  }
  const read = (side: Side) => (): RawRequest => ({
    method: 'GET',
    path: `/workflows/${ids[Math.floor(Math.random() * ids.length)]}`,
    headers: side.headers,
  });
  let written = 0;
  const tag = Date.now().toString(36);
  const write = (side: Side) => (): RawRequest => ({
    method: 'POST',
    path: '/workflows/Add',
    headers: { ...side.headers, ...side.writeHeaders, 'content-type': 'application/json' },
    body: JSON.stringify({ definition: definition(`bench-write-${tag}-${written++}`) }),
  });

  const readResult = await compare(plan, ours, baseline, read);
  const writeResult = await compare(plan, ours, baseline, write);
  // What one write asks of PostgreSQL, one request at a time (concurrent ones share the audit
  // trail's statements): its round trips are much of its CPU.
  const writeWork = {
    ours: await databaseWork(
      env,
      () => oneAtATime(ours, write(ours), writesCounted),
      writesCounted,
    ),
    baseline: await databaseWork(
      env,
      () => oneAtATime(baseline, write(baseline), writesCounted),
      writesCounted,
    ),
  };
  await baselineServer.stop();

  const rows: TableRow[] = [
    row('GET /workflows/{id} req/s', readResult, '≥ 0.90'),
    cpuRow('GET server CPU µs/request', readResult),
    row('POST /workflows/Add req/s', writeResult, '≥ 0.80'),
    cpuRow('POST server CPU µs/request', writeResult),
    {
      metric: 'POST /workflows/Add DB transactions / rows per request, one at a time',
      ours: describeWork(writeWork.ours),
      baseline: describeWork(writeWork.baseline),
      ratio: '',
      target: '',
    },
  ];
  return {
    results: {
      api_read_ratio: round(readResult.ratio.median),
      api_write_ratio: round(writeResult.ratio.median),
    },
    rows,
    details: {
      read: withoutWindows(readResult),
      write: withoutWindows(writeResult),
      writeDatabaseWork: writeWork,
      connections: plan.connections,
      poolSize,
    },
    phases: [
      { name: 'GET /workflows/{id}', role: 'api', windows: readResult.windows.ours },
      { name: 'GET /workflows/{id}', role: 'express-server', windows: readResult.windows.baseline },
      { name: 'POST /workflows/Add', role: 'api', windows: writeResult.windows.ours },
      {
        name: 'POST /workflows/Add',
        role: 'express-server',
        windows: writeResult.windows.baseline,
      },
    ],
  };
}

function withoutWindows({ windows: _windows, ...rest }: Comparison) {
  return rest;
}

type Comparison = Awaited<ReturnType<typeof compare>>;

/** CPU per request in each server process: the cost ours adds, free of the machine's noise. */
function cpuRow(metric: string, result: Comparison): TableRow {
  return {
    metric,
    ours: describeSummary(result.cpuMicrosPerRequest.ours, 0),
    baseline: describeSummary(result.cpuMicrosPerRequest.baseline, 0),
    ratio: describeSummary(result.cpuMicrosPerRequest.ratio),
    target: '',
  };
}

function row(metric: string, result: Comparison, target: string): TableRow {
  return {
    metric,
    ours: describeSummary(result.ours, 0),
    baseline: describeSummary(result.baseline, 0),
    ratio: describeSummary(result.ratio),
    target,
  };
}

/** Warms both up, then runs rounds of baseline and ours back to back, alternating which goes first. */
async function compare(
  plan: Plan['api'],
  ours: Side,
  baseline: Side,
  request: (side: Side) => () => RawRequest,
) {
  const load = (side: Side, seconds: number) =>
    runHttpLoad({
      url: side.url,
      connections: plan.connections,
      durationSeconds: seconds,
      request: request(side),
      serverPid: side.pid,
    });
  await load(baseline, plan.warmupSeconds);
  await load(ours, plan.warmupSeconds);
  const oursRounds: LoadResult[] = [];
  const baselineRounds: LoadResult[] = [];
  for (let index = 0; index < plan.rounds; index++) {
    const order = index % 2 === 0 ? [baseline, ours] : [ours, baseline];
    for (const side of order) {
      const result = await load(side, plan.seconds);
      if (result.failures > 0) {
        throw new Error(`${side.url}: ${result.failures} failed requests during the load`);
      }
      (side === ours ? oursRounds : baselineRounds).push(result);
    }
  }
  const perSecond = (results: LoadResult[]) => results.map((result) => result.perSecond);
  const cpu = (results: LoadResult[]) => results.map((result) => result.serverCpuMicrosPerRequest);
  const windows = (results: LoadResult[]) =>
    results.map((result) => ({ ...result.window, requests: result.requests }));
  return {
    ours: summarize(perSecond(oursRounds)),
    baseline: summarize(perSecond(baselineRounds)),
    ratio: ratioSummary(perSecond(oursRounds), perSecond(baselineRounds)),
    latencyP50Ms: {
      ours: summarize(oursRounds.map((result) => result.latencyP50Ms)),
      baseline: summarize(baselineRounds.map((result) => result.latencyP50Ms)),
    },
    cpuMicrosPerRequest: {
      ours: summarize(cpu(oursRounds)),
      baseline: summarize(cpu(baselineRounds)),
      ratio: ratioSummary(cpu(oursRounds), cpu(baselineRounds)),
    },
    windows: { ours: windows(oursRounds), baseline: windows(baselineRounds) },
  };
}

/** A one-task workflow definition: what both servers read and write. */
/** Sends `count` requests one after another, each answered 200 before the next. */
async function oneAtATime(side: Side, request: () => RawRequest, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const { method, path, headers, body } = request();
    const response = await fetch(`${side.url}${path}`, {
      method,
      ...(headers ? { headers } : {}),
      ...(body !== undefined ? { body: body as string } : {}),
    });
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`${method} ${path} answered ${response.status}`);
  }
}

function describeWork(work: Awaited<ReturnType<typeof databaseWork>>): string {
  return `${round(work.transactions, 1)} / ${round(work.rowsWritten, 1)} (${rowsByTableLine(work)})`;
}

function definition(name: string): string {
  return JSON.stringify({ name, tasks: [{ name: 'Only', type: { plugin: 'Flow/NoOp' } }] });
}
