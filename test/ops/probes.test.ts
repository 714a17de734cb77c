/**
 * `/livez` and `/readyz` through the real server: always on, no credentials, no envelope; ready
 * only while the database and Temporal answer (and, in a process with a worker, the worker
 * polls). `/health` stays as the seed has it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectFailure } from '../api/api-error.js';
import { sendRaw } from '../api/http.js';
import { startTrellis, type Trellis } from '../support/harness.js';

let api: Trellis;
let withWorker: Trellis;
let temporalDown: Trellis;
beforeAll(async () => {
  [api, withWorker, temporalDown] = await Promise.all([
    startTrellis(),
    startTrellis({ worker: true }),
    startTrellis({ temporal: 'unreachable' }),
  ]);
});
afterAll(async () => {
  await Promise.all([api?.stop(), withWorker?.stop(), temporalDown?.stop()]);
});

describe('/livez', () => {
  it('answers 200 {"status":"ok"} without credentials, whatever the dependencies do', async () => {
    for (const trellis of [api, withWorker, temporalDown]) {
      const response = await sendRaw(trellis.baseUrl, 'GET', '/livez', { as: null });
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ status: 'ok' });
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    }
    // The SDK reads it as the contract says (no envelope).
    expect(await api.client().GET('/livez')).toEqual({ status: 'ok' });
  });

  it('ignores credentials, even wrong ones', async () => {
    const wrong = api.client({ basic: { username: 'ghost', password: 'nope' } });
    expect(await wrong.GET('/livez')).toEqual({ status: 'ok' });
  });
});

describe('/readyz', () => {
  it('is 200 when the database and Temporal answer (an API process has no worker check)', async () => {
    const response = await sendRaw(api.baseUrl, 'GET', '/readyz', { as: null });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      status: 'ok',
      checks: [
        { component: 'database', ready: true, message: 'The database answers.' },
        { component: 'temporal', ready: true, message: 'Temporal answers.' },
      ],
    });
  });

  it('also asks whether the worker polls in a process that runs one', async () => {
    const report = await withWorker.client().GET('/readyz');
    expect(report.status).toBe('ok');
    expect(report.checks.map(({ component, ready }) => ({ component, ready }))).toEqual([
      { component: 'database', ready: true },
      { component: 'temporal', ready: true },
      { component: 'worker', ready: true },
    ]);
  });

  it('is 503 naming Temporal when Temporal is unreachable', async () => {
    const response = await sendRaw(temporalDown.baseUrl, 'GET', '/readyz', { as: null });
    expect(response.status).toBe(503);
    const report = response.body as {
      status: string;
      checks: { component: string; ready: boolean; message: string }[];
    };
    expect(report.status).toBe('unavailable');
    expect(report.checks[0]).toMatchObject({ component: 'database', ready: true });
    expect(report.checks[1]).toMatchObject({ component: 'temporal', ready: false });
    expect(report.checks[1]!.message).toMatch(/^Temporal does not answer: /);
  });

  it('is 503 naming the database when the database is gone', async () => {
    const gone = await startTrellis();
    try {
      await gone.db.destroy();
      const response = await sendRaw(gone.baseUrl, 'GET', '/readyz', { as: null });
      expect(response.status).toBe(503);
      expect(response.body).toMatchObject({
        status: 'unavailable',
        checks: [
          { component: 'database', ready: false },
          { component: 'temporal', ready: true },
        ],
      });
    } finally {
      await gone.stop();
    }
  });
});

describe('the probes beside the seed contract', () => {
  it('leave /health as it is: 404 unless HealthCheck.Enabled', async () => {
    await expectFailure(api.client().GET('/health'), 404, 'GET /health');
  });

  it('take GET only', async () => {
    const response = await sendRaw(api.baseUrl, 'POST', '/readyz', { as: null });
    expect(response.status).toBe(405);
  });
});
