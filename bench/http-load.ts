/**
 * HTTP load with a real load generator (autocannon): a fixed number of keep-alive connections
 * each sending the next request as soon as the previous one answered.
 */
import autocannon, { type RawRequest } from 'autocannon';
import { processCpuMicros } from './cpu.js';

export interface LoadOptions {
  url: string;
  connections: number;
  durationSeconds: number;
  /** Builds each request (method, path, headers, body). */
  request: () => RawRequest;
  /** The server's process: its CPU time per answered request is measured too. */
  serverPid?: number;
}

export interface LoadResult {
  /** Successful (2xx) responses per second. */
  perSecond: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  /** Responses that were not 2xx, plus connection errors and timeouts. */
  failures: number;
  /** Answered requests. */
  requests: number;
  /** CPU microseconds the server process used per answered request (NaN without a pid). */
  serverCpuMicrosPerRequest: number;
  /** When the load ran, on the monotonic clock V8's CPU profiles use (µs). */
  window: { startUs: number; endUs: number };
}

const monotonicMicros = () => Number(process.hrtime.bigint() / 1000n);

/** Runs the load and measures it; failures are counted, never silently mixed into the rate. */
export async function runHttpLoad(options: LoadOptions): Promise<LoadResult> {
  const cpu = () =>
    options.serverPid === undefined
      ? Promise.resolve(Number.NaN)
      : processCpuMicros(options.serverPid);
  const cpuBefore = await cpu();
  const startUs = monotonicMicros();
  const result = await autocannon({
    url: options.url,
    connections: options.connections,
    duration: options.durationSeconds,
    pipelining: 1,
    requests: [{ setupRequest: () => options.request() }],
  });
  const endUs = monotonicMicros();
  const cpuUsed = (await cpu()) - cpuBefore;
  const requests = result['2xx'] + result.non2xx;
  return {
    perSecond: result['2xx'] / result.duration,
    latencyP50Ms: result.latency.p50,
    latencyP99Ms: result.latency.p99,
    failures: result.non2xx + result.errors + result.timeouts,
    requests,
    serverCpuMicrosPerRequest: cpuUsed / requests,
    window: { startUs, endUs },
  };
}
