/**
 * Which of the versioned behaviours of patches.ts a run has. A run of `trellisExecution` asks
 * Temporal at the point each behaviour first matters (`patched`, which records a marker the first
 * time); the calls stay exactly where they were, so every recorded history replays. Passed down
 * explicitly: workflow module state may be shared between runs.
 */
import { patched } from '@temporalio/workflow';
import { patches } from './patches.js';

export interface RunVersion {
  has(patch: keyof typeof patches): boolean;
}

/** A run of `trellisExecution`: each behaviour as its history says, or from now on. */
export const patchedRun: RunVersion = { has: (patch) => patched(patches[patch].id) };
