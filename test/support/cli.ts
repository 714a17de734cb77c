/**
 * Runs the `trellis` command as a person or a CI job would: a child process with its own
 * environment, stdout and stderr pipes (not a terminal) and an exit code. From the source under
 * tsx by default; `command` runs another build of it (the packed package's bin).
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  /** Environment variables over a clean one (no TRELLIS_*, NO_COLOR or FORCE_COLOR from outside). */
  env?: Record<string, string>;
  /** Written to its standard input. */
  input?: string;
  /** The program and its first arguments; default the CLI's source under tsx. */
  command?: [string, ...string[]];
  /** Killed (and the test failed) after this long. Default 60 s. */
  timeoutMs?: number;
}

/** The CLI's source run by Node under tsx (tsx maps `@trellis/sdk` to sdk/src, as tsconfig says). */
export const sourceCommand: [string, ...string[]] = [
  process.execPath,
  '--import',
  'tsx',
  `${root}cli/src/main.ts`,
];

/** The repository's root, where the CLI runs. */
export const cliFolder = root;

/** The environment the CLI runs with: this one without TRELLIS_*, NO_COLOR, FORCE_COLOR, NODE_OPTIONS, and `env` over it. */
export function cliEnvironment(env: Record<string, string> = {}): Record<string, string> {
  const inherited = Object.entries(process.env).filter(
    (entry): entry is [string, string] =>
      entry[1] !== undefined && !/^(TRELLIS_|NO_COLOR$|FORCE_COLOR$|NODE_OPTIONS$)/.test(entry[0]),
  );
  return { ...Object.fromEntries(inherited), ...env };
}

/** Starts `trellis args...`; resolves when it exits. */
export function runCli(args: string[], options: CliOptions = {}): Promise<CliResult> {
  const [program, ...first] = options.command ?? sourceCommand;
  const child = spawn(program, [...first, ...args], {
    cwd: root,
    env: cliEnvironment(options.env),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  child.stdin.end(options.input ?? '');
  const timeoutMs = options.timeoutMs ?? 60_000;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`trellis ${args.join(' ')} ran over ${timeoutMs} ms\n${stdout}\n${stderr}`));
    }, timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/**
 * The README's Totals workflow: sums `values` (required), says the sum, and outputs it times
 * `factor` (default 10). Its description and the description of `values` are what a tool or a
 * form shows.
 */
let unique = 0;
/** A name no other test's run uses: `base`, the time and a counter. */
export const uniqueName = (base: string) => `${base}-${Date.now().toString(36)}-${++unique}`;

export const totalsWorkflow = (name: string) => ({
  name,
  description: 'Adds numbers up.',
  inputs: {
    values: { type: 'array', required: true, description: 'The numbers.' },
    factor: { type: 'number', default: 10 },
  },
  tasks: [
    {
      name: 'Sum',
      type: { plugin: 'Data/Json' },
      parameters: { expression: '$sum(values)', input: { values: '$[Inputs("values")]' } },
    },
    {
      name: 'Say',
      type: { plugin: 'Flow/Log' },
      dependencies: ['Sum'],
      parameters: { message: 'sum is $[Outputs("Sum").result]' },
    },
  ],
  outputs: { total: 'Outputs("Sum").result * Inputs("factor")' },
});
