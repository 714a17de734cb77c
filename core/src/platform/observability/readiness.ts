import type { Client } from '@temporalio/client';

/**
 * The probes an orchestrator asks (`/livez`, `/readyz`; README, "Operating Trellis"). They are
 * not `/health`: that one reports every component for people and exists only when enabled;
 * these are always on, need no credentials and answer quickly with a status code a load
 * balancer or Kubernetes acts on.
 */

/** `/livez`: the process runs and its event loop answers. */
export const liveness = Object.freeze({ status: 'ok' as const });

export type ReadinessComponent = 'database' | 'temporal' | 'worker';

export interface ReadinessCheck {
  component: ReadinessComponent;
  ready: boolean;
  /** What was found, or why the component is not ready. */
  message: string;
}

/** `/readyz`: 200 when `status` is `ok`, else 503. */
export interface ReadinessReport {
  status: 'ok' | 'unavailable';
  checks: ReadinessCheck[];
}

export interface Readiness {
  /** Asks every part this process needs, at once; each within `CHECK_TIMEOUT_MS`. */
  check(): Promise<ReadinessReport>;
  /** The worker of this process started: from now on `/readyz` asks whether it polls. */
  watchWorker(isPolling: () => boolean): void;
}

/**
 * A dependency slower than this counts as not ready. Probes should allow a little more
 * (Kubernetes: `timeoutSeconds: 3`; its default of 1 s is too short for a busy database pool).
 */
export const CHECK_TIMEOUT_MS = 2_000;

/**
 * Readiness of a process: the database answers, Temporal answers and, in a process that runs a
 * worker (`withWorker`), the worker polls its task queue.
 */
export function createReadiness(deps: {
  /** Resolves when the database answers a query. */
  pingDatabase: () => Promise<void>;
  temporal: Client;
  withWorker: boolean;
}): Readiness {
  let workerPolls: (() => boolean) | undefined;
  const checks: Array<() => Promise<ReadinessCheck>> = [
    () =>
      probe('database', async () => {
        await deps.pingDatabase();
        return 'The database answers.';
      }),
    () =>
      probe('temporal', async () => {
        const { connection } = deps.temporal;
        await connection.withDeadline(Date.now() + CHECK_TIMEOUT_MS, () =>
          connection.workflowService.getSystemInfo({}),
        );
        return 'Temporal answers.';
      }),
  ];
  if (deps.withWorker) {
    checks.push(async () => {
      if (!workerPolls) {
        return { component: 'worker', ready: false, message: 'The worker has not started yet.' };
      }
      return workerPolls()
        ? { component: 'worker', ready: true, message: 'The worker polls its task queue.' }
        : { component: 'worker', ready: false, message: 'The worker does not poll (stopping).' };
    });
  }
  return {
    async check() {
      const results = await Promise.all(checks.map((check) => check()));
      return {
        status: results.every((result) => result.ready) ? 'ok' : 'unavailable',
        checks: results,
      };
    },
    watchWorker(isPolling) {
      workerPolls = isPolling;
    },
  };
}

async function probe(
  component: ReadinessComponent,
  ask: () => Promise<string>,
): Promise<ReadinessCheck> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`no answer within ${CHECK_TIMEOUT_MS} ms`)),
      CHECK_TIMEOUT_MS,
    );
  });
  try {
    return { component, ready: true, message: await Promise.race([ask(), timeout]) };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    const name = component === 'database' ? 'The database' : 'Temporal';
    return { component, ready: false, message: `${name} does not answer: ${reason}` };
  } finally {
    clearTimeout(timer);
  }
}
