/**
 * The container health check (`HEALTHCHECK` of deploy/Dockerfile): exits 0 when the Trellis
 * process of this container answers its readiness probe with 200, else 1, printing one line that
 * says what it asked and what came back (Docker keeps it in `docker inspect`).
 *
 *   node dist/bin/healthcheck.js [--probe readyz|livez]
 *
 * One image runs every role, so it asks the API (`Server.Port`) first and, when nothing listens
 * there, a worker-only process's probe port (`Metrics.WorkerPort`, 9464 unless configured). The
 * ports come from the configuration the process itself reads (file and `TRELLIS__` variables).
 */
import { parseArgs } from 'node:util';
import { loadConfig } from '#platform/config/load.js';
import type { TrellisConfig } from '#platform/config/types.js';

const timeoutMs = 3_000;

type Answer = { status: number } | { refused: true } | { error: string };

async function ask(url: string): Promise<Answer> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    await response.body?.cancel();
    return { status: response.status };
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    if (cause?.code === 'ECONNREFUSED') return { refused: true };
    return { error: cause?.message ?? (error as Error).message };
  }
}

/** Where to connect for a listener on `host`: a wildcard address is reached on loopback. */
function connectHost(host: string): string {
  if (host === '0.0.0.0' || host === '::' || host === '[::]') return '127.0.0.1';
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

function workerPort(config: TrellisConfig): number {
  return config.Metrics.WorkerPort;
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: { probe: { type: 'string', default: 'readyz' } },
    strict: true,
  });
  if (values.probe !== 'readyz' && values.probe !== 'livez') {
    console.error(`healthcheck: --probe must be readyz or livez, not "${values.probe}"`);
    return 2;
  }
  let config: TrellisConfig;
  try {
    config = loadConfig({ env: process.env, cwd: process.cwd() });
  } catch (error) {
    console.error(`healthcheck: configuration: ${(error as Error).message}`);
    return 1;
  }
  const host = connectHost(config.Server.Host);
  const tried: string[] = [];
  for (const port of [config.Server.Port, workerPort(config)]) {
    const url = `http://${host}:${port}/${values.probe}`;
    const answer = await ask(url);
    if ('refused' in answer) {
      tried.push(`${url}: connection refused`);
      continue;
    }
    if ('error' in answer) {
      console.error(`healthcheck: ${url}: ${answer.error}`);
      return 1;
    }
    const healthy = answer.status === 200;
    (healthy ? console.log : console.error)(`healthcheck: ${url}: ${answer.status}`);
    return healthy ? 0 : 1;
  }
  console.error(`healthcheck: nothing listens (${tried.join('; ')})`);
  return 1;
}

process.exitCode = await main();
