// The part of autocannon 9's programmatic API the benchmarks use (the package ships no types;
// `@types/autocannon` would replace this file).
declare module 'autocannon' {
  interface RawRequest {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
  }

  interface RequestSpec extends RawRequest {
    setupRequest?: (request: RawRequest, context: Record<string, unknown>) => RawRequest;
  }

  interface Options {
    url: string;
    connections?: number;
    /** Seconds. */
    duration?: number;
    amount?: number;
    pipelining?: number;
    /** Seconds. */
    timeout?: number;
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    requests?: RequestSpec[];
  }

  interface Histogram {
    average: number;
    mean: number;
    stddev: number;
    min: number;
    max: number;
    p50: number;
    p90: number;
    p99: number;
  }

  interface Result {
    requests: Histogram & { total: number; sent: number };
    latency: Histogram;
    /** Seconds. */
    duration: number;
    errors: number;
    timeouts: number;
    non2xx: number;
    '2xx': number;
    statusCodeStats: Record<string, { count: number }>;
  }

  function autocannon(options: Options): Promise<Result> & { stop(): void };
  export default autocannon;
  export type { Options, Result, RequestSpec, RawRequest };
}
