// @ts-check

/**
 * Returns its parameters unchanged.
 * @type {import('@trellis/plugin-kit').PluginExecute}
 */
export function execute(parameters) {
  return parameters;
}
