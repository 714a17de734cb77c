/**
 * The workloads of the resilience tests (and the benchmarks): chains of built-in plugins whose
 * every row and log entry can be counted in advance.
 */
import { delay, noop, type Definition } from '../../support/engine-support.js';

/**
 * One task of a chain: the no-op plugin, a delay that keeps the run busy for a while, or a
 * JSONata sum (Data/Json, a plugin that runs in a sandbox process).
 */
export type Step = 'noop' | 'json' | { delayMs: number };

const sum = { type: { plugin: 'Data/Json' }, parameters: { input: [1, 2], expression: '$sum($)' } };

/** A chain `Step-1 → Step-2 → …` named `name`. */
export function chainDefinition(name: string, steps: Step[]): Definition {
  return {
    name,
    tasks: steps.map((step, index) => ({
      name: `Step-${index + 1}`,
      ...(step === 'noop' ? { type: noop } : step === 'json' ? sum : delay(step.delayMs)),
      ...(index > 0 ? { dependencies: [`Step-${index}`] } : {}),
    })),
  };
}

/**
 * What a completed chain logs: the execution's own "started" and "completed" entries, and per
 * task "Started." and "Completed in … ms." (the built-in plugins used here log nothing).
 */
export function expectedChainLogs(steps: Step[]): { executionLogs: number; taskLogs: number } {
  return { executionLogs: 2, taskLogs: 2 * steps.length };
}

/** A name unique to this run, so repeated runs on one database never collide. */
export function uniqueWorkflowName(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
}
