import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scheduleId } from '#protocol/ids.js';
import { basicAs, startTrellis, type Trellis } from '../support/harness.js';
import { expectFailure } from './api-error.js';
import { describeAuthMatrix } from './auth-matrix.js';
import { simpleDefinition } from './definitions.js';
import { expectRawFailure, sendRaw } from './http.js';

let trellis: Trellis;
let workflowId: string;
beforeAll(async () => {
  trellis = await startTrellis();
  ({ id: workflowId } = await trellis.admin.POST('/workflows/Add', {
    body: { definition: simpleDefinition('triggered') },
  }));
});
afterAll(async () => {
  await trellis?.stop();
});

const unknownId = '00000000-0000-4000-8000-000000000000';
const inWorkflow = () => ({ params: { path: { workflowId } } });
const ofTrigger = (triggerId: string) => ({ params: { path: { workflowId, triggerId } } });

async function triggers() {
  return trellis.admin.GET('/workflows/{workflowId}/triggers', inWorkflow());
}

/** The Temporal schedule of a trigger, or null when there is none. */
async function schedule(triggerId: string) {
  try {
    return await trellis.temporal.client.schedule.getHandle(scheduleId(triggerId)).describe();
  } catch {
    return null;
  }
}

describeAuthMatrix({
  role: 'workflow',
  trellis: () => trellis,
  call: (client) => client.GET('/workflows/{workflowId}/triggers', inWorkflow()),
});

const manualProperties = {
  note: 'by hand',
  my_key: 1,
  HTTP_STATUS: 2,
  nested: { snake_case: [{ Mixed_Key: true }] },
};

describe('/workflows/{workflowId}/triggers', () => {
  it('creates, lists, reads, updates and deletes a Manual trigger', async () => {
    const created = await trellis.admin.envelope.POST('/workflows/{workflowId}/triggers', {
      ...inWorkflow(),
      body: { workflowId, type: 'Manual', status: 'Active', properties: manualProperties },
    });
    expect(created.succeeded).toBe(true);
    expect(created.messages[0]).toMatch(/created/);
    const { triggerId } = created.data;

    const trigger = await trellis.admin.GET(
      '/workflows/{workflowId}/triggers/{triggerId}',
      ofTrigger(triggerId),
    );
    expect(trigger).toEqual({
      id: triggerId,
      type: 'Manual',
      status: 'Active',
      // Keys inside a user's JSON come back as they were given.
      properties: manualProperties,
      lastModified: expect.any(String),
    });
    expect((await triggers()).map((t) => t.id)).toContain(triggerId);
    expect(await schedule(triggerId)).toBeNull();

    await new Promise((resolve) => setTimeout(resolve, 20));
    const updated = await trellis.admin.envelope.PUT(
      '/workflows/{workflowId}/triggers/{triggerId}',
      {
        ...ofTrigger(triggerId),
        body: {
          workflowId,
          triggerId,
          type: 'Manual',
          status: 'DeActive',
          properties: { note: 'paused' },
        },
      },
    );
    expect(updated).toMatchObject({ data: {}, succeeded: true });
    expect(updated.messages[0]).toMatch(/updated/);
    const after = await trellis.admin.GET(
      '/workflows/{workflowId}/triggers/{triggerId}',
      ofTrigger(triggerId),
    );
    expect(after).toMatchObject({ status: 'DeActive', properties: { note: 'paused' } });
    expect(Date.parse(after.lastModified)).toBeGreaterThan(Date.parse(trigger.lastModified));

    const deleted = await trellis.admin.envelope.DELETE(
      '/workflows/{workflowId}/triggers/{triggerId}',
      ofTrigger(triggerId),
    );
    expect(deleted.messages[0]).toMatch(/deleted/);
    await expectFailure(
      trellis.admin.GET('/workflows/{workflowId}/triggers/{triggerId}', ofTrigger(triggerId)),
      404,
      triggerId,
    );
  });

  it('keeps a Temporal schedule in step with a TimeBased trigger: create, pause, move to Manual, delete', async () => {
    const { triggerId } = await trellis
      .client(basicAs('workflow'))
      .POST('/workflows/{workflowId}/triggers', {
        ...inWorkflow(),
        body: {
          workflowId,
          type: 'TimeBased',
          status: 'Active',
          properties: { cron: '*/15 * * * *', timezone: 'Europe/Berlin' },
        },
      });
    const created = await schedule(triggerId);
    expect(created).not.toBeNull();
    expect(created!.state.paused).toBe(false);
    expect(created!.spec.timezone).toBe('Europe/Berlin');

    const body = {
      workflowId,
      triggerId,
      type: 'TimeBased' as const,
      properties: { cron: '0 6 * * 1' },
    };
    await trellis.admin.PUT('/workflows/{workflowId}/triggers/{triggerId}', {
      ...ofTrigger(triggerId),
      body: { ...body, status: 'DeActive' },
    });
    expect((await schedule(triggerId))!.state.paused).toBe(true);

    await trellis.admin.PUT('/workflows/{workflowId}/triggers/{triggerId}', {
      ...ofTrigger(triggerId),
      body: { ...body, type: 'Manual', status: 'Active' },
    });
    expect(await schedule(triggerId)).toBeNull();

    await trellis.admin.PUT('/workflows/{workflowId}/triggers/{triggerId}', {
      ...ofTrigger(triggerId),
      body: { ...body, status: 'Active' },
    });
    expect(await schedule(triggerId)).not.toBeNull();
    await trellis.admin.DELETE(
      '/workflows/{workflowId}/triggers/{triggerId}',
      ofTrigger(triggerId),
    );
    expect(await schedule(triggerId)).toBeNull();
  });

  it('rejects an invalid cron or time zone, or a missing cron (400 naming it), changing nothing', async () => {
    const before = await triggers();
    const create = (properties: Record<string, unknown>) =>
      trellis.admin.POST('/workflows/{workflowId}/triggers', {
        ...inWorkflow(),
        body: { workflowId, type: 'TimeBased', status: 'Active', properties },
      });
    await expectFailure(
      create({ cron: '* * *' }),
      400,
      /cron: must be a cron expression of 5 fields/,
    );
    await expectFailure(create({ cron: '61 * * * *' }), 400, /cron/);
    await expectFailure(
      create({ cron: '0 * * * *', timezone: 'Mars/Olympus' }),
      400,
      /Mars\/Olympus/,
    );
    await expectFailure(create({}), 400, /properties\.cron is required/);

    // An update to a bad cron leaves the trigger and its schedule as they were.
    const { triggerId } = await create({ cron: '0 0 * * *' });
    await expectFailure(
      trellis.admin.PUT('/workflows/{workflowId}/triggers/{triggerId}', {
        ...ofTrigger(triggerId),
        body: {
          workflowId,
          triggerId,
          type: 'TimeBased',
          status: 'Active',
          properties: { cron: 'daily' },
        },
      }),
      400,
      /cron/,
    );
    const kept = await trellis.admin.GET(
      '/workflows/{workflowId}/triggers/{triggerId}',
      ofTrigger(triggerId),
    );
    expect(kept.properties).toEqual({ cron: '0 0 * * *' });
    expect(await schedule(triggerId)).not.toBeNull();
    await trellis.admin.DELETE(
      '/workflows/{workflowId}/triggers/{triggerId}',
      ofTrigger(triggerId),
    );
    expect(await triggers()).toEqual(before);
  });

  it("takes the path's ids when the body leaves them out", async () => {
    const before = await triggers();
    const { triggerId } = await trellis.admin.POST('/workflows/{workflowId}/triggers', {
      ...inWorkflow(),
      body: { type: 'Manual', status: 'Active', properties: {} },
    });
    await trellis.admin.PUT('/workflows/{workflowId}/triggers/{triggerId}', {
      ...ofTrigger(triggerId),
      body: { type: 'Manual', status: 'DeActive', properties: {} },
    });
    const kept = await trellis.admin.GET(
      '/workflows/{workflowId}/triggers/{triggerId}',
      ofTrigger(triggerId),
    );
    expect(kept).toMatchObject({ id: triggerId, type: 'Manual', status: 'DeActive' });
    await trellis.admin.DELETE(
      '/workflows/{workflowId}/triggers/{triggerId}',
      ofTrigger(triggerId),
    );
    expect(await triggers()).toEqual(before);
  });

  it('refuses ids in the body that differ from the path (400)', async () => {
    const before = await triggers();
    await expectFailure(
      trellis.admin.POST('/workflows/{workflowId}/triggers', {
        ...inWorkflow(),
        body: { workflowId: unknownId, type: 'Manual', status: 'Active', properties: {} },
      }),
      400,
      'body.workflowId',
    );
    const { triggerId } = await trellis.admin.POST('/workflows/{workflowId}/triggers', {
      ...inWorkflow(),
      body: { workflowId, type: 'Manual', status: 'Active', properties: {} },
    });
    await expectFailure(
      trellis.admin.PUT('/workflows/{workflowId}/triggers/{triggerId}', {
        ...ofTrigger(triggerId),
        body: {
          workflowId,
          triggerId: unknownId,
          type: 'Manual',
          status: 'DeActive',
          properties: {},
        },
      }),
      400,
      'body.triggerId',
    );
    await expectFailure(
      trellis.admin.PUT('/workflows/{workflowId}/triggers/{triggerId}', {
        ...ofTrigger(triggerId),
        body: {
          workflowId: unknownId,
          triggerId,
          type: 'Manual',
          status: 'DeActive',
          properties: {},
        },
      }),
      400,
      'body.workflowId',
    );
    const kept = await trellis.admin.GET(
      '/workflows/{workflowId}/triggers/{triggerId}',
      ofTrigger(triggerId),
    );
    expect(kept.status).toBe('Active');
    await trellis.admin.DELETE(
      '/workflows/{workflowId}/triggers/{triggerId}',
      ofTrigger(triggerId),
    );
    expect(await triggers()).toEqual(before);
  });

  it('validates type, status and properties (one message each)', async () => {
    const error = await expectFailure(
      trellis.admin.POST('/workflows/{workflowId}/triggers', {
        ...inWorkflow(),
        body: { workflowId, type: 'Hourly', status: 'On', properties: 'cron' } as never,
      }),
      400,
    );
    expect(error.messages).toEqual(
      expect.arrayContaining([
        'body.type: must be one of "Manual", "TimeBased", "Webhook"',
        'body.status: must be one of "Active", "DeActive"',
        'body.properties: must be object',
      ]),
    );
  });

  it('answers 400 for malformed ids and 404 for unknown workflows and triggers', async () => {
    await expectFailure(
      trellis.admin.GET('/workflows/{workflowId}/triggers', {
        params: { path: { workflowId: 'x' } },
      }),
      400,
      'path.workflowId',
    );
    await expectFailure(
      trellis.admin.GET('/workflows/{workflowId}/triggers/{triggerId}', ofTrigger('not-a-uuid')),
      400,
      'path.triggerId',
    );
    await expectFailure(
      trellis.admin.GET('/workflows/{workflowId}/triggers', {
        params: { path: { workflowId: unknownId } },
      }),
      404,
      unknownId,
    );
    await expectFailure(
      trellis.admin.POST('/workflows/{workflowId}/triggers', {
        params: { path: { workflowId: unknownId } },
        body: { workflowId: unknownId, type: 'Manual', status: 'Active', properties: {} },
      }),
      404,
    );
    await expectFailure(
      trellis.admin.GET('/workflows/{workflowId}/triggers/{triggerId}', ofTrigger(unknownId)),
      404,
      unknownId,
    );
    await expectFailure(
      trellis.admin.PUT('/workflows/{workflowId}/triggers/{triggerId}', {
        ...ofTrigger(unknownId),
        body: {
          workflowId,
          triggerId: unknownId,
          type: 'Manual',
          status: 'Active',
          properties: {},
        },
      }),
      404,
    );
    await expectFailure(
      trellis.admin.DELETE('/workflows/{workflowId}/triggers/{triggerId}', ofTrigger(unknownId)),
      404,
    );
  });

  it('rejects malformed JSON (400), text (415) and oversized bodies (413) without creating triggers', async () => {
    const before = await triggers();
    const path = `/workflows/${workflowId}/triggers`;
    await expectRawFailure(
      sendRaw(trellis.baseUrl, 'POST', path, { body: '{', contentType: 'application/json' }),
      400,
    );
    await expectRawFailure(
      sendRaw(trellis.baseUrl, 'POST', path, { body: 'x', contentType: 'text/csv' }),
      415,
    );
    const huge = JSON.stringify({
      workflowId,
      type: 'Manual',
      status: 'Active',
      properties: { blob: 'x'.repeat(trellis.config.Server.BodyLimitBytes) },
    });
    await expectRawFailure(
      sendRaw(trellis.baseUrl, 'POST', path, { body: huge, contentType: 'application/json' }),
      413,
    );
    expect(await triggers()).toEqual(before);
  });

  it('answers 503 and changes nothing when Temporal is unavailable', async () => {
    // A second API on the same database whose Temporal cannot be reached.
    const offline = await startTrellis({
      databaseUrl: trellis.databaseUrl,
      temporal: 'unreachable',
    });
    try {
      const before = await triggers();
      await expectFailure(
        offline.admin.POST('/workflows/{workflowId}/triggers', {
          ...inWorkflow(),
          body: {
            workflowId,
            type: 'TimeBased',
            status: 'Active',
            properties: { cron: '0 1 * * *' },
          },
        }),
        503,
        /Temporal/,
      );
      expect(await triggers()).toEqual(before);

      const { triggerId } = await trellis.admin.POST('/workflows/{workflowId}/triggers', {
        ...inWorkflow(),
        body: {
          workflowId,
          type: 'TimeBased',
          status: 'Active',
          properties: { cron: '0 2 * * *' },
        },
      });
      await expectFailure(
        offline.admin.PUT('/workflows/{workflowId}/triggers/{triggerId}', {
          ...ofTrigger(triggerId),
          body: {
            workflowId,
            triggerId,
            type: 'TimeBased',
            status: 'DeActive',
            properties: { cron: '0 2 * * *' },
          },
        }),
        503,
      );
      await expectFailure(
        offline.admin.DELETE('/workflows/{workflowId}/triggers/{triggerId}', ofTrigger(triggerId)),
        503,
      );
      const kept = await trellis.admin.GET(
        '/workflows/{workflowId}/triggers/{triggerId}',
        ofTrigger(triggerId),
      );
      expect(kept.status).toBe('Active');
      expect((await schedule(triggerId))!.state.paused).toBe(false);
      await trellis.admin.DELETE(
        '/workflows/{workflowId}/triggers/{triggerId}',
        ofTrigger(triggerId),
      );
    } finally {
      await offline.stop();
    }
  });
});
