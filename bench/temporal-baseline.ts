/** The plain Temporal worker the execution and DAG benchmarks compare with; one per environment. */
import type { BenchEnvironment, BaselineProcess } from './environment.js';

export const baselineTaskQueue = 'bench-baseline';

const started = new WeakMap<BenchEnvironment, Promise<BaselineProcess>>();

/** Starts `bench/baseline/temporal-worker.ts` on the benchmark's Temporal, once. */
export function ensureTemporalBaseline(env: BenchEnvironment): Promise<BaselineProcess> {
  let worker = started.get(env);
  if (!worker) {
    worker = env.startBaseline('temporal-worker.ts', {
      address: env.temporalAddress,
      taskQueue: baselineTaskQueue,
    });
    started.set(env, worker);
  }
  return worker;
}
