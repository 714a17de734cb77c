import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import type { TrellisClient } from '../client.js';
import { isRunTool, runToolCatalog, runToolNames, storedWorkflows } from './run-tools.js';
import { ToolError, toolFailure, type ToolFailure } from './tool-error.js';
import { fixedTools, type Arguments, type CallContext } from './tools.js';

/** Who serves the tools, and how failures outside the tools' own are told. */
export interface TrellisMcpOptions {
  /** The serving program's version, as the server tells the client. */
  version: string;
  /** Tells the person running it what went wrong outside a tool call. */
  note?: (text: string) => void;
  /** Explains a failed call; by default the API's refusal as it came ({@link toolFailure}). */
  describeFailure?: (error: unknown) => ToolFailure;
}

/**
 * The Model Context Protocol server of Trellis (`trellis mcp` on stdio, the API's `/mcp`): the
 * fixed tools and one run tool per workflow, every call made with `trellis` (the caller's own
 * credentials, in its project). The low-level `Server`, since each run tool's input schema is
 * JSON Schema read from the server.
 */
export function trellisMcpServer(
  trellis: TrellisClient,
  { version, note = () => {}, describeFailure = toolFailure }: TrellisMcpOptions,
): Server {
  const server = new Server(
    { name: 'trellis', title: 'Trellis', version },
    {
      capabilities: { tools: {} },
      instructions:
        'Trellis runs workflows. list_workflows and describe_workflow show what exists; each run_<workflow> tool starts a run with that workflow\u2019s inputs; follow_execution waits for its end; read_logs tells what happened; list_approvals and decide_approval handle the human approval steps.',
    },
  );

  const runTools = runToolCatalog(trellis);
  server.setRequestHandler(ListToolsRequestSchema, async () => {
    const fixed = fixedTools.map(({ tool }) => tool);
    try {
      return { tools: [...fixed, ...(await runTools())] };
    } catch (error) {
      // The caller may not read workflows (or the server is away): the other tools still answer.
      note(`no run tools: ${describeFailure(error).messages.join(' ')}`);
      return { tools: fixed };
    }
  });

  server.setRequestHandler(
    CallToolRequestSchema,
    async ({ params }, extra): Promise<CallToolResult> => {
      const args: Arguments = params.arguments ?? {};
      const progressToken = params._meta?.progressToken;
      let progressed = 0;
      const context: CallContext = {
        signal: extra.signal,
        progress: (message) => {
          if (progressToken === undefined) return;
          const notification = {
            method: 'notifications/progress' as const,
            params: { progressToken, progress: ++progressed, message },
          };
          extra.sendNotification(notification).catch(() => {});
        },
      };
      try {
        const result = await call(trellis, params.name, args, context);
        return {
          content: [{ type: 'text', text: JSON.stringify(result) }],
          structuredContent: result,
        };
      } catch (error) {
        const { messages, status, errors, hint } = describeFailure(error);
        const text = [
          ...messages,
          ...(status === undefined ? [] : [`(HTTP ${status})`]),
          ...(hint ? [`hint: ${hint}`] : []),
        ].join('\n');
        return {
          isError: true,
          content: [{ type: 'text', text }],
          structuredContent: { status, messages, ...(errors ? { errors } : {}) },
        };
      }
    },
  );
  return server;
}

/** Calls the tool `name`: a fixed one, or a workflow's run tool. */
async function call(
  trellis: TrellisClient,
  name: string,
  args: Arguments,
  context: CallContext,
): Promise<Record<string, unknown>> {
  const fixed = fixedTools.find(({ tool }) => tool.name === name);
  if (fixed) return fixed.call(trellis, args, context);
  const workflow = isRunTool(name)
    ? runToolNames(await storedWorkflows(trellis)).get(name)
    : undefined;
  if (!workflow) {
    throw new ToolError(
      `There is no tool named "${name}".`,
      'list the tools again: workflows may have been added, renamed or deleted.',
    );
  }
  const started = await trellis.POST('/workflows/{workflowId}/executions', {
    params: { path: { workflowId: workflow.id } },
    body: { workflowId: workflow.id, inputs: args },
  });
  return { ...started, workflow: workflow.name };
}
