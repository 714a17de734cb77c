/**
 * Every Temporal patch the workflows ask `patched` about: its id, the day it came, and the
 * behaviour it guards. A run started before a patch replays without it; a run that asked for it
 * (a marker in its history) keeps it to its end.
 *
 * The ids are recorded in histories: never change one. A patch leaves in two steps
 * (`deprecatePatch`, then removal once no open run predates it), or all at once with a new
 * workflow type: `trellisExecutionV2` has every patch below from its start (run-version.ts,
 * `builtIntoV2`); a patch added after it is asked by runs of both types.
 */
export interface Patch {
  /** What `patched` is asked, byte for byte as histories recorded it. */
  readonly id: string;
  /** The day the patch came (runs started before it run without it). */
  readonly since: string;
  /** What the patch guards, in one line. */
  readonly guards: string;
}

export const patches = {
  outputs: {
    id: 'evaluate-outputs',
    since: '2026-11-24',
    guards:
      "A completed run evaluates its definition's `outputs` before it records its end (runs that declare none end as before).",
  },
  rerun: {
    id: 'rerun-reused-tasks',
    since: '2026-11-24',
    guards: "A rerun's reused tasks start out Completed.",
  },
  approvalDecisions: {
    id: 'approval-decisions',
    since: '2026-11-24',
    guards:
      'A run settles each decision (a signal, an update, a timeout) against the database before acting on it, and times approvals out; asked at its first approval.',
  },
  temporalUi: {
    id: 'temporal-ui',
    since: '2026-11-24',
    guards:
      'A run reads in the Temporal UI as in Trellis: it ends Failed or Canceled there too, keeps `TrellisStatus` current and takes decisions as updates; asked at its start.',
  },
  concurrency: {
    id: 'concurrency',
    since: '2026-11-24',
    guards:
      'A run in line for a `configuration.concurrency` slot waits for it, and one that ends wakes the next in line (and `onLimit: CancelOldest` cancels the oldest).',
  },
  foreach: {
    id: 'foreach',
    since: '2026-11-24',
    guards: 'A task with `forEach` runs once per item, in chunks of child workflows.',
  },
  subworkflows: {
    id: 'subworkflows',
    since: '2026-11-24',
    guards: 'A task with `workflow` runs that workflow as a Temporal child workflow.',
  },
  notifications: {
    id: 'notifications',
    since: '2026-11-24',
    guards:
      'A run sends its notifications to the configured webhooks; asked only by runs that have targets.',
  },
  boundedWorkflowTasks: {
    id: 'bounded-workflow-tasks',
    since: '2026-11-25',
    guards:
      "A run ends its workflow task after every 1,000 quick attempts, so that one task's completion stays under Temporal's 4 MB message limit.",
  },
  childProject: {
    id: 'child-project',
    since: '2026-11-28',
    guards:
      "A run's subworkflow and forEach children carry its project: `TrellisProject` (where the namespace has it) and a line of their details; asked when a child starts.",
  },
} as const satisfies Record<string, Patch>;
