// @ts-check

/**
 * @typedef {import('@trellis/plugin-kit').LogLevel} LogLevel
 * @typedef {{ message: string, level: LogLevel, data?: unknown }} Parameters
 */

/** @type {import('@trellis/plugin-kit').PluginExecute<Parameters>} */
export function execute(parameters, context) {
  const message =
    parameters.data === undefined
      ? parameters.message
      : `${parameters.message} ${JSON.stringify(parameters.data)}`;
  context.logger.log(parameters.level, message);
  return { level: parameters.level, message };
}
