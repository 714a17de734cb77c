// @ts-check
import jsonata from 'jsonata';
import { nonRetryable as inputError } from '@trellis/plugin-kit';

/**
 * @typedef {{ expression: string, input?: unknown, parseInput: boolean,
 *   bindings: Record<string, unknown> }} Parameters
 */

/**
 * Evaluates the expression; the output is `{ result }` (null when nothing matches).
 * @type {import('@trellis/plugin-kit').PluginExecute<Parameters>}
 */
export async function execute(parameters) {
  let input = parameters.input;
  if (parameters.parseInput && typeof input === 'string') {
    try {
      input = JSON.parse(input);
    } catch (error) {
      throw inputError(`input is not valid JSON: ${/** @type {Error} */ (error).message}`);
    }
  }
  let expression;
  try {
    expression = jsonata(parameters.expression);
  } catch (error) {
    throw inputError(`expression is not valid JSONata: ${describe(error)}`);
  }
  try {
    const result = await expression.evaluate(input, parameters.bindings);
    return { result: result === undefined ? null : normalise(result) };
  } catch (error) {
    throw inputError(`expression failed: ${describe(error)}`);
  }
}

/** @param {unknown} error */
function describe(error) {
  const { message, position } = /** @type {{ message: string, position?: number }} */ (error);
  return position === undefined ? message : `${message} (at character ${position})`;
}

// JSONata marks sequences with extra properties; a JSON round trip leaves plain values.
/** @param {unknown} value */
function normalise(value) {
  return JSON.parse(JSON.stringify(value));
}
