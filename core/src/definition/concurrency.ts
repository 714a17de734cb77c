/**
 * `configuration.concurrency` (issue 14): the checks of its key expression, and the key a run
 * takes. The key may read the run's inputs only, so it is known before any task runs and is the
 * same wherever it is evaluated. Pure: no I/O.
 */
import { checkOutputExpression } from './expressions/check.js';
import { evaluateOutputExpression } from './expressions/evaluate.js';
import { calledFunctions, referencedInputs } from './expressions/references.js';
import { formatPath } from './location.js';
import { problemAt, type Problem } from './validation/problem.js';
import type { ConcurrencyLimit, WorkflowDefinition } from './types.js';

const KEY_PATH = ['configuration', 'concurrency', 'key'] as const;

/** The problems of the definition's concurrency key, each naming its place; none without one. */
export function checkConcurrency(definition: WorkflowDefinition): Problem[] {
  const key = definition.configuration?.concurrency?.key;
  if (key === undefined) return [];
  const at = formatPath(KEY_PATH);
  const problem = checkOutputExpression(key);
  if (problem !== null) return [problemAt(at, `${problem}`)];
  const problems: Problem[] = [];
  for (const name of calledFunctions(key)) {
    if (name !== 'Inputs') {
      problems.push(
        problemAt(
          at,
          `may read only the run's inputs (Inputs('name')), not ${name}(...): the key is taken before any task runs`,
        ),
      );
    }
  }
  const declared = definition.inputs ?? {};
  for (const name of referencedInputs(key)) {
    if (!Object.hasOwn(declared, name)) {
      problems.push(problemAt(at, `Inputs('${name}') names no declared input`));
    }
  }
  return problems;
}

/**
 * The key a run with these inputs takes: the key expression's value as text (a string as it is,
 * anything else as JSON); the empty string when the definition has no key (one limit for all).
 */
export function concurrencyKey(
  concurrency: ConcurrencyLimit,
  inputs: Record<string, unknown>,
): string {
  if (concurrency.key === undefined) return '';
  const value = evaluateOutputExpression(concurrency.key, { outputs: {}, variables: {}, inputs });
  return typeof value === 'string' ? value : (JSON.stringify(value) ?? 'null');
}
