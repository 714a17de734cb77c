/**
 * Fair shares (issue 29) through the real stack: a project's limits on API requests and starts a
 * minute answer 429 with `Retry-After`, its running-at-once limit keeps a new run Pending until
 * another ends, and one project's limits leave every other project alone.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TrellisApiError, basicAuthorization } from '../../sdk/src/index.js';
import type { TrellisClient } from '../../sdk/src/index.js';
import { basicAs, clientIn, startTrellis, users, type Trellis } from '../support/harness.js';
import {
  addWorkflow,
  approvalsOncePaused,
  decideApproval,
  definition,
  eventually,
  noop,
  tasksOf,
} from '../support/engine-support.js';

let trellis: Trellis;

beforeAll(async () => {
  trellis = await startTrellis({ worker: true });
});
afterAll(async () => {
  await trellis?.stop();
});

type Limits = { runningExecutions?: number; startsPerMinute?: number; requestsPerMinute?: number };

let projects = 0;
/** A new project with these limits, and the admin's client in it. */
async function projectWith(limits: Limits): Promise<{ name: string; client: TrellisClient }> {
  projects += 1;
  const name = `shares-${Date.now().toString(36)}-${projects}`;
  await trellis.admin.POST('/projects', { body: { name, limits } });
  return { name, client: clientIn(trellis, basicAs('admin'), name) };
}

/** A request through plain fetch, for the status and `Retry-After` the SDK does not show. */
async function send(
  project: string,
  path: string,
  init: { method?: string; body?: unknown; at?: Trellis } = {},
) {
  const response = await fetch(`${(init.at ?? trellis).baseUrl}${path}`, {
    method: init.method ?? 'GET',
    headers: {
      authorization: basicAuthorization(users.admin.username, users.admin.password),
      'x-trellis-project': project,
      ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  });
  const body = (await response.json()) as { messages: string[]; errors?: { code: string }[] };
  return { status: response.status, retryAfter: response.headers.get('retry-after'), body };
}

const executeIn = (project: string, workflowId: string) =>
  send(project, `/workflows/${workflowId}/executions`, {
    method: 'POST',
    body: { workflowId },
  });

describe('a project', () => {
  it('shows the limits it sets, which instance admins change', async () => {
    const { name } = await projectWith({ startsPerMinute: 30 });
    const shown = await trellis.admin.GET('/projects/{projectId}', {
      params: { path: { projectId: name } },
    });
    expect(shown.limits).toEqual({ startsPerMinute: 30 });
    // Renaming without limits keeps them; with limits replaces them.
    await trellis.admin.PUT('/projects/{projectId}', {
      params: { path: { projectId: name } },
      body: { name },
    });
    await trellis.admin.PUT('/projects/{projectId}', {
      params: { path: { projectId: name } },
      body: { name, limits: { runningExecutions: 2 } },
    });
    const changed = await trellis.admin.GET('/projects/{projectId}', {
      params: { path: { projectId: name } },
    });
    expect(changed.limits).toEqual({ runningExecutions: 2 });
  });

  it('past its requests a minute is answered 429 with Retry-After; other projects are not', async () => {
    const limited = await projectWith({ requestsPerMinute: 3 });
    const other = await projectWith({});
    for (let i = 0; i < 3; i++) expect((await send(limited.name, '/workflows')).status).toBe(200);
    const refused = await send(limited.name, '/workflows');
    expect(refused.status).toBe(429);
    // The last minute slides: at most the rest of this minute and a third of the next.
    expect(Number(refused.retryAfter)).toBeGreaterThanOrEqual(1);
    expect(Number(refused.retryAfter)).toBeLessThanOrEqual(80);
    expect(refused.body.errors?.[0]?.code).toBe('project.requests_per_minute');
    expect(refused.body.messages[0]).toMatch(
      new RegExp(
        `^Project "${limited.name}" made 3 API requests in the last minute, the most its limits allow \\(requestsPerMinute\\): try again in \\d+ s\\.$`,
      ),
    );
    for (let i = 0; i < 10; i++) expect((await send(other.name, '/workflows')).status).toBe(200);
    expect((await send('default', '/workflows')).status).toBe(200);
  });

  it('counts its requests across API processes', async () => {
    const other = await startTrellis({ databaseUrl: trellis.databaseUrl! });
    try {
      const limited = await projectWith({ requestsPerMinute: 4 });
      for (const at of [trellis, other, trellis, other]) {
        expect((await send(limited.name, '/workflows', { at })).status).toBe(200);
      }
      expect((await send(limited.name, '/workflows', { at: other })).status).toBe(429);
      expect((await send(limited.name, '/workflows')).status).toBe(429);
    } finally {
      await other.stop();
    }
  });

  it('past its starts a minute is answered 429 with Retry-After, nothing started; other projects are not', async () => {
    const limited = await projectWith({ startsPerMinute: 2 });
    const other = await projectWith({ startsPerMinute: 0 });
    const workflowId = await addWorkflow(limited.client, definition([{ name: 'A', type: noop }]));
    const otherWorkflowId = await addWorkflow(
      other.client,
      definition([{ name: 'A', type: noop }]),
    );
    for (let i = 0; i < 2; i++)
      expect((await executeIn(limited.name, workflowId)).status).toBe(200);
    const refused = await executeIn(limited.name, workflowId);
    expect(refused.status).toBe(429);
    expect(Number(refused.retryAfter)).toBeGreaterThanOrEqual(50);
    expect(Number(refused.retryAfter)).toBeLessThanOrEqual(60);
    expect(refused.body.errors?.[0]?.code).toBe('project.starts_per_minute');
    expect(refused.body.messages[0]).toMatch(
      `Project "${limited.name}" has started 2 executions in the last minute, the most its limits allow (startsPerMinute)`,
    );
    // The SDK hands the wait to its caller, who can honour it.
    const throughSdk = await limited.client
      .POST('/workflows/{workflowId}/executions', {
        params: { path: { workflowId } },
        body: { workflowId },
      })
      .catch((error: unknown) => error);
    expect(throughSdk).toBeInstanceOf(TrellisApiError);
    expect((throughSdk as TrellisApiError).status).toBe(429);
    expect((throughSdk as TrellisApiError).retryAfterSeconds).toBeGreaterThanOrEqual(50);
    const runs = await limited.client.GET('/workflows/{workflowId}/executions', {
      params: { path: { workflowId } },
    });
    expect(runs).toHaveLength(2);
    for (let i = 0; i < 4; i++) {
      expect((await executeIn(other.name, otherWorkflowId)).status).toBe(200);
    }
  });

  it('counts starts that race as they come: of eight at once under a limit of three, three start', async () => {
    const limited = await projectWith({ startsPerMinute: 3 });
    const workflowId = await addWorkflow(limited.client, definition([{ name: 'A', type: noop }]));
    const statuses = await Promise.all(
      Array.from({ length: 8 }, async () => (await executeIn(limited.name, workflowId)).status),
    );
    expect(statuses.filter((status) => status === 200)).toHaveLength(3);
    expect(statuses.filter((status) => status === 429)).toHaveLength(5);
    const runs = await limited.client.GET('/workflows/{workflowId}/executions', {
      params: { path: { workflowId } },
    });
    expect(runs).toHaveLength(3);
  });

  it('past its running-at-once limit keeps a new run Pending, saying so, until one ends', async () => {
    const limited = await projectWith({ runningExecutions: 1 });
    const other = await projectWith({ runningExecutions: 1 });
    // A run waiting for its approval holds its slot for as long as the test needs.
    const gated = definition([{ name: 'Work', type: noop, manualApproval: { enabled: true } }]);
    const workflowId = await addWorkflow(limited.client, gated);
    const startRun = async () =>
      (
        (await executeIn(limited.name, workflowId)).body as unknown as {
          data: { executionId: string };
        }
      ).data.executionId;
    const approve = async (executionId: string) => {
      const [approval] = await approvalsOncePaused(limited.client, workflowId, executionId);
      await decideApproval(limited.client, workflowId, executionId, approval!.id, 'approve');
    };
    const first = await startRun();
    await approvalsOncePaused(limited.client, workflowId, first);
    const second = await startRun();
    const detail = (executionId: string) =>
      limited.client.GET('/workflows/{workflowId}/executions/{executionId}', {
        params: { path: { workflowId, executionId } },
      });
    const waiting = await eventually(async () => {
      const execution = await detail(second);
      expect(execution.status).toBe('Pending');
      expect(execution.message).toMatch(/^Waiting/);
      return execution.message;
    });
    expect(waiting).toBe(
      `Waiting for a concurrency slot: 1 of 1 taken of project "${limited.name}" (limits.runningExecutions) by execution ${first}.`,
    );

    // Another project with the same limit runs at once meanwhile.
    const otherWorkflowId = await addWorkflow(
      other.client,
      definition([{ name: 'A', type: noop }]),
    );
    const otherRun = await other.client.POST('/workflows/{workflowId}/executions', {
      params: { path: { workflowId: otherWorkflowId } },
      body: { workflowId: otherWorkflowId },
    });
    const otherDone = await other.client.waitForExecution(otherWorkflowId, otherRun.executionId, {
      timeoutMs: 30_000,
    });
    expect(otherDone.status).toBe('Completed');
    expect((await detail(second)).status).toBe('Pending');

    // The first run ends: the second takes its slot.
    await approve(first);
    await approve(second);
    const done = await limited.client.waitForExecution(workflowId, second, { timeoutMs: 60_000 });
    expect(done.status).toBe('Completed');
    const firstWork = (await tasksOf(limited.client, workflowId, first)).Work!;
    const secondWork = (await tasksOf(limited.client, workflowId, second)).Work!;
    expect(Date.parse(secondWork.startTime!)).toBeGreaterThanOrEqual(
      Date.parse(firstWork.endTime!),
    );
  });
});
