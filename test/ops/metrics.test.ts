/**
 * `/metrics` through the real stack: after runs, the series Prometheus scrapes are there with
 * their labels (operationIds, never raw paths; statuses; plugin types and outcomes), the
 * Temporal SDK's worker metrics and Node's beside them; off by default; and a worker-only
 * process serves them, with the probes, on its own port.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildConfig } from '#platform/config/load.js';
import type { TrellisConfig } from '#platform/config/types.js';
import { createLogger } from '#platform/logging.js';
import { createMetrics } from '#platform/observability/metrics.js';
import { countWaitingApprovals } from '#store/approval-repository.js';
import {
  createTrellis,
  type RunningTrellis,
  type TrellisProcess,
} from '../../bin/trellis-process.js';
import { expectFailure } from '../api/api-error.js';
import { sendRaw } from '../api/http.js';
import { basicAs, clientIn, startTrellis, type Trellis } from '../support/harness.js';
import {
  approvalsOncePaused,
  definition,
  eventually,
  noop,
  run,
  start,
} from '../support/engine-support.js';

/** The samples of a Prometheus text exposition: `name{labels}` → value. */
function samples(text: string): Map<string, number> {
  const found = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const cut = line.lastIndexOf(' ');
    found.set(line.slice(0, cut), Number(line.slice(cut + 1)));
  }
  return found;
}

async function scrape(url: string): Promise<{ text: string; samples: Map<string, number> }> {
  const response = await fetch(`${url}/metrics`);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  const text = await response.text();
  return { text, samples: samples(text) };
}

const failing = {
  name: 'Broken',
  type: { plugin: 'Data/Json' },
  parameters: { input: {}, expression: '$error("no")' },
};

let trellis: Trellis;
let off: Trellis;
beforeAll(async () => {
  [trellis, off] = await Promise.all([
    startTrellis({ worker: true, config: { Metrics: { Enabled: true } } }),
    startTrellis(),
  ]);
});
afterAll(async () => {
  await Promise.all([trellis?.stop(), off?.stop()]);
});

describe('/metrics on the API port', () => {
  it('counts requests, runs and attempts with bounded labels', async () => {
    const completed = await run(trellis, definition([{ name: 'A', type: noop }]));
    expect(completed.execution.status).toBe('Completed');
    const failed = await run(trellis, definition([failing]));
    expect(failed.execution.status).toBe('Failed');
    await trellis.admin.GET('/workflows/{workflowId}', {
      params: { path: { workflowId: completed.workflowId } },
    });
    expect((await sendRaw(trellis.baseUrl, 'GET', '/no/such/route')).status).toBe(404);

    const { text, samples: series } = await scrape(trellis.baseUrl);
    expect(
      series.get(
        'trellis_http_requests_total{operation="executeWorkflow",status="200",project="default"}',
      ),
    ).toBe(2);
    expect(
      series.get(
        'trellis_http_requests_total{operation="getWorkflow",status="200",project="default"}',
      ),
    ).toBe(1);
    expect(
      series.get('trellis_http_requests_total{operation="other",status="404",project=""}'),
    ).toBe(1);
    expect(
      series.get(
        'trellis_http_request_duration_seconds_count{operation="executeWorkflow",status="200",project="default"}',
      ),
    ).toBe(2);
    expect(
      series.get(
        'trellis_http_request_duration_seconds_bucket{le="+Inf",operation="getWorkflow",status="200",project="default"}',
      ),
    ).toBe(1);
    // Operations, never the raw paths with their ids.
    expect(text).not.toContain(completed.workflowId);
    expect(text).not.toContain('/no/such/route');

    expect(series.get('trellis_executions_started_total{project="default"}')).toBe(2);
    expect(
      series.get('trellis_executions_finished_total{status="Completed",project="default"}'),
    ).toBe(1);
    expect(series.get('trellis_executions_finished_total{status="Failed",project="default"}')).toBe(
      1,
    );
    expect(
      series.get('trellis_execution_duration_seconds_count{status="Completed",project="default"}'),
    ).toBe(1);
    expect(
      series.get(
        'trellis_task_attempts_total{plugin="Flow/NoOp",outcome="Completed",project="default"}',
      ),
    ).toBe(1);
    expect(
      series.get(
        'trellis_task_attempts_total{plugin="Data/Json",outcome="Failed",project="default"}',
      ),
    ).toBe(1);
    expect(
      series.get(
        'trellis_task_attempt_duration_seconds_count{plugin="Flow/NoOp",outcome="Completed",project="default"}',
      ),
    ).toBe(1);
    expect(series.get('trellis_event_streams_open')).toBe(0);

    // The Temporal SDK's worker metrics and Node's, in the same scrape.
    expect(text).toMatch(/^temporal_num_pollers\{.*poller_type="workflow_task".*\} \d+$/m);
    expect(text).toMatch(/^temporal_worker_task_slots_available\{/m);
    expect(series.has('process_cpu_user_seconds_total')).toBe(true);
    expect(text).toMatch(/^nodejs_eventloop_lag_seconds /m);
  });

  it("labels a project's requests, runs and attempts with its name, and no name it was not", async () => {
    await trellis.admin.POST('/projects', { body: { name: 'metered' } });
    const metered = clientIn(trellis, basicAs('admin'), 'metered');
    const { workflowId, executionId } = await start(
      metered,
      definition([{ name: 'A', type: noop }]),
    );
    expect(
      (await metered.waitForExecution(workflowId, executionId, { timeoutMs: 60_000 })).status,
    ).toBe('Completed');
    await expectFailure(
      clientIn(trellis, basicAs('admin'), 'no-such-project').GET('/workflows'),
      404,
    );

    const { text, samples: series } = await eventually(async () => {
      const scraped = await scrape(trellis.baseUrl);
      expect(
        scraped.samples.get(
          'trellis_executions_finished_total{status="Completed",project="metered"}',
        ),
      ).toBe(1);
      return scraped;
    });
    expect(
      series.get(
        'trellis_http_requests_total{operation="executeWorkflow",status="200",project="metered"}',
      ),
    ).toBe(1);
    expect(series.get('trellis_executions_started_total{project="metered"}')).toBe(1);
    expect(
      series.get(
        'trellis_task_attempts_total{plugin="Flow/NoOp",outcome="Completed",project="metered"}',
      ),
    ).toBe(1);
    expect(series.get('trellis_approvals_waiting{project="metered"}')).toBe(0);
    expect(
      series.get('trellis_http_requests_total{operation="listWorkflows",status="404",project=""}'),
    ).toBeGreaterThanOrEqual(1);
    expect(text).not.toContain('no-such-project');
  });

  it('reads the approvals waiting from the database at each scrape', async () => {
    const waitingIn = async () =>
      (await scrape(trellis.baseUrl)).samples.get('trellis_approvals_waiting{project="default"}');
    const before = await waitingIn();
    const waiting = definition([
      { name: 'Gate', type: noop, manualApproval: { enabled: true, comment: 'Go?' } },
    ]);
    const { workflowId, executionId } = await start(trellis.admin, waiting);
    const [approval] = await approvalsOncePaused(trellis.admin, workflowId, executionId);
    expect(await waitingIn()).toBe((before ?? 0) + 1);
    await trellis.admin.POST(
      '/workflows/{workflowId}/executions/{executionId}/approvals/{approvalId}/approve',
      { params: { path: { workflowId, executionId, approvalId: approval!.id } } },
    );
    const done = await trellis.admin.waitForExecution(workflowId, executionId, {
      timeoutMs: 20_000,
    });
    expect(done.status).toBe('Completed');
    expect(await waitingIn()).toBe(before ?? 0);
  });

  it('is a 404 envelope when Metrics.Enabled is off (the default)', async () => {
    await expectFailure(off.client().GET('/metrics'), 404, 'GET /metrics');
  });
});

describe('event streams', () => {
  it('are counted while open, each closed once however often it says so', async () => {
    const metrics = createMetrics({
      waitingApprovals: () => countWaitingApprovals(trellis.db),
      projectName: async () => undefined,
      logger: createLogger({ Level: 'silent' }),
    });
    const open = async () => samples((await metrics.scrape()).text);
    const first = metrics.trackEventStream();
    const second = metrics.trackEventStream();
    expect((await open()).get('trellis_event_streams_open')).toBe(2);
    first();
    first();
    expect((await open()).get('trellis_event_streams_open')).toBe(1);
    second();
    expect((await open()).get('trellis_event_streams_open')).toBe(0);
  });
});

describe('a worker-only process', () => {
  let worker: TrellisProcess;
  let running: RunningTrellis;
  beforeAll(async () => {
    const copy = structuredClone<TrellisConfig>(trellis.config);
    copy.Metrics = { Enabled: true, Host: '127.0.0.1', WorkerPort: 0 };
    worker = createTrellis(buildConfig(copy), {
      role: 'worker',
      logger: createLogger({ Level: 'silent' }),
    });
    running = await worker.start();
  });
  afterAll(async () => {
    await worker?.stop();
  });

  it('has no API but serves /livez, /readyz and /metrics on Metrics.WorkerPort', async () => {
    expect(running.apiUrl).toBeNull();
    const url = running.probesUrl!;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(url).not.toBe(`http://127.0.0.1:${running.config.Server.Port}`);

    const live = await fetch(`${url}/livez`);
    expect(live.status).toBe(200);
    expect(await live.json()).toEqual({ status: 'ok' });
    const ready = await fetch(`${url}/readyz`);
    expect(ready.status).toBe(200);
    const report = (await ready.json()) as { status: string; checks: { component: string }[] };
    expect(report.status).toBe('ok');
    expect(report.checks.map((check) => check.component)).toEqual([
      'database',
      'temporal',
      'worker',
    ]);
    expect((await fetch(`${url}/workflows`)).status).toBe(404);
    expect((await fetch(`${url}/metrics`, { method: 'POST' })).status).toBe(405);
  });

  it("counts the attempts it runs and shows the Temporal SDK's worker metrics", async () => {
    // The API process runs a worker on the same task queue too; run until this one took one.
    let attempts = 0;
    for (let round = 0; round < 20 && attempts === 0; round++) {
      await Promise.all(
        Array.from({ length: 4 }, () => run(trellis, definition([{ name: 'A', type: noop }]))),
      );
      const { samples: series } = await scrape(running.probesUrl!);
      attempts =
        series.get(
          'trellis_task_attempts_total{plugin="Flow/NoOp",outcome="Completed",project="default"}',
        ) ?? 0;
    }
    expect(attempts).toBeGreaterThan(0);
    const { text } = await scrape(running.probesUrl!);
    expect(text).toMatch(/^temporal_num_pollers\{/m);
    expect(text).toMatch(/^trellis_approvals_waiting\{project="default"\} \d+$/m);
    // No API here: no request series.
    expect(text).not.toMatch(/^trellis_http_requests_total\{/m);
  });
});
