import { pathToFileURL } from 'node:url';
import path from 'node:path';
import { formatBytes } from '#definition/format-bytes.js';

/**
 * How a plugin attempt fails, as the engine records it: retryable or not, with a message for the
 * task and, when the plugin itself threw, an `exception` showing only the plugin's own frames
 * (relative to its package), never the server's paths or frames.
 */

interface FailureOptions extends ErrorOptions {
  /** The plugin's own error as task logs show it: `Name: message` and its frames in the package. */
  exception?: string;
}

/**
 * A failure retrying cannot fix: the plugin is not installed, the parameters or settings are
 * wrong, the output is unusable, or the plugin marked its error `nonRetryable`.
 */
export class PluginInputError extends Error {
  readonly nonRetryable = true;
  declare readonly exception: string | undefined;
  constructor(message: string, options?: FailureOptions) {
    super(message, options);
    this.name = 'PluginInputError';
    withException(this, options);
  }
}

/** The plugin failed while running (network down, remote error, a sandbox limit): worth retrying. */
export class PluginRuntimeError extends Error {
  readonly nonRetryable = false;
  declare readonly exception: string | undefined;
  constructor(message: string, options?: FailureOptions) {
    super(message, options);
    this.name = 'PluginRuntimeError';
    withException(this, options);
  }
}

// Not enumerable: two failures with the same message and retryability are equal, whatever the
// frames that led to them.
function withException(error: Error, options: FailureOptions | undefined): void {
  Object.defineProperty(error, 'exception', { value: options?.exception, enumerable: false });
}

/**
 * The engine's failure for an error a plugin threw (in process or in its sandbox): its message
 * and its own frames, with secret values redacted. Failures the engine raised itself (limits,
 * unusable output) pass through as they are.
 */
export function pluginFailure(
  error: unknown,
  packageDirectories: string[],
  redact: (text: string) => string,
): PluginInputError | PluginRuntimeError {
  if (error instanceof PluginInputError || error instanceof PluginRuntimeError) return error;
  const message = redact(error instanceof Error ? error.message : String(error));
  const exception =
    error instanceof Error
      ? redact(pluginException(error.name, message, error.stack, packageDirectories))
      : undefined;
  const Failure =
    (error as { nonRetryable?: unknown } | null)?.nonRetryable === true
      ? PluginInputError
      : PluginRuntimeError;
  return new Failure(message, { cause: error, exception });
}

/**
 * `Name: message` followed by the stack frames that point into the package, their paths made
 * relative to it (`at execute (index.js:3:9)`); Trellis's and Node's own frames are left out.
 */
export function pluginException(
  name: string,
  message: string,
  stack: string | undefined,
  packageDirectories: string[],
): string {
  const prefixes = packageDirectories.flatMap((directory) => [
    `${pathToFileURL(directory).href}/`,
    `${directory}${path.sep}`,
  ]);
  const frames = (stack ?? '')
    .split('\n')
    .filter((line) => /^\s+at /.test(line))
    .flatMap((line) => {
      const prefix = prefixes.find((candidate) => line.includes(candidate));
      return prefix === undefined ? [] : [`    ${line.trim().split(prefix).join('')}`];
    });
  return [`${name}: ${message}`, ...frames].join('\n');
}

/** The output of a plugin could not be turned into JSON. */
export function outputNotJson(name: string, detail: string): PluginInputError {
  return new PluginInputError(
    `${name} returned an output that is not JSON-serialisable: ${detail}`,
  );
}

/** The output of a plugin is over `Plugins.MaxOutputBytes`. */
export function outputTooLarge(name: string, size: number, maxOutputBytes: number) {
  return new PluginInputError(
    `${name} returned ${formatBytes(size)} of output, over the ${formatBytes(maxOutputBytes)} limit (Plugins.MaxOutputBytes); return less, e.g. write large data to storage and return its path`,
  );
}
