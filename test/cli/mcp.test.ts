/**
 * `trellis mcp` end to end: the command spawned as an agent spawns it (stdin and stdout carry the
 * protocol), driven by the MCP SDK's own client against a real Trellis with a worker; every call
 * made with the credentials of the command's environment, and no more.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTrellis, users, type Trellis } from '../support/harness.js';
import { addWorkflow } from '../support/engine-support.js';
import {
  cliEnvironment,
  cliFolder,
  runCli,
  sourceCommand,
  totalsWorkflow as totals,
  uniqueName,
} from '../support/cli.js';

let trellis: Trellis;
/** Sessions to close after the file. */
const sessions: Client[] = [];
/** An agent's session as admin, in the default project. */
let admin: Client;

/** Starts `trellis mcp` with `env` and connects an MCP client to it. */
async function mcpSession(
  env: Record<string, string>,
): Promise<{ client: Client; stderr: () => string }> {
  const [command, ...args] = sourceCommand;
  const transport = new StdioClientTransport({
    command,
    args: [...args, 'mcp'],
    cwd: cliFolder,
    env: cliEnvironment({ TRELLIS_URL: trellis.baseUrl, ...env }),
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const client = new Client({ name: 'trellis-test-agent', version: '1.0.0' });
  await client.connect(transport);
  sessions.push(client);
  return { client, stderr: () => stderr };
}

const basic = (user: keyof typeof users) => ({
  TRELLIS_USER: users[user].username,
  TRELLIS_PASSWORD: users[user].password,
});

/** Calls a tool; its result as the agent sees it. */
async function call(client: Client, name: string, args: Record<string, unknown> = {}) {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  const [first] = result.content;
  const text = first?.type === 'text' ? first.text : '';
  return { ...result, text };
}

/** A tool's JSON result, checked to be the same as text and as structured content. */
async function succeeded<T = Record<string, unknown>>(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
): Promise<T> {
  const result = await call(client, name, args);
  expect(result.isError, result.text).toBeFalsy();
  expect(JSON.parse(result.text)).toEqual(result.structuredContent);
  return result.structuredContent as T;
}

const gated = (name: string) => ({
  name,
  tasks: [
    {
      name: 'Gate',
      type: { plugin: 'Flow/Log' },
      parameters: { message: 'approved by $[Approval().decidedBy]: $[Approval().inputs.note]' },
      manualApproval: {
        enabled: true,
        comment: 'Check the numbers',
        inputs: { note: { type: 'string', required: true } },
      },
    },
  ],
});

beforeAll(async () => {
  trellis = await startTrellis({ worker: true });
  ({ client: admin } = await mcpSession(basic('admin')));
});
afterAll(async () => {
  await Promise.all(sessions.map((session) => session.close()));
  await trellis?.stop();
});

describe('trellis mcp', () => {
  it('explains itself in --help', async () => {
    const help = await runCli(['mcp', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: trellis mcp [options]');
    expect(help.stdout).toContain('Only protocol on stdout');
  });

  it('lists the fixed tools and one run tool per workflow, its inputs as its input schema', async () => {
    const name = uniqueName('mcp totals');
    const workflowId = await addWorkflow(trellis.admin, totals(name));
    const { tools } = await admin.listTools();
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    for (const reading of [
      'list_workflows',
      'describe_workflow',
      'follow_execution',
      'read_logs',
      'list_approvals',
    ]) {
      expect(byName.get(reading)?.annotations).toMatchObject({
        readOnlyHint: true,
        destructiveHint: false,
      });
    }
    expect(byName.get('decide_approval')?.annotations).toMatchObject({
      readOnlyHint: false,
      destructiveHint: false,
    });

    const runTool = `run_${name.replace(/ /g, '_')}`;
    expect(byName.get(runTool)).toMatchObject({
      description: expect.stringContaining(`"${name}" (${workflowId})`),
      annotations: { readOnlyHint: false, destructiveHint: false },
      inputSchema: {
        type: 'object',
        properties: {
          values: { type: 'array', description: 'The numbers.' },
          factor: { type: 'number', default: 10 },
        },
        required: ['values'],
        additionalProperties: false,
      },
    });

    const { workflows } = await succeeded<{ workflows: { id: string; runTool: string }[] }>(
      admin,
      'list_workflows',
    );
    expect(workflows).toContainEqual(expect.objectContaining({ id: workflowId, name, runTool }));
    const described = await succeeded(admin, 'describe_workflow', { workflow: name });
    expect(described).toMatchObject({
      id: workflowId,
      name,
      description: 'Adds numbers up.',
      inputs: totals(name).inputs,
      inputsSchema: byName.get(runTool)?.inputSchema,
      outputs: totals(name).outputs,
      runTool,
      definition: totals(name),
    });

    // Changed inputs (a breaking change, accepted): the tool's schema follows when the agent
    // lists the tools again.
    await trellis.admin.PUT('/workflows/{workflowId}', {
      params: { path: { workflowId }, query: { acceptBreaking: true } },
      body: {
        workflowId,
        definition: JSON.stringify({
          ...totals(name),
          inputs: { ...totals(name).inputs, label: { type: 'string', required: true } },
        }),
      },
    });
    const relisted = await admin.listTools();
    expect(relisted.tools.find((tool) => tool.name === runTool)?.inputSchema).toMatchObject({
      properties: { label: { type: 'string' } },
      required: ['values', 'label'],
    });
  });

  it('starts a run with inputs through its tool, follows it to Completed with its outputs, and reads its logs', async () => {
    const name = uniqueName('mcp-run');
    const workflowId = await addWorkflow(trellis.admin, totals(name));
    const started = await succeeded<{ executionId: string; workflowId: string }>(
      admin,
      `run_${name}`,
      { values: [1, 2, 3] },
    );
    expect(started.workflowId).toBe(workflowId);

    const followed = await succeeded(admin, 'follow_execution', {
      workflow: name,
      executionId: started.executionId,
      timeoutSeconds: 60,
    });
    expect(followed).toMatchObject({
      status: 'Completed',
      ended: true,
      inputs: { values: [1, 2, 3], factor: 10 },
      outputs: { total: 60 },
      failedTasks: [],
    });

    const { entries } = await succeeded<{ entries: { task?: string; message: string }[] }>(
      admin,
      'read_logs',
      { workflow: workflowId, executionId: started.executionId },
    );
    expect(entries).toContainEqual(expect.objectContaining({ task: 'Say', message: 'sum is 6' }));

    // Inputs the workflow does not declare, or of the wrong type: the server's 400, nothing started.
    const refused = await call(admin, `run_${name}`, { values: 'one', extra: 1 });
    expect(refused.isError).toBe(true);
    expect(refused.text).toContain('body.inputs.values: must be an array');
    expect(refused.text).toContain('body.inputs.extra: is not a declared input');
    expect(refused.text).toContain('(HTTP 400)');
  });

  it('follows a longer run: its status when the time is up, progress while it waits, then its end', async () => {
    const name = uniqueName('mcp-slow');
    await addWorkflow(trellis.admin, {
      name,
      tasks: [{ name: 'Wait', type: { plugin: 'Flow/Delay' }, parameters: { milliseconds: 9000 } }],
    });
    const { executionId } = await succeeded<{ executionId: string }>(admin, `run_${name}`);
    const running = await succeeded(admin, 'follow_execution', {
      workflow: name,
      executionId,
      timeoutSeconds: 1,
    });
    expect(running).toMatchObject({ status: 'Running', ended: false, outputs: null });

    // Progress every 5 s: the run has 7 s and more to go.
    const progress: string[] = [];
    const ended = (await admin.callTool(
      { name: 'follow_execution', arguments: { workflow: name, executionId } },
      undefined,
      { onprogress: ({ message }) => progress.push(message ?? '') },
    )) as CallToolResult;
    expect(ended.structuredContent).toMatchObject({ status: 'Completed', ended: true });
    expect(progress[0]).toMatch(/^waited \d+ s$/);
  });

  it('lists the pending approvals and decides one with inputs and a reason; a user without the role gets the 403', async () => {
    const name = uniqueName('mcp-gate');
    const workflowId = await addWorkflow(trellis.admin, gated(name));
    const { executionId } = await succeeded<{ executionId: string }>(admin, `run_${name}`);
    const paused = await succeeded(admin, 'follow_execution', {
      workflow: name,
      executionId,
      timeoutSeconds: 60,
    });
    expect(paused).toMatchObject({
      status: 'Paused',
      ended: false,
      pendingApprovals: [
        {
          taskName: 'Gate',
          comment: 'Check the numbers',
          form: { note: { type: 'string', required: true } },
        },
      ],
    });

    const { approvals } = await succeeded<{ approvals: { id: string; executionId: string }[] }>(
      admin,
      'list_approvals',
      { workflow: name },
    );
    const approval = approvals.find((candidate) => candidate.executionId === executionId);
    expect(approval).toMatchObject({ taskName: 'Gate', status: 'Pending', workflowId });

    // A user whose roles do not reach approvals: the server's 403, as a tool error.
    const { client: plugins, stderr } = await mcpSession(basic('plugins'));
    // It may not read workflows: no run tools, the others still there.
    const { tools } = await plugins.listTools();
    expect(tools.map((tool) => tool.name)).toContain('decide_approval');
    expect(tools.filter((tool) => tool.name.startsWith('run_'))).toEqual([]);
    await vi.waitFor(() => expect(stderr()).toMatch(/no run tools: .*admin, workflow/));
    const forbidden = await call(plugins, 'decide_approval', {
      workflow: workflowId,
      executionId,
      approval: approval!.id,
      decision: 'approve',
    });
    expect(forbidden.isError).toBe(true);
    expect(forbidden.text).toMatch(/admin, workflow[\s\S]*\(HTTP 403\)/);
    expect(forbidden.structuredContent).toMatchObject({ status: 403 });

    const decided = await succeeded(admin, 'decide_approval', {
      workflow: name,
      executionId,
      approval: 'Gate',
      decision: 'approve',
      inputs: { note: 'ledger matches' },
      reason: 'Checked by the agent',
    });
    expect(decided).toMatchObject({ approvalId: approval!.id, decision: 'approve' });
    const completed = await succeeded(admin, 'follow_execution', { workflow: name, executionId });
    expect(completed).toMatchObject({ status: 'Completed', ended: true });
    const decidedApproval = await trellis.admin.GET(
      '/workflows/{workflowId}/executions/{executionId}/approvals',
      { params: { path: { workflowId, executionId } } },
    );
    expect(decidedApproval[0]).toMatchObject({
      status: 'Approved',
      decidedBy: users.admin.username,
      inputs: { note: 'ledger matches' },
      comment: 'Check the numbers',
    });

    // Deciding it again: the server's 409 message.
    const again = await call(admin, 'decide_approval', {
      workflow: name,
      executionId,
      approval: approval!.id,
      decision: 'reject',
    });
    expect(again.isError).toBe(true);
    expect(again.text).toContain('(HTTP 409)');
  });

  it('answers an unknown workflow or execution with a tool error, and keeps serving', async () => {
    const missing = '00000000-0000-4000-8000-000000000000';
    const byId = await call(admin, 'describe_workflow', { workflow: missing });
    expect(byId.isError).toBe(true);
    expect(byId.text).toBe(`Workflow "${missing}" was not found.\n(HTTP 404)`);
    expect(byId.structuredContent).toMatchObject({ status: 404 });

    const byName = await call(admin, 'follow_execution', {
      workflow: 'no-such-workflow',
      executionId: missing,
    });
    expect(byName.isError).toBe(true);
    expect(byName.text).toContain('No workflow is named "no-such-workflow".');

    const unknownTool = await call(admin, 'run_no-such-workflow');
    expect(unknownTool.isError).toBe(true);
    expect(unknownTool.text).toContain('There is no tool named "run_no-such-workflow".');

    await succeeded(admin, 'list_workflows');
  });

  it('works in the project of its key only: another project\u2019s workflows are not there', async () => {
    const ours = uniqueName('mcp-ours');
    const ourId = await addWorkflow(trellis.admin, totals(ours));
    await trellis.admin.POST('/projects', { body: { name: 'mcp-partner' } });
    const { key } = await trellis.admin.POST('/projects/{projectId}/keys', {
      params: { path: { projectId: 'mcp-partner' } },
      body: { name: 'agent', roles: ['workflow'] },
    });
    const { client: partner, stderr } = await mcpSession({ TRELLIS_TOKEN: key });

    const { tools } = await partner.listTools();
    expect(tools.filter((tool) => tool.name.startsWith('run_'))).toEqual([]);
    expect(await succeeded(partner, 'list_workflows')).toEqual({ workflows: [] });
    const hidden = await call(partner, 'describe_workflow', { workflow: ourId });
    expect(hidden.isError).toBe(true);
    expect(hidden.text).toContain('(HTTP 404)');
    const started = await call(partner, `run_${ours}`, { values: [1] });
    expect(started.isError).toBe(true);

    // Naming the other project does not reach it either.
    const { client: elsewhere } = await mcpSession({
      TRELLIS_TOKEN: key,
      TRELLIS_PROJECT: 'default',
    });
    const refused = await call(elsewhere, 'list_workflows');
    expect(refused.isError).toBe(true);
    expect(refused.text).toMatch(/\(HTTP 40[34]\)/);
    await vi.waitFor(() =>
      expect(stderr()).toContain(`trellis mcp: serving ${trellis.baseUrl} on stdio`),
    );
  });
});
