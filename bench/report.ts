/** The benchmarks' output: the results file with the keys of issue 5, and the printed table. */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** `bench/results/latest.json`: the keys of issue 5, and those issue 19 added. */
export interface Results {
  api_read_ratio: number;
  api_write_ratio: number;
  exec_ratio: number;
  exec_per_s: number;
  exec_regular_ratio: number;
  tx_per_execution: number;
  /** Rows a 3-task execution writes in PostgreSQL (issue 31: ≤ 15). */
  exec_rows_per_execution: number;
  /** `exec_per_s` and `exec_ratio` on a real Temporal cluster (`benchmarkClusterExecutions`). */
  cluster_exec_per_s: number;
  cluster_exec_ratio: number;
  exec_e2e_p50_ms: number;
  exec_e2e_p99_ms: number;
  dag_2000_s: number;
  dag_overhead_ms_per_task: number;
  dag_history_events: number;
  dag_10000_s: number;
  dag_10000_ratio: number;
  dag_10000_history_events: number;
  logs_read_ms: number;
  logs_page_p50_ms_1m: number;
  executions_page_p50_ms_100k: number;
  startup_first_request_ms: number;
  startup_worker_poll_ms: number;
  startup_ready_s: number;
  sse_500_delivered: number;
  sse_500_p99_ms: number;
  soak_stuck_runs: number;
  soak_p99_growth: number;
  soak_rss_growth_pct: number;
  foreach_10000_s: number;
  foreach_history_events: number;
  foreach_chunk_history_events: number;
  fair_quiet_p50_ms: number;
  fair_quiet_p99_ms: number;
  fair_flood_p50_ms: number;
  fair_flood_p99_ms: number;
  fair_p99_ratio: number;
  noisy_neighbour_p99_ratio: number;
  fair_same_key_p99_ms: number;
  fair_same_key_ratio: number;
  /**
   * The peers (`npm run bench -- --peers`, bench/peers.ts): the 3-step chain's executions/s at
   * 50 in flight and one 1-step run's p50 ms. Absent for a peer that could not be measured.
   */
  peer_prefect_exec_per_s?: number;
  peer_prefect_p50_ms?: number;
  peer_restate_exec_per_s?: number;
  peer_restate_p50_ms?: number;
  peer_dbos_exec_per_s?: number;
  peer_dbos_p50_ms?: number;
  cores: number;
  date: string;
}

/** One line of the printed table. */
export interface TableRow {
  metric: string;
  ours: string;
  baseline: string;
  /** Ours ÷ baseline, median (min–max over rounds). */
  ratio: string;
  target: string;
}

/** What one benchmark reports: its keys, its table rows, and everything behind them. */
export interface BenchOutcome {
  results: Partial<Results>;
  rows: TableRow[];
  details: Record<string, unknown>;
  /** When each process served what (`--profile` summarises its CPU per request in each). */
  phases?: Phase[];
}

/** The time windows in which one process (`role`, as `BenchEnvironment.roles` names it) served one load. */
export interface Phase {
  name: string;
  role: string;
  windows: { startUs: number; endUs: number; requests: number }[];
}

/** Prints the rows as an aligned text table. */
export function printTable(rows: TableRow[]): void {
  const header: TableRow = {
    metric: 'metric',
    ours: 'ours',
    baseline: 'baseline',
    ratio: 'ratio (min–max)',
    target: 'target',
  };
  const columns = Object.keys(header) as (keyof TableRow)[];
  const widths = columns.map((column) =>
    Math.max(...[header, ...rows].map((row) => row[column].length)),
  );
  const line = (row: TableRow) =>
    columns.map((column, index) => row[column].padEnd(widths[index]!)).join('  ');
  console.log(
    [
      '',
      line(header),
      widths.map((width) => '-'.repeat(width)).join('  '),
      ...rows.map(line),
      '',
    ].join('\n'),
  );
}

/** Writes `latest.json` (the keys) and `latest-details.json` (rounds, spreads, settings). */
export async function writeResults(
  directory: string,
  results: Results,
  details: Record<string, unknown>,
): Promise<string> {
  await mkdir(directory, { recursive: true });
  // A full run does not measure the peers: the figures of the last `--peers` run stay.
  const earlier = await readResults(directory);
  const peers = earlier ? peerKeys(earlier.results) : {};
  const peerDetails = earlier?.details.peers;
  await saveResults(
    directory,
    { ...results, ...peers },
    { ...details, ...(peerDetails ? { peers: peerDetails } : {}) },
  );
  return path.join(directory, 'latest.json');
}

/**
 * Puts a `--peers` run's `peer_*` keys into `latest.json` beside the last full run's, and its
 * details (with its date and mode) under `peers` in `latest-details.json`. Undefined, and nothing
 * written, when there is no full run's file to add them to.
 */
export async function addPeerResults(
  directory: string,
  results: Partial<Results>,
  details: Record<string, unknown>,
): Promise<string | undefined> {
  const earlier = await readResults(directory);
  if (!earlier) return undefined;
  const kept = Object.fromEntries(
    Object.entries(earlier.results).filter(([key]) => !key.startsWith('peer_')),
  );
  await saveResults(
    directory,
    { ...kept, ...peerKeys(results) },
    { ...earlier.details, peers: details },
  );
  return path.join(directory, 'latest.json');
}

function peerKeys(results: Partial<Results>): Partial<Results> {
  return Object.fromEntries(Object.entries(results).filter(([key]) => key.startsWith('peer_')));
}

async function readResults(
  directory: string,
): Promise<{ results: Partial<Results>; details: Record<string, unknown> } | undefined> {
  const read = async (name: string) =>
    JSON.parse(await readFile(path.join(directory, name), 'utf8')) as Record<string, unknown>;
  try {
    return { results: await read('latest.json'), details: await read('latest-details.json') };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

async function saveResults(
  directory: string,
  results: Partial<Results>,
  details: Record<string, unknown>,
): Promise<void> {
  await writeFile(path.join(directory, 'latest.json'), `${JSON.stringify(results, null, 2)}\n`);
  await writeFile(
    path.join(directory, 'latest-details.json'),
    `${JSON.stringify(details, null, 2)}\n`,
  );
}
