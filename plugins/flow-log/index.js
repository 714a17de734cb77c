// @ts-check

/**
 * @typedef {'Trace' | 'Debug' | 'Info' | 'Warning' | 'Error' | 'Critical'} LogLevel
 * @param {{ message: string, level: LogLevel, data?: unknown }} parameters
 * @param {{ logger: { log(level: LogLevel, message: string): void } }} context
 */
export function execute(parameters, context) {
  const message =
    parameters.data === undefined
      ? parameters.message
      : `${parameters.message} ${JSON.stringify(parameters.data)}`;
  context.logger.log(parameters.level, message);
  return { level: parameters.level, message };
}
