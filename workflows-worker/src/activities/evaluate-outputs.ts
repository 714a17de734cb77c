import * as executionRepository from '#store/execution-repository.js';
import * as taskExecutionRepository from '#store/task-execution-repository.js';
import { evaluateOutputExpression, ExpressionError } from '#definition/expressions/evaluate.js';
import { referencedTasks } from '#definition/expressions/references.js';
import { approvalReads, decisionScope } from './approval-scope.js';
import type { DefinitionCache } from './definitions.js';
import type { EngineDeps } from './deps.js';

export type OutputsResult = { ok: true } | { ok: false; message: string };

export interface OutputsInput {
  executionId: string;
  /** The run's id when an operator reset it from Temporal (reset-runs.ts). */
  run?: string;
}

/**
 * Evaluates the definition's `outputs` of a run whose tasks are done, against their outputs,
 * the run's inputs and the variables, and records them. An output that fails to evaluate fails
 * the run (the workflow records that) with a message naming the output. Idempotent.
 */
export function evaluateOutputsActivity(deps: EngineDeps, definitions: DefinitionCache) {
  const { db, claimRun } = deps;
  return async function evaluateOutputs(input: OutputsInput): Promise<OutputsResult> {
    await claimRun(input.executionId, input.run);
    const loaded = await definitions.get(input.executionId);
    const declared = Object.entries(loaded.definition.outputs ?? {});
    const names = [...new Set(declared.flatMap(([, text]) => referencedTasks(text)))];
    const texts = declared.map(([, text]) => text);
    const scope = {
      outputs: await taskExecutionRepository.taskOutputs(db, input.executionId, names),
      variables: loaded.definition.variables ?? {},
      inputs: loaded.execution.inputs,
      ...(await decisionScope(db, input.executionId, approvalReads(texts))),
    };
    const outputs: Record<string, unknown> = {};
    for (const [name, text] of declared) {
      try {
        outputs[name] = evaluateOutputExpression(text, scope) ?? null;
      } catch (error) {
        if (!(error instanceof ExpressionError)) throw error;
        return { ok: false, message: `Output '${name}' could not be evaluated: ${error.message}` };
      }
    }
    await executionRepository.recordExecutionOutputs(db, input.executionId, outputs, input.run);
    return { ok: true };
  };
}
