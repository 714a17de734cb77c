// @ts-check

/**
 * Returns its parameters unchanged.
 * @param {Record<string, unknown>} parameters
 */
export function execute(parameters) {
  return parameters;
}
