/**
 * The API's `/mcp` (`Mcp.Enabled`): the tools of `trellis mcp` over streamable HTTP, driven by
 * the MCP SDK's own client against a real Trellis with a worker; every call made with the
 * caller's own credentials, in the project its headers name, and no more.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { basicAuthorization } from '../../sdk/src/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { totalsWorkflow as totals, uniqueName } from '../support/cli.js';
import { startTrellis, users, type Trellis } from '../support/harness.js';
import { addWorkflow } from '../support/engine-support.js';

let trellis: Trellis;
const sessions: Client[] = [];

const basic = (user: keyof typeof users) =>
  basicAuthorization(users[user].username, users[user].password);

/** An agent's MCP client of `/mcp` with these request headers. */
async function mcpSession(headers: Record<string, string>): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', trellis.baseUrl), {
    requestInit: { headers },
  });
  const client = new Client({ name: 'trellis-test-agent', version: '1.0.0' });
  await client.connect(transport);
  sessions.push(client);
  return client;
}

/** Calls a tool; its structured result, and its text. */
async function call(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
  onprogress?: (message: string) => void,
) {
  const result = (await client.callTool(
    { name, arguments: args },
    undefined,
    onprogress ? { onprogress: ({ message }) => onprogress(message ?? '') } : undefined,
  )) as CallToolResult;
  const [first] = result.content;
  return { ...result, text: first?.type === 'text' ? first.text : '' };
}

beforeAll(async () => {
  trellis = await startTrellis({ worker: true, config: { Mcp: { Enabled: true } } });
});
afterAll(async () => {
  await Promise.all(sessions.map((session) => session.close()));
  await trellis?.stop();
});

describe('/mcp', () => {
  it('lists the tools, starts a run and follows it to its end with progress, and reads its logs', async () => {
    const admin = await mcpSession({ Authorization: basic('admin') });
    const name = uniqueName('http-totals');
    const workflowId = await addWorkflow(trellis.admin, totals(name));
    const { tools } = await admin.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(
      expect.arrayContaining([
        'list_workflows',
        'follow_execution',
        'decide_approval',
        `run_${name}`,
      ]),
    );

    const started = await call(admin, `run_${name}`, { values: [1, 2, 3] });
    expect(started.isError, started.text).toBeFalsy();
    const { executionId } = started.structuredContent as { executionId: string };
    const followed = await call(admin, 'follow_execution', {
      workflow: workflowId,
      executionId,
      timeoutSeconds: 60,
    });
    expect(followed.structuredContent).toMatchObject({
      status: 'Completed',
      outputs: { total: 60 },
    });
    const logs = await call(admin, 'read_logs', { workflow: name, executionId });
    expect(logs.structuredContent).toMatchObject({
      entries: expect.arrayContaining([expect.objectContaining({ message: 'sum is 6' })]),
    });

    // A longer run: progress every 5 s while the call waits, then its end.
    const slow = uniqueName('http-slow');
    await addWorkflow(trellis.admin, {
      name: slow,
      tasks: [{ name: 'Wait', type: { plugin: 'Flow/Delay' }, parameters: { milliseconds: 7000 } }],
    });
    const run = await call(admin, `run_${slow}`);
    const progress: string[] = [];
    const ended = await call(
      admin,
      'follow_execution',
      {
        workflow: slow,
        executionId: (run.structuredContent as { executionId: string }).executionId,
      },
      (message) => progress.push(message),
    );
    expect(ended.structuredContent).toMatchObject({ status: 'Completed', ended: true });
    expect(progress[0]).toMatch(/^waited \d+ s$/);
  });

  it('decides an approval as the caller; a caller whose role lacks workflow gets the API’s 403', async () => {
    const admin = await mcpSession({ Authorization: basic('admin') });
    const name = uniqueName('http-gate');
    const workflowId = await addWorkflow(trellis.admin, {
      name,
      tasks: [
        {
          name: 'Gate',
          type: { plugin: 'Flow/Log' },
          parameters: { message: 'approved' },
          manualApproval: { enabled: true },
        },
      ],
    });
    const plugins = await mcpSession({ Authorization: basic('plugins') });
    const refused = await call(plugins, `run_${name}`);
    expect(refused.isError).toBe(true);
    const direct = await call(plugins, 'list_workflows');
    expect(direct.isError).toBe(true);
    expect(direct.text).toMatch(/admin, workflow[\s\S]*\(HTTP 403\)/);

    const started = await call(admin, `run_${name}`);
    const { executionId } = started.structuredContent as { executionId: string };
    await call(admin, 'follow_execution', {
      workflow: workflowId,
      executionId,
      timeoutSeconds: 60,
    });
    const forbidden = await call(plugins, 'decide_approval', {
      workflow: workflowId,
      executionId,
      approval: 'Gate',
      decision: 'approve',
    });
    expect(forbidden.structuredContent).toMatchObject({ status: 403 });

    const decided = await call(admin, 'decide_approval', {
      workflow: workflowId,
      executionId,
      approval: 'Gate',
      decision: 'approve',
      reason: 'Checked over HTTP',
    });
    expect(decided.isError, decided.text).toBeFalsy();
    const completed = await call(admin, 'follow_execution', { workflow: workflowId, executionId });
    expect(completed.structuredContent).toMatchObject({ status: 'Completed' });
    const [approval] = await trellis.admin.GET(
      '/workflows/{workflowId}/executions/{executionId}/approvals',
      { params: { path: { workflowId, executionId } } },
    );
    expect(approval).toMatchObject({ status: 'Approved', decidedBy: users.admin.username });
  });

  it('works in the project the headers name: another project’s workflows are not there', async () => {
    const ourId = await addWorkflow(trellis.admin, totals(uniqueName('http-ours')));
    await trellis.admin.POST('/projects', { body: { name: 'mcp-http-partner' } });
    const { key } = await trellis.admin.POST('/projects/{projectId}/keys', {
      params: { path: { projectId: 'mcp-http-partner' } },
      body: { name: 'agent', roles: ['workflow'] },
    });
    const partner = await mcpSession({ Authorization: `Bearer ${key}` });
    expect((await call(partner, 'list_workflows')).structuredContent).toEqual({ workflows: [] });
    const hidden = await call(partner, 'describe_workflow', { workflow: ourId });
    expect(hidden.structuredContent).toMatchObject({ status: 404 });

    const elsewhere = await mcpSession({
      Authorization: `Bearer ${key}`,
      'X-Trellis-Project': 'default',
    });
    const refused = await call(elsewhere, 'list_workflows');
    expect(refused.isError).toBe(true);
    expect(refused.text).toMatch(/\(HTTP 40[34]\)/);

    const admin = await mcpSession({
      Authorization: basic('admin'),
      'X-Trellis-Project': 'mcp-http-partner',
    });
    expect((await call(admin, 'list_workflows')).structuredContent).toEqual({ workflows: [] });
  });

  it('answers an unauthenticated request 401 with a challenge, before any MCP', async () => {
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: '2025-06-18',
        capabilities: {},
        clientInfo: { name: 'x', version: '1' },
      },
    };
    for (const authorization of [undefined, 'Basic eDp5']) {
      const response = await fetch(new URL('/mcp', trellis.baseUrl), {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
          ...(authorization ? { Authorization: authorization } : {}),
        },
        body: JSON.stringify(initialize),
      });
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toContain('Basic');
      expect(await response.json()).toMatchObject({ succeeded: false });
    }
  });

  it('is not there when disabled: 404 as any unknown path', async () => {
    const disabled = await startTrellis();
    try {
      const response = await fetch(new URL('/mcp', disabled.baseUrl), {
        method: 'POST',
        headers: { Authorization: basic('admin'), 'Content-Type': 'application/json' },
        body: '{}',
      });
      expect(response.status).toBe(404);
      expect(await response.json()).toMatchObject({ succeeded: false });
    } finally {
      await disabled.stop();
    }
  });
});
