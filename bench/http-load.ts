/**
 * HTTP load with a real load generator (autocannon): a fixed number of keep-alive connections
 * each sending the next request as soon as the previous one answered.
 */
import autocannon, { type RawRequest } from 'autocannon';

export interface LoadOptions {
  url: string;
  connections: number;
  durationSeconds: number;
  /** Builds each request (method, path, headers, body). */
  request: () => RawRequest;
}

export interface LoadResult {
  /** Successful (2xx) responses per second. */
  perSecond: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  /** Responses that were not 2xx, plus connection errors and timeouts. */
  failures: number;
}

/** Runs the load and measures it; failures are counted, never silently mixed into the rate. */
export async function runHttpLoad(options: LoadOptions): Promise<LoadResult> {
  const result = await autocannon({
    url: options.url,
    connections: options.connections,
    duration: options.durationSeconds,
    pipelining: 1,
    requests: [{ setupRequest: () => options.request() }],
  });
  return {
    perSecond: result['2xx'] / result.duration,
    latencyP50Ms: result.latency.p50,
    latencyP99Ms: result.latency.p99,
    failures: result.non2xx + result.errors + result.timeouts,
  };
}
