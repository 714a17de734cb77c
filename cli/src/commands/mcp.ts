import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { Command } from 'commander';
import { trellisMcpServer } from '@trellis/sdk/mcp';
import { describeFailure } from '../failures.js';
import { version } from '../version.js';
import type { Act } from './act.js';

/** `trellis mcp`: a Model Context Protocol server on stdin and stdout, until stdin ends. */
export function mcpCommand(program: Command, act: Act): void {
  program
    .command('mcp')
    .description(
      'serve the Model Context Protocol on stdio: Trellis tools for an AI agent, with these credentials',
    )
    .addHelpText(
      'after',
      `
Only protocol on stdout; notes on stderr. An agent starts it with TRELLIS_URL and
TRELLIS_TOKEN (or TRELLIS_USER and TRELLIS_PASSWORD), and TRELLIS_PROJECT, in its environment:
every tool call is made with those credentials and their roles, in that project.`,
    )
    .action(
      act(async ({ trellis, url, output }) => {
        const server = trellisMcpServer(trellis, {
          version,
          note: (text) => output.note(`trellis mcp: ${text}`),
          describeFailure: (error) => describeFailure(error, url),
        });
        const closed = new Promise<void>((resolve) => (server.onclose = resolve));
        // The client ends the session by closing our stdin.
        process.stdin.once('end', () => void server.close());
        await server.connect(new StdioServerTransport());
        output.note(`trellis mcp: serving ${url} on stdio`);
        await closed;
      }),
    );
}
