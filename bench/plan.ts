/** How much each benchmark measures: `--quick` (about 9 minutes on 2 cores) or the full run. */
export interface Plan {
  mode: 'quick' | 'full';
  api: { rounds: number; seconds: number; warmupSeconds: number; connections: number };
  exec: { rounds: number; executionsPerRound: number; inFlight: number; latencySamples: number };
  dag: { rounds: number; layers: number; width: number; parallelism: number };
  /** The same DAG shape at 10,000 tasks. */
  dag10k: { rounds: number; layers: number; width: number; parallelism: number };
  /** `entries` for numbered pages, `cursorEntries` for cursor pages at depth. */
  logs: { entries: number; cursorEntries: number; samples: number; pageSize: number };
  /** A workflow's execution list: `executions` of them, pages of `pageSize`. */
  lists: { executions: number; samples: number; pageSize: number };
  /** Starts of `npm start` and of a worker, each measured `rounds` times. */
  startup: { rounds: number };
  /** `watchers` SSE clients following `runs` concurrent runs of `tasks` delays in a chain. */
  streams: { watchers: number; runs: number; tasks: number; taskMilliseconds: number };
  /** One forEach task over `items` items, `parallelism` at once (`--only=foreach`). */
  foreach: { rounds: number; items: number; parallelism: number };
  /** `seconds` at 80 % of the rate `calibrationRuns` runs reach `inFlight` at a time. */
  soak: { seconds: number; inFlight: number; calibrationRuns: number };
  /**
   * `samples` one-task runs of a quiet project, alone and while another project starts
   * `floodRuns` runs of `floodTasks` chained tasks, `inFlight` starts at a time.
   */
  fairness: {
    samples: number;
    floodRuns: number;
    floodTasks: number;
    inFlight: number;
    limitedStarts: number;
  };
}

const shared = {
  dag: { layers: 20, width: 100, parallelism: 100 },
  dag10k: { layers: 100, width: 100, parallelism: 100 },
  logs: { entries: 100_000, pageSize: 100 },
  foreach: { items: 10_000, parallelism: 100 },
} as const;

export const quickPlan: Plan = {
  mode: 'quick',
  api: { rounds: 5, seconds: 3, warmupSeconds: 2, connections: 32 },
  exec: { rounds: 3, executionsPerRound: 100, inFlight: 50, latencySamples: 30 },
  dag: { rounds: 1, ...shared.dag },
  dag10k: { rounds: 1, ...shared.dag10k },
  logs: { samples: 100, cursorEntries: 1_000_000, ...shared.logs },
  lists: { executions: 100_000, samples: 100, pageSize: 100 },
  startup: { rounds: 3 },
  streams: { watchers: 500, runs: 50, tasks: 5, taskMilliseconds: 300 },
  foreach: { rounds: 1, ...shared.foreach },
  soak: { seconds: 60, inFlight: 50, calibrationRuns: 200 },
  fairness: { samples: 30, floodRuns: 400, floodTasks: 5, inFlight: 8, limitedStarts: 60 },
};

export const fullPlan: Plan = {
  mode: 'full',
  api: { rounds: 9, seconds: 6, warmupSeconds: 3, connections: 32 },
  exec: { rounds: 5, executionsPerRound: 300, inFlight: 50, latencySamples: 100 },
  dag: { rounds: 3, ...shared.dag },
  dag10k: { rounds: 1, ...shared.dag10k },
  logs: { samples: 300, cursorEntries: 1_000_000, ...shared.logs },
  lists: { executions: 100_000, samples: 300, pageSize: 100 },
  startup: { rounds: 5 },
  streams: { watchers: 500, runs: 50, tasks: 10, taskMilliseconds: 300 },
  foreach: { rounds: 2, ...shared.foreach },
  soak: { seconds: 300, inFlight: 50, calibrationRuns: 300 },
  fairness: { samples: 100, floodRuns: 2000, floodTasks: 5, inFlight: 8, limitedStarts: 60 },
};
