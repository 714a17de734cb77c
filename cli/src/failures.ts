import { TrellisApiError } from '@trellis/sdk';
import { ToolError } from '@trellis/sdk/mcp';
import type { Output } from './output/output.js';

/** The command's exit codes (README "Command line"). */
export const exitCodes = {
  ok: 0,
  /** The request failed: the server refused it, or could not be reached. */
  failed: 1,
  /** The command line itself is wrong (unknown option, missing argument, bad value). */
  usage: 2,
  /** A followed run ended Failed. */
  runFailed: 3,
  /** A followed run ended Canceled. */
  runCanceled: 4,
  /** A workflow test case failed (`trellis test`, `apply --test`), or a replay diverged (`replay --fail-on-divergence`). */
  testsFailed: 5,
  /** Stopped by Ctrl-C (the run goes on). */
  interrupted: 130,
} as const;

/** A failure the command explains itself, with what to do about it. */
export class CliError extends ToolError {
  constructor(
    message: string,
    hint?: string,
    readonly exitCode: number = exitCodes.failed,
  ) {
    super(message, hint);
    this.name = 'CliError';
  }
}

/** A wrong command line (exit code 2). */
export class UsageError extends CliError {
  constructor(message: string, hint?: string) {
    super(message, hint, exitCodes.usage);
    this.name = 'UsageError';
  }
}

const credentialsHint =
  'Give credentials with TRELLIS_USER and TRELLIS_PASSWORD, or TRELLIS_TOKEN (or --user/--password, --token).';

/** What went wrong in words, with a hint, and the exit code. */
export interface Failure {
  /** The messages: the server's own for an API error. */
  messages: string[];
  status?: number;
  /** The error envelope's `errors` (stable codes). */
  errors?: { code: string; message: string; path?: string }[];
  hint?: string;
  exitCode: number;
}

/** Explains an error a command ended with; `url` is the server it talked to. */
export function describeFailure(error: unknown, url: string): Failure {
  if (error instanceof TrellisApiError) {
    const hint =
      error.status === 401
        ? credentialsHint
        : error.status === 403
          ? 'The user lacks a role this needs (admin, or the area\u2019s own role).'
          : undefined;
    return {
      messages: error.messages,
      status: error.status,
      errors: error.errors,
      ...(hint ? { hint } : {}),
      exitCode: exitCodes.failed,
    };
  }
  if (error instanceof ToolError) {
    return {
      messages: [error.message],
      ...(error.hint ? { hint: error.hint } : {}),
      exitCode: error instanceof CliError ? error.exitCode : exitCodes.failed,
    };
  }
  const unreachable = connectionProblem(error);
  if (unreachable) {
    return {
      messages: [`Cannot reach Trellis at ${url}: ${unreachable}.`],
      hint: 'Check TRELLIS_URL (or --url) and that the server is running there.',
      exitCode: exitCodes.failed,
    };
  }
  if (error instanceof SyntaxError) {
    return {
      messages: [`${url} did not answer as Trellis does (the answer is not JSON).`],
      hint: 'Check TRELLIS_URL (or --url): it should be the root of the Trellis API.',
      exitCode: exitCodes.failed,
    };
  }
  return {
    messages: [error instanceof Error ? error.message : String(error)],
    exitCode: exitCodes.failed,
  };
}

/** Why fetch could not talk to the server (`connect ECONNREFUSED ...`), or undefined. */
function connectionProblem(error: unknown): string | undefined {
  if (!(error instanceof TypeError) || error.message !== 'fetch failed') return undefined;
  const cause: unknown = error.cause;
  if (cause instanceof AggregateError) {
    const first: unknown = cause.errors[0];
    if (first instanceof Error) return first.message;
  }
  return cause instanceof Error && cause.message ? cause.message : 'the connection failed';
}

/** Writes a failure to stderr: lines for people, one JSON object with `--json`. */
export function reportFailure(output: Output, failure: Failure): void {
  if (output.json) {
    const { messages, status, errors, hint } = failure;
    output.note(JSON.stringify({ succeeded: false, status, messages, errors, hint }));
    return;
  }
  const { red, dim } = output.colors;
  const [first, ...rest] = failure.messages;
  const status = failure.status === undefined ? '' : dim(` (HTTP ${failure.status})`);
  if (rest.length === 0) {
    output.note(`${red('error:')} ${first ?? 'failed'}${status}`);
  } else {
    output.note(`${red('error:')} the server refused the request${status}:`);
    for (const message of failure.messages) output.note(`  - ${message}`);
  }
  if (failure.hint) output.note(dim(`hint: ${failure.hint}`));
}
