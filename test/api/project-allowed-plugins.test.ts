/**
 * A project restricted to some installed plugins: its workflows may not use others (refused when
 * saved or started, 400 `plugin.not_allowed`), a task already running into one fails saying so,
 * and lifting the restriction lets them run again. `GET /plugins` stays instance-wide.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TrellisClient } from '../../sdk/src/index.js';
import { addWorkflow, definition, delay, execute, noop } from '../support/engine-support.js';
import { basicAs, clientIn, startTrellis, type Trellis } from '../support/harness.js';
import { expectFailure } from './api-error.js';

let trellis: Trellis;
/** The instance admin, working in the project `restricted`. */
let restricted: TrellisClient;

beforeAll(async () => {
  trellis = await startTrellis({ worker: true });
  restricted = clientIn(trellis, basicAs('admin'), 'restricted');
});
afterAll(async () => {
  await trellis?.stop();
});

const restrict = (project: string, allowedPlugins?: string[] | null) =>
  trellis.admin.PUT('/projects/{projectId}', {
    params: { path: { projectId: project } },
    body: { name: project, ...(allowedPlugins === undefined ? {} : { allowedPlugins }) },
  });

describe('plugins allowed in a project', () => {
  it('are set by instance admins and shown with the project', async () => {
    const { id } = await trellis.admin.POST('/projects', {
      body: { name: 'restricted', allowedPlugins: ['Flow/Delay', 'Flow/Log'] },
    });
    expect(
      await trellis.admin.GET('/projects/{projectId}', { params: { path: { projectId: id } } }),
    ).toMatchObject({ name: 'restricted', allowedPlugins: ['Flow/Delay', 'Flow/Log'] });
    expect(
      (await trellis.admin.GET('/projects')).find((p) => p.name === 'default'),
    ).not.toHaveProperty('allowedPlugins');
    // Installed plugins stay instance-wide.
    const types = (await restricted.GET('/plugins')).map((plugin) => plugin.type);
    expect(types).toContain('Flow/NoOp');
  });

  it('refuse a workflow using another plugin, inline or through a configuration', async () => {
    await addWorkflow(restricted, definition([{ name: 'Wait', ...delay(1) }]));
    const inline = await expectFailure(
      restricted.POST('/workflows/Add', {
        body: {
          definition: JSON.stringify(
            definition([
              { name: 'Wait', ...delay(1) },
              { name: 'Nothing', type: noop },
            ]),
          ),
        },
      }),
      400,
    );
    expect(inline.errors).toEqual([
      {
        code: 'plugin.not_allowed',
        path: 'body.definition',
        message:
          "body.definition: tasks[1].type: task 'Nothing' uses plugin 'Flow/NoOp', which project \"restricted\" does not allow (allowed: Flow/Delay, Flow/Log)",
      },
    ]);

    await restricted.POST('/config', {
      body: {
        name: 'api',
        type: 'Net/Http',
        version: '1.0.0',
        specifications: { baseUrl: 'https://one.test' },
      },
    });
    const configured = await expectFailure(
      restricted.POST('/workflows/Add', {
        body: {
          definition: JSON.stringify(
            definition([{ name: 'Call', type: 'api', parameters: { url: '/status' } }]),
          ),
        },
      }),
      400,
    );
    expect(configured.errors).toEqual([
      expect.objectContaining({
        code: 'plugin.not_allowed',
        message: expect.stringContaining("task 'Call' uses plugin 'Net/Http'"),
      }),
    ]);
  });

  it('refuse to start a workflow saved before, fail a task already running into one, and lift', async () => {
    const later = clientIn(trellis, basicAs('admin'), 'later');
    await trellis.admin.POST('/projects', { body: { name: 'later' } });
    const workflowId = await addWorkflow(
      later,
      definition([
        { name: 'Wait', ...delay(3_000) },
        { name: 'Nothing', type: noop, dependencies: ['Wait'] },
      ]),
    );
    const running = await execute(later, workflowId);
    await restrict('later', ['Flow/Delay']);

    const refused = await expectFailure(execute(later, workflowId), 400);
    expect(refused.errors[0]?.message).toContain(
      `task 'Nothing' uses plugin 'Flow/NoOp', which project "later" does not allow`,
    );
    const ended = await later.waitForExecution(workflowId, running, { timeoutMs: 60_000 });
    expect(ended.status).toBe('Failed');
    const tasks = await later.GET('/workflows/{workflowId}/executions/{executionId}/tasks', {
      params: { path: { workflowId, executionId: running } },
    });
    expect(tasks.find((task) => task.name === 'Nothing')).toMatchObject({
      status: 'Failed',
      message: expect.stringContaining(
        `Task 'Nothing' uses plugin 'Flow/NoOp', which project "later" does not allow (allowed: Flow/Delay).`,
      ),
    });

    // A rename leaves the list as it is; null lifts it.
    await restrict('later');
    expect(
      await trellis.admin.GET('/projects/{projectId}', {
        params: { path: { projectId: 'later' } },
      }),
    ).toMatchObject({ allowedPlugins: ['Flow/Delay'] });
    await expectFailure(execute(later, workflowId), 400);
    await restrict('later', null);
    expect(
      await trellis.admin.GET('/projects/{projectId}', {
        params: { path: { projectId: 'later' } },
      }),
    ).not.toHaveProperty('allowedPlugins');
    const again = await execute(later, workflowId);
    expect((await later.waitForExecution(workflowId, again, { timeoutMs: 60_000 })).status).toBe(
      'Completed',
    );
  });
});
