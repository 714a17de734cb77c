// @ts-check
/**
 * A sandbox process: runs the attempts of one plugin package, one at a time, for the worker that
 * started it (`pool.ts`). Jobs arrive as JSON lines on stdin; logs, heartbeats and the outcome
 * leave as JSON lines on file descriptor 3, so nothing a plugin prints can pass for a message.
 * The worker enforces the limits (heap size, resident memory, time) from outside; this process
 * only has to run the plugin and report faithfully. Plain JavaScript: it needs no loader whether
 * Trellis runs from source or compiled.
 *
 * Started with `third-party`, it also takes away what Node's permission model does not cover:
 * signalling other processes (the worker) and renicing them.
 */
import { Buffer } from 'node:buffer';
import { writeSync } from 'node:fs';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';

const require = createRequire(import.meta.url);
// Taken before any plugin code runs, which could replace them.
const stringify = JSON.stringify;
const parse = JSON.parse;
const exit = process.exit.bind(process);

/** Where messages for the worker go. */
const MESSAGES_FD = 3;
/** A log message or exception longer than this is cut (the worker refuses huge lines). */
const MAX_TEXT = 64 * 1024;
const STACK_TEXT = 16 * 1024;
const thirdParty = process.argv.includes('third-party');

/** @param {string} line */
function writeLine(line) {
  const bytes = Buffer.from(`${line}\n`);
  for (let written = 0; written < bytes.length;) {
    written += writeSync(MESSAGES_FD, bytes, written);
  }
}

/** @param {Record<string, unknown>} message */
const send = (message) => writeLine(stringify(message));

// A busy plugin never yields to this thread, so a thread of its own watches for the worker to go
// away (killed, crashed): then nobody would ever stop this process.
new Worker(
  `const { workerData } = require('node:worker_threads');
   setInterval(() => { if (process.ppid !== workerData) process.kill(process.pid, 'SIGKILL'); }, 500);`,
  { eval: true, workerData: process.ppid },
).unref();

if (thirdParty) lockDown();

/**
 * Node's permission model already refuses files outside the allowed folders, child processes,
 * native addons and `process.binding`; what is left is reaching other processes by pid.
 */
function lockDown() {
  /** @param {string} what @param {string} [permission] */
  const unavailable = (what, permission) =>
    function refused() {
      throw Object.assign(new Error(`${what} is not available in the plugin sandbox`), {
        nonRetryable: true,
        ...(permission ? { code: 'ERR_ACCESS_DENIED', permission } : {}),
      });
    };
  delete (/** @type {any} */ (process)._kill);
  process.kill = unavailable('process.kill');
  require('node:os').setPriority = unavailable('os.setPriority');
  // The watchdog above is the only thread the sandbox starts: more threads, more heaps.
  require('node:worker_threads').Worker = unavailable('new Worker', 'WorkerThreads');
  syncBuiltinESMExports();
}

/** @type {{ id: number, controller: AbortController } | null} */
let current = null;

/**
 * @typedef {{ type: 'run', id: number, name: string, module: string,
 *   parameters: Record<string, unknown>, specifications: Record<string, unknown>,
 *   task: Record<string, unknown>, host: Record<string, unknown>,
 *   trace?: { traceparent: string, tracestate?: string }, maxOutputBytes: number }} Job
 */

/** @param {Job} job */
async function run(job) {
  const { id } = job;
  const controller = new globalThis.AbortController();
  current = { id, controller };
  try {
    const plugin = await import(pathToFileURL(job.module).href);
    if (typeof plugin.execute !== 'function') {
      throw Object.assign(new Error(`${job.name} does not export an execute function`), {
        nonRetryable: true,
      });
    }
    const context = Object.freeze({
      specifications: Object.freeze(job.specifications),
      logger: createLogger(id),
      signal: controller.signal,
      /** @param {unknown} [details] */
      heartbeat: (details) => send({ type: 'heartbeat', id, details: jsonOrNull(details) }),
      task: Object.freeze(job.task),
      host: Object.freeze(job.host),
      ...(job.trace ? { trace: Object.freeze(job.trace) } : {}),
    });
    const output = await plugin.execute(job.parameters, context);
    sendOutput(id, output, job.maxOutputBytes);
  } catch (error) {
    sendFailure(id, error);
  } finally {
    if (current?.id === id) current = null;
  }
}

/** @param {number} id */
function createLogger(id) {
  /** @param {unknown} level @param {unknown} message @param {unknown} [exception] */
  const log = (level, message, exception) =>
    send({
      type: 'log',
      id,
      level: String(level),
      message: String(message).slice(0, MAX_TEXT),
      ...(exception === undefined ? {} : { exception: String(exception).slice(0, MAX_TEXT) }),
    });
  return Object.freeze({
    log,
    /** @param {unknown} message */
    trace: (message) => log('Trace', message),
    /** @param {unknown} message */
    debug: (message) => log('Debug', message),
    /** @param {unknown} message */
    info: (message) => log('Info', message),
    /** @param {unknown} message */
    warning: (message) => log('Warning', message),
    /** @param {unknown} message @param {unknown} [exception] */
    error: (message, exception) => log('Error', message, exception),
    /** @param {unknown} message @param {unknown} [exception] */
    critical: (message, exception) => log('Critical', message, exception),
  });
}

/** @param {number} id @param {unknown} output @param {number} maxOutputBytes */
function sendOutput(id, output, maxOutputBytes) {
  let json;
  try {
    json = stringify(output ?? null) ?? 'null';
  } catch (error) {
    send({ type: 'output-not-json', id, message: /** @type {Error} */ (error).message });
    return;
  }
  const size = Buffer.byteLength(json);
  if (size > maxOutputBytes) send({ type: 'output-too-large', id, size });
  else writeLine(`{"type":"result","id":${id},"output":${json}}`);
}

/** @param {number} id @param {unknown} error */
function sendFailure(id, error) {
  const thrown = /** @type {Record<string, unknown>} */ (
    error instanceof Error ? error : { message: String(error) }
  );
  const text = (/** @type {unknown} */ value, max = MAX_TEXT) =>
    typeof value === 'string' ? value.slice(0, max) : undefined;
  send({
    type: 'failure',
    id,
    error: {
      name: text(thrown.name) ?? 'Error',
      message: text(String(thrown.message)),
      stack: text(thrown.stack, STACK_TEXT),
      nonRetryable: thrown.nonRetryable === true,
      code: text(thrown.code),
      permission: text(thrown.permission),
      resource: text(thrown.resource),
    },
  });
}

/** @param {unknown} value */
function jsonOrNull(value) {
  try {
    return value === undefined ? null : parse(stringify(value) ?? 'null');
  } catch {
    return null;
  }
}

// A plugin's stray error after its attempt settled, or one no promise catches: the attempt (if
// any) fails with it, and the process, whose state is now unknown, ends.
/** @param {unknown} error */
const fatal = (error) => {
  if (current) sendFailure(current.id, error);
  exit(70);
};
process.on('uncaughtException', fatal);
process.on('unhandledRejection', fatal);

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
lines.on('line', (line) => {
  const message = parse(line);
  if (message.type === 'run') void run(message);
  else if (message.type === 'abort' && current?.id === message.id) {
    current.controller.abort(Object.assign(new Error(message.message), { name: 'AbortError' }));
  }
});
// The worker closed the pool, or is gone.
lines.on('close', () => exit(0));
