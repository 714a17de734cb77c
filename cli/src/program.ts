import { Command, CommanderError, Option } from 'commander';
import type { Act } from './commands/act.js';
import { applyCommands } from './commands/apply.js';
import { approvalCommands } from './commands/approvals.js';
import { auditCommands } from './commands/audit.js';
import { executionCommands } from './commands/executions.js';
import { keyCommands } from './commands/keys.js';
import { mcpCommand } from './commands/mcp.js';
import { replayCommand } from './commands/replay.js';
import { runCommand } from './commands/run.js';
import { triggerCommands } from './commands/triggers.js';
import { testCommand } from './commands/test.js';
import { workflowCommands } from './commands/workflows.js';
import { defaultUrl } from './connection.js';
import { Context, type GlobalOptions } from './context.js';
import { describeFailure, exitCodes, reportFailure } from './failures.js';
import { Output, type Io } from './output/output.js';
import { version } from './version.js';

const helpAfter = `
Environment:
  TRELLIS_URL       the server (default ${defaultUrl})
  TRELLIS_USER      user for HTTP Basic, with TRELLIS_PASSWORD
  TRELLIS_PASSWORD  that user's password
  TRELLIS_TOKEN     a Bearer token (a JWT or a project's API key) instead of a user
  TRELLIS_PROJECT   the project to work in (id or name; default: your default project)
  NO_COLOR          no colours (FORCE_COLOR: colours even when not on a terminal)

Exit codes: 0 done (a followed run Completed), 1 the request failed, 2 bad command line,
3 a followed run Failed, 4 a followed run was Canceled, 5 a workflow test case failed (or,
with --fail-on-divergence, a replay diverged),
130 stopped by Ctrl-C.

Examples:
  trellis workflows add -f hello.json
  trellis apply workflows/ --dry-run
  trellis apply workflows/ --source "$(git rev-parse HEAD)"
  trellis export workflows/
  trellis test workflows/ --junit test-results.xml
  trellis run Hello --input region=eu --input limit=10 --follow
  trellis executions list Hello --status Failed
  trellis executions logs Hello <executionId> --follow
  trellis approvals approve Hello <executionId> Approve
  trellis triggers deliveries Hello <triggerId> --limit 50
  trellis audit list --actor alice --operation deleteWorkflow
  trellis keys create ci --role workflow --project partner-a
  TRELLIS_TOKEN=... trellis mcp        # tools for an AI agent, on stdio
`;

/** The `trellis` program, writing to `io`; `state.exitCode` holds the outcome of its command. */
export function createProgram(io: Io, state: { exitCode: number; context?: Context }): Command {
  const act: Act =
    (handler) =>
    async (...params) => {
      const command = params.at(-1) as Command;
      const options = params.at(-2);
      const args = params.slice(0, -2);
      const context = new Context(command, io);
      state.context = context;
      state.exitCode = (await handler(context, args as never, options as never)) ?? exitCodes.ok;
    };

  const program = new Command('trellis')
    .description('Manage and run Trellis workflows from a terminal or a CI job.')
    .version(version, '-V, --version', 'print the CLI version')
    .helpOption('-h, --help', 'show help for a command')
    .addOption(
      new Option('--url <url>', `the Trellis server's root URL (default ${defaultUrl})`).env(
        'TRELLIS_URL',
      ),
    )
    .addOption(new Option('--user <name>', 'user for HTTP Basic').env('TRELLIS_USER'))
    .addOption(
      new Option('--password <password>', "that user's password (prefer the variable)").env(
        'TRELLIS_PASSWORD',
      ),
    )
    .addOption(
      new Option('--token <token>', 'a Bearer token (JWT or API key) instead of a user').env(
        'TRELLIS_TOKEN',
      ),
    )
    .addOption(
      new Option('--project <project>', 'the project to work in (id or name)').env(
        'TRELLIS_PROJECT',
      ),
    )
    .option('--json', 'print the result as JSON on stdout, and nothing else there')
    .option('--no-color', 'no colours')
    .configureHelp({ showGlobalOptions: true })
    .showHelpAfterError('(add --help for usage)')
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
    })
    .addHelpText('after', helpAfter);

  workflowCommands(program, act);
  applyCommands(program, act);
  runCommand(program, act);
  testCommand(program, act);
  replayCommand(program, act);
  executionCommands(program, act);
  triggerCommands(program, act);
  approvalCommands(program, act);
  auditCommands(program, act);
  keyCommands(program, act);
  mcpCommand(program, act);
  return program;
}

/** Runs the command line `argv` (without `node` and the script); resolves to the exit code. */
export async function run(argv: string[], io: Io): Promise<number> {
  const state: { exitCode: number; context?: Context } = { exitCode: exitCodes.ok };
  const program = createProgram(io, state);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return state.exitCode;
  } catch (error) {
    // Commander has printed its own message (or the help, or the version) already.
    if (error instanceof CommanderError) {
      return error.exitCode === 0 ? exitCodes.ok : exitCodes.usage;
    }
    const options = program.opts<GlobalOptions>();
    const output = state.context?.output ?? new Output(io, options);
    const failure = describeFailure(error, state.context?.url ?? options.url ?? defaultUrl);
    reportFailure(output, failure);
    return failure.exitCode;
  }
}
