// @ts-check
import { Buffer } from 'node:buffer';
import { clearTimeout, setTimeout } from 'node:timers';
import { spawn } from 'node:child_process';
import { NonRetryableError } from '@trellis/plugin-kit';

/**
 * @typedef {{ command: string, args: string[], env: Record<string, string>, inheritEnv: boolean,
 *   cwd?: string, input?: string, timeoutMilliseconds: number, failOnNonZeroExit: boolean,
 *   maxOutputBytes: number }} Parameters
 */

/**
 * @param {string} message
 * @param {boolean} [retryable]
 */
const failure = (message, retryable = false) =>
  retryable ? new Error(message) : new NonRetryableError(message);

/** @type {import('@trellis/plugin-kit').PluginExecute<Parameters>} */
export async function execute(parameters, context) {
  if (!context.host.allowProcessExecution) {
    throw failure(
      'Exec/Process is disabled on this Trellis installation; set Plugins.AllowProcessExecution to true to allow it',
    );
  }
  const child = spawn(parameters.command, parameters.args, {
    shell: false,
    cwd: parameters.cwd,
    env: { ...(parameters.inheritEnv ? process.env : {}), ...parameters.env },
    signal: context.signal,
    killSignal: 'SIGKILL',
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill('SIGKILL');
  }, parameters.timeoutMilliseconds);
  const stdout = collect(child.stdout, parameters.maxOutputBytes);
  const stderr = collect(child.stderr, parameters.maxOutputBytes);
  child.stdin.on('error', () => {}); // the program may exit without reading its input
  child.stdin.end(parameters.input ?? '');

  /** @type {{ code: number | null, signal: NodeJS.Signals | null }} */
  const exit = await new Promise((resolve, reject) => {
    child.once('error', (error) => reject(error));
    child.once('close', (code, signal) => resolve({ code, signal }));
  })
    .finally(() => clearTimeout(timer))
    .catch((error) => {
      if (context.signal.aborted) throw context.signal.reason;
      if (/** @type {NodeJS.ErrnoException} */ (error).code === 'ENOENT') {
        throw failure(
          `command "${parameters.command}" was not found${parameters.cwd ? ` (or cwd "${parameters.cwd}" does not exist)` : ''}`,
        );
      }
      throw failure(`command "${parameters.command}" could not start: ${error.message}`);
    });
  if (context.signal.aborted) throw context.signal.reason;

  const result = {
    exitCode: exit.code,
    signal: exit.signal,
    timedOut,
    stdout: stdout.text(),
    stderr: stderr.text(),
  };
  if (result.timedOut) {
    throw failure(
      `command "${parameters.command}" timed out after ${parameters.timeoutMilliseconds} ms`,
      true,
    );
  }
  if (parameters.failOnNonZeroExit && result.exitCode !== 0) {
    throw failure(
      `command "${parameters.command}" exited with ${exit.code ?? exit.signal}: ${result.stderr.slice(0, 500)}`,
      true,
    );
  }
  return result;
}

/**
 * @param {import('node:stream').Readable} stream
 * @param {number} limit
 */
function collect(stream, limit) {
  /** @type {Buffer[]} */
  const chunks = [];
  let size = 0;
  let truncated = false;
  stream.on('data', (/** @type {Buffer} */ chunk) => {
    if (size + chunk.length > limit) {
      truncated = true;
      chunk = chunk.subarray(0, Math.max(0, limit - size));
    }
    size += chunk.length;
    if (chunk.length > 0) chunks.push(chunk);
  });
  return {
    text: () => Buffer.concat(chunks).toString('utf8') + (truncated ? '\n[output truncated]' : ''),
  };
}
