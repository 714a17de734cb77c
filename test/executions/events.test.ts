/**
 * The execution event stream end to end: real API processes, worker, Temporal and PostgreSQL,
 * read over plain HTTP (the wire format) and through the SDK.
 */
import http from 'node:http';
import { sql } from 'kysely';
import { createParser } from 'eventsource-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendLogs } from '#store/log-repository.js';
import { basicAuthorization, type ExecutionEvent } from '../../sdk/src/index.js';
import { expectFailure } from '../api/api-error.js';
import { expectRawFailure, sendRaw } from '../api/http.js';
import { basicAs, mintToken, startTrellis, users, type Trellis } from '../support/harness.js';
import {
  addWorkflow,
  approvalsOncePaused,
  decideApproval,
  definition,
  delay,
  execute,
  noop,
  run,
  start,
} from '../support/engine-support.js';

let trellis: Trellis;

beforeAll(async () => {
  trellis = await startTrellis({
    worker: true,
    config: { Server: { Events: { HeartbeatMilliseconds: 200 } } },
  });
});
afterAll(async () => {
  await trellis?.stop();
});

const say = (name: string, message: string, extra: Record<string, unknown> = {}) => ({
  name,
  type: { plugin: 'Flow/Log' },
  parameters: { message },
  ...extra,
});

const eventsPath = (workflowId: string, executionId: string) =>
  `/workflows/${workflowId}/executions/${executionId}/events`;

/** An event stream read over plain HTTP, as curl would: the bytes, and the events in them. */
interface RawStream {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** Everything received so far. */
  text(): string;
  events(): ExecutionEvent[];
  comments(): string[];
  /** Resolves when the server has ended the response. */
  ended: Promise<void>;
  pause(): void;
  resume(): void;
  close(): void;
}

function openStream(
  baseUrl: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<RawStream> {
  return new Promise((resolve, reject) => {
    const request = http.get(
      `${baseUrl}${path}`,
      {
        headers: {
          authorization: basicAuthorization(users.admin.username, users.admin.password),
          accept: 'text/event-stream',
          ...headers,
        },
      },
      (response) => {
        let text = '';
        const events: ExecutionEvent[] = [];
        const comments: string[] = [];
        const parser = createParser({
          onEvent: (message) =>
            events.push({
              id: Number(message.id),
              event: message.event,
              data: JSON.parse(message.data) as unknown,
            } as ExecutionEvent),
          onComment: (comment) => comments.push(comment),
        });
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          text += chunk;
          parser.feed(chunk);
        });
        const ended = new Promise<void>((done) => response.once('close', () => done()));
        resolve({
          status: response.statusCode ?? 0,
          headers: response.headers,
          text: () => text,
          events: () => events,
          comments: () => comments,
          ended,
          pause: () => response.pause(),
          resume: () => response.resume(),
          close: () => request.destroy(),
        });
      },
    );
    request.once('error', reject);
  });
}

/** Polls until `check` holds. */
async function until(check: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const describeEvent = (event: ExecutionEvent) => {
  switch (event.event) {
    case 'execution':
      return `execution ${event.data.status}`;
    case 'task':
      return `task ${event.data.name} ${event.data.status}`;
    case 'approval':
      return `approval ${event.data.taskName} ${event.data.status}`;
    case 'log':
      return `log ${event.data.message}`;
  }
};

const ids = (events: ExecutionEvent[]) => events.map((event) => event.id);
const oneTo = (count: number) => Array.from({ length: count }, (_, index) => index + 1);

describe('the execution event stream', () => {
  it('shows a late subscriber the whole run in order, ending after the final status', async () => {
    const { workflowId, executionId } = await run(
      trellis,
      definition([
        { name: 'First', ...delay(600) },
        say('Second', 'two', { dependencies: ['First'] }),
      ]),
    );
    const stream = await openStream(trellis.baseUrl, eventsPath(workflowId, executionId));
    await stream.ended;
    const events = stream.events();
    expect(ids(events)).toEqual(oneTo(events.length));
    const described = events.map(describeEvent);
    // An execution is recorded Running as it starts.
    expect(described[0]).toBe('execution Running');
    expect(described.at(-1)).toBe('execution Completed');
    expect(described.filter((line) => line.startsWith('execution'))).toEqual([
      'execution Running',
      'execution Completed',
    ]);
    expect(described.filter((line) => line.startsWith('task First'))).toEqual([
      'task First Pending',
      'task First Running',
      'task First Completed',
    ]);
    // A quick plugin's attempt is recorded once it is over (only a slower one is shown Running).
    expect(described.filter((line) => line.startsWith('task Second'))).toEqual([
      'task Second Pending',
      'task Second Completed',
    ]);
    expect(described.indexOf('task First Completed')).toBeLessThan(
      described.indexOf('task Second Completed'),
    );

    // The log events are the execution's timeline, the same entries the log list shows.
    const timeline = await trellis.admin.GET(
      '/workflows/{workflowId}/executions/{executionId}/logs',
      { params: { path: { workflowId, executionId }, query: { includeTasks: true } } },
    );
    const logged = events.flatMap((event) => (event.event === 'log' ? [event.data] : []));
    expect(logged).toEqual(timeline);
    expect(logged.map((entry) => entry.message)).toContain('two');
    const tasks = await trellis.admin.GET(
      '/workflows/{workflowId}/executions/{executionId}/tasks',
      {
        params: { path: { workflowId, executionId } },
      },
    );
    const second = tasks.find((task) => task.name === 'Second')!;
    expect(logged.find((entry) => entry.message === 'two')?.taskExecutionId).toBe(second.id);

    // A task's events carry its own start and end, the times its detail shows (First is seen
    // Running only a while after it started: the event's `at` is when it was recorded).
    for (const task of tasks) {
      const last = events
        .filter((event) => event.event === 'task' && event.data.name === task.name)
        .at(-1);
      expect(last?.event === 'task' && last.data, task.name).toMatchObject({
        startedAt: task.startTime,
        endedAt: task.endTime,
      });
    }
    const firstRunning = events.find(
      (event) =>
        event.event === 'task' && event.data.name === 'First' && event.data.status === 'Running',
    );
    expect(firstRunning?.event === 'task' && firstRunning.data.startedAt).toBe(
      tasks.find((task) => task.name === 'First')!.startTime,
    );
  });

  it('resumes a subscriber that disconnects mid-run from Last-Event-ID: nothing lost, nothing repeated', async () => {
    const { workflowId, executionId } = await start(
      trellis.admin,
      definition([
        { name: 'Wait1', ...delay(400) },
        { name: 'Wait2', ...delay(400), dependencies: ['Wait1'] },
        { name: 'Wait3', ...delay(400), dependencies: ['Wait2'] },
      ]),
    );
    const path = eventsPath(workflowId, executionId);
    const first = await openStream(trellis.baseUrl, path);
    await until(() =>
      first.events().some((event) => describeEvent(event) === 'task Wait1 Running'),
    );
    first.close();
    const before = first.events();
    const resumedAfter = before.at(-1)!.id;

    // The header, as EventSource sends it when it reconnects...
    const second = await openStream(trellis.baseUrl, path, {
      'Last-Event-ID': String(resumedAfter),
    });
    await until(() =>
      second.events().some((event) => describeEvent(event) === 'task Wait2 Running'),
    );
    second.close();
    const middle = second.events();
    // ...or the query parameter, for a client that cannot set headers.
    const third = await openStream(trellis.baseUrl, `${path}?lastEventId=${middle.at(-1)!.id}`);
    await third.ended;

    const resumed = [...before, ...middle, ...third.events()];
    expect(ids(resumed)).toEqual(oneTo(resumed.length));
    expect(describeEvent(resumed.at(-1)!)).toBe('execution Completed');
    const whole = await openStream(trellis.baseUrl, path);
    await whole.ended;
    expect(whole.events()).toEqual(resumed);
  });

  it('ends at once for a client resuming at or past the final event of a finished run, and when the run ends for one resuming past its last event', async () => {
    const { workflowId, executionId } = await run(
      trellis,
      definition([{ name: 'Only', type: noop }]),
    );
    const path = eventsPath(workflowId, executionId);
    const whole = await openStream(trellis.baseUrl, path);
    await whole.ended;
    const last = whole.events().at(-1)!.id;
    for (const resume of [
      { 'Last-Event-ID': String(last) },
      { 'Last-Event-ID': String(last + 1_000) },
    ]) {
      const resumed = await openStream(trellis.baseUrl, path, resume);
      await resumed.ended;
      expect(resumed.status).toBe(200);
      expect(resumed.events()).toEqual([]);
    }
    const past = await openStream(trellis.baseUrl, `${path}?lastEventId=999999999`);
    await past.ended;
    expect(past.events()).toEqual([]);

    const running = await start(trellis.admin, definition([{ name: 'Wait', ...delay(500) }]));
    const ahead = await openStream(
      trellis.baseUrl,
      eventsPath(running.workflowId, running.executionId),
      { 'Last-Event-ID': '999999999' },
    );
    await ahead.ended;
    expect(ahead.events()).toEqual([]);
    const execution = await trellis.admin.GET('/workflows/{workflowId}/executions/{executionId}', {
      params: { path: running },
    });
    expect(execution.status).toBe('Completed');
  });

  it('is followed live by a second API process, woken by PostgreSQL notifications', async () => {
    // No worker, and a poll interval longer than the test: only a notification can wake it.
    const second = await startTrellis({
      databaseUrl: trellis.databaseUrl!,
      config: {
        Temporal: { TaskQueue: trellis.config.Temporal.TaskQueue },
        Server: { Events: { PollIntervalMilliseconds: 600_000 } },
      },
    });
    try {
      const { workflowId, executionId } = await start(
        trellis.admin,
        definition([
          { name: 'Wait', ...delay(1000) },
          say('After', 'done', { dependencies: ['Wait'] }),
        ]),
      );
      const began = Date.now();
      const stream = await openStream(second.baseUrl, eventsPath(workflowId, executionId));
      await stream.ended;
      expect(Date.now() - began).toBeLessThan(30_000);
      const events = stream.events();
      expect(ids(events)).toEqual(oneTo(events.length));
      expect(events.map(describeEvent)).toEqual(
        expect.arrayContaining(['task Wait Running', 'log done', 'execution Completed']),
      );

      // Start and wait through the second API: answered when the first API's worker finishes.
      const answer = await second.admin.POST('/workflows/{workflowId}/executions', {
        params: { path: { workflowId }, query: { waitSeconds: 30 } },
        body: { workflowId },
      });
      expect(answer.status).toBe('Completed');

      // One listening connection per API process, however many streams it serves.
      const streams = await Promise.all(
        [1, 2, 3].map(async () => {
          const paused = await start(
            trellis.admin,
            definition([say('Ask', 'ok', { manualApproval: { enabled: true } })]),
          );
          const opened = await openStream(
            second.baseUrl,
            eventsPath(paused.workflowId, paused.executionId),
          );
          expect(opened.status).toBe(200);
          return opened;
        }),
      );
      const listeners = await sql<{ count: string }>`
        select count(*) from pg_stat_activity
        where datname = current_database() and query = 'listen trellis_execution_events'`.execute(
        trellis.db,
      );
      expect(Number(listeners.rows[0]!.count)).toBe(2);
      for (const stream of streams) stream.close();
    } finally {
      await second.stop();
    }
  });

  it('is text/event-stream with id:, event: and data: lines, and heartbeat comments while idle', async () => {
    const workflowId = await addWorkflow(
      trellis.admin,
      definition([say('Ask', 'approved', { manualApproval: { enabled: true, comment: 'ok?' } })]),
    );
    const executionId = await execute(trellis.admin, workflowId);
    const stream = await openStream(trellis.baseUrl, eventsPath(workflowId, executionId));
    expect(stream.status).toBe(200);
    expect(stream.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(stream.headers['cache-control']).toBe('no-store, no-transform');
    expect(stream.headers['x-content-type-options']).toBe('nosniff');

    const [approval] = await approvalsOncePaused(trellis.admin, workflowId, executionId);
    // Paused: nothing happens, so the stream says it is alive (Server.Events.HeartbeatMilliseconds).
    await until(() => stream.comments().includes('heartbeat'));
    await decideApproval(trellis.admin, workflowId, executionId, approval!.id, 'approve');
    await stream.ended;

    const text = stream.text();
    expect(text.startsWith('retry: 1000\n')).toBe(true);
    expect(text).toMatch(/\n: heartbeat\n\n/);
    const messages = text.split('\n\n').filter((block) => block.startsWith('id: '));
    expect(messages.length).toBe(stream.events().length);
    messages.forEach((block, index) => {
      expect(block).toMatch(
        new RegExp(`^id: ${index + 1}\\nevent: (execution|task|log|approval)\\ndata: \\{.*\\}$`),
      );
    });
    expect(messages[0]).toMatch(
      /^id: 1\nevent: execution\ndata: \{"status":"Running","message":"","at":"\d{4}-\d\d-\d\dT[\d:.]+Z","dryRun":false\}$/,
    );
    expect(stream.events().map(describeEvent)).toEqual(
      expect.arrayContaining([
        'approval Ask Pending',
        'approval Ask Approved',
        'task Ask WaitingForApproval',
      ]),
    );
    const decided = stream
      .events()
      .find((event) => event.event === 'approval' && event.data.status === 'Approved');
    expect(decided?.data).toMatchObject({ id: approval!.id, decidedBy: users.admin.username });
  });

  it('gives a client that stops reading every event once it reads again', async () => {
    const { workflowId, executionId } = await start(
      trellis.admin,
      definition([say('Ask', 'go', { manualApproval: { enabled: true } })]),
    );
    const [approval] = await approvalsOncePaused(trellis.admin, workflowId, executionId);
    // A long history: 3,000 entries of 2 KiB, far more than a socket holds.
    const entries = Array.from({ length: 3000 }, (_, index) => ({
      executionId,
      taskExecutionId: null,
      dedupeKey: `bulk:${index}`,
      level: 'Info' as const,
      message: `${index} ${'x'.repeat(2048)}`,
      timeStamp: new Date(),
    }));
    await appendLogs(trellis.db, entries);
    const stream = await openStream(trellis.baseUrl, eventsPath(workflowId, executionId));
    stream.pause();
    await decideApproval(trellis.admin, workflowId, executionId, approval!.id, 'approve');
    await new Promise((resolve) => setTimeout(resolve, 500));
    stream.resume();
    await stream.ended;
    const events = stream.events();
    expect(ids(events)).toEqual(oneTo(events.length));
    const bulk = events.flatMap((event) =>
      event.event === 'log' && event.data.message.endsWith('x') ? [event.data.message] : [],
    );
    expect(bulk).toEqual(entries.map((entry) => entry.message));
    expect(describeEvent(events.at(-1)!)).toBe('execution Completed');
  });

  it('refuses before streaming: unknown ids 404, bad resume points 400, no credentials 401, wrong role 403', async () => {
    const { workflowId, executionId } = await run(trellis, definition([{ name: 'A', type: noop }]));
    const unknown = crypto.randomUUID();
    const events = '/workflows/{workflowId}/executions/{executionId}/events' as const;
    const path = { workflowId, executionId };
    const error = await expectFailure(
      trellis.admin.GET(events, { params: { path: { workflowId, executionId: unknown } } }),
      404,
    );
    expect(error.codes).toContain('execution.not_found');
    await expectFailure(
      trellis.admin.GET(events, { params: { path: { workflowId: unknown, executionId } } }),
      404,
    );
    await expectRawFailure(sendRaw(trellis.baseUrl, 'GET', eventsPath(workflowId, 'nope')), 400);
    await expectFailure(
      trellis.admin.GET(events, { params: { path, header: { 'Last-Event-ID': 'abc' } } }),
      400,
      /Last-Event-ID/i,
    );
    await expectRawFailure(
      sendRaw(trellis.baseUrl, 'GET', `${eventsPath(workflowId, executionId)}?lastEventId=-1`),
      400,
    );
    await expectRawFailure(
      sendRaw(trellis.baseUrl, 'GET', eventsPath(workflowId, executionId), { as: null }),
      401,
    );
    await expectFailure(trellis.client(basicAs('plugins')).GET(events, { params: { path } }), 403);

    // The workflow role, with a Bearer token, reads it; past the end there is nothing to send
    // but the stream still ends, the run being over.
    const token = await mintToken({ roles: ['workflow'] });
    const stream = await openStream(trellis.baseUrl, eventsPath(workflowId, executionId), {
      authorization: `Bearer ${token}`,
      'Last-Event-ID': '3',
    });
    await stream.ended;
    expect(stream.status).toBe(200);
    expect(stream.events()[0]?.id).toBe(4);
    expect(describeEvent(stream.events().at(-1)!)).toBe('execution Completed');
  });
});

describe('open streams', () => {
  /** A run paused on an approval: its streams stay open until their clients close them. */
  const pausedRun = () =>
    start(trellis.admin, definition([say('Ask', 'ok', { manualApproval: { enabled: true } })]));

  const openAs = (baseUrl: string, path: string, user: 'admin' | 'workflow', count: number) =>
    Promise.all(
      Array.from({ length: count }, () =>
        openStream(baseUrl, path, {
          authorization: basicAuthorization(users[user].username, users[user].password),
        }),
      ),
    );

  /** A stream refused with 429: `Retry-After` and the error envelope, and nothing streamed. */
  async function expectRefused(stream: RawStream, message: RegExp) {
    if (stream.status !== 429) stream.close();
    expect(stream.status).toBe(429);
    await stream.ended;
    expect(Number(stream.headers['retry-after'])).toBeGreaterThan(0);
    expect(JSON.parse(stream.text())).toMatchObject({
      data: null,
      succeeded: false,
      errors: [{ code: 'events.too_many_streams', message: expect.stringMatching(message) }],
    });
  }

  async function expectVersionAnswers(baseUrl: string) {
    const began = Date.now();
    const version = await fetch(`${baseUrl}/version`);
    expect(version.status).toBe(200);
    await version.arrayBuffer();
    expect(Date.now() - began).toBeLessThan(2_000);
  }

  it('caps the streams of one user (Server.Events.MaxStreamsPerUser) and of the process (MaxStreams) with 429, and frees a slot as a stream closes', async () => {
    const capped = await startTrellis({
      databaseUrl: trellis.databaseUrl!,
      config: {
        Temporal: { TaskQueue: trellis.config.Temporal.TaskQueue },
        Server: { Events: { MaxStreamsPerUser: 5, MaxStreams: 8 } },
      },
    });
    const opened: RawStream[] = [];
    try {
      const { workflowId, executionId } = await pausedRun();
      const path = eventsPath(workflowId, executionId);
      const admins = await openAs(capped.baseUrl, path, 'admin', 5);
      opened.push(...admins);
      expect(admins.map((stream) => stream.status)).toEqual([200, 200, 200, 200, 200]);
      const [extra] = await openAs(capped.baseUrl, path, 'admin', 1);
      await expectRefused(extra!, /User "admin" has 5 event streams open.*MaxStreamsPerUser/);

      // Another user still gets streams, up to the process' cap; the API answers meanwhile.
      const others = await openAs(capped.baseUrl, path, 'workflow', 3);
      opened.push(...others);
      expect(others.map((stream) => stream.status)).toEqual([200, 200, 200]);
      const [pastProcess] = await openAs(capped.baseUrl, path, 'workflow', 1);
      await expectRefused(pastProcess!, /8 event streams open.*Server\.Events\.MaxStreams\b/);
      await expectVersionAnswers(capped.baseUrl);

      // A stream its client closes frees its slot (as soon as the server sees the close).
      admins[0]!.close();
      let again: RawStream | undefined;
      for (let attempt = 0; attempt < 50; attempt++) {
        [again] = await openAs(capped.baseUrl, path, 'admin', 1);
        if (again!.status === 200) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(again?.status).toBe(200);
      opened.push(again!);
    } finally {
      for (const stream of opened) stream.close();
      await capped.stop();
    }
  });

  it('refuses the 101st stream of a user at the default cap, while the API answers', async () => {
    expect(trellis.config.Server.Events.MaxStreamsPerUser).toBe(100);
    const { workflowId, executionId } = await pausedRun();
    const path = eventsPath(workflowId, executionId);
    const streams = await openAs(trellis.baseUrl, path, 'admin', 100);
    try {
      expect(streams.filter((stream) => stream.status === 200)).toHaveLength(100);
      const [extra] = await openAs(trellis.baseUrl, path, 'admin', 1);
      await expectRefused(extra!, /has 100 event streams open/);
      await expectVersionAnswers(trellis.baseUrl);
      const [other] = await openAs(trellis.baseUrl, path, 'workflow', 1);
      expect(other!.status).toBe(200);
      other!.close();
    } finally {
      for (const stream of streams) stream.close();
    }
  });
});

describe('log timelines and cursors', () => {
  it('lists the execution with its tasks in one timeline, and pages it by cursor', async () => {
    const { workflowId, executionId } = await run(
      trellis,
      definition([say('A', 'from A'), say('B', 'from B', { dependencies: ['A'] })]),
    );
    const logs = '/workflows/{workflowId}/executions/{executionId}/logs' as const;
    const path = { workflowId, executionId };
    const own = await trellis.admin.GET(logs, { params: { path } });
    const timeline = await trellis.admin.GET(logs, {
      params: { path, query: { includeTasks: true } },
    });
    expect(own.every((entry) => entry.taskExecutionId === null)).toBe(true);
    expect(timeline.length).toBeGreaterThan(own.length);
    expect(timeline.filter((entry) => entry.taskExecutionId === null)).toEqual(own);
    const messages = timeline.map((entry) => entry.message);
    expect(messages.indexOf('from A')).toBeLessThan(messages.indexOf('from B'));

    // Two at a time, each page after the last entry of the one before: the whole timeline.
    const paged: typeof timeline = [];
    for (;;) {
      const after = paged.at(-1)?.id;
      const envelope = await trellis.admin.envelope.GET(logs, {
        params: { path, query: { includeTasks: true, pageSize: 2, ...(after ? { after } : {}) } },
      });
      if (after) expect(envelope).not.toHaveProperty('pagination');
      paged.push(...envelope.data);
      if (envelope.data.length < 2) break;
    }
    expect(paged).toEqual(timeline);

    // A task's log by cursor too; offset pages as before.
    const tasks = await trellis.admin.GET(
      '/workflows/{workflowId}/executions/{executionId}/tasks',
      {
        params: { path },
      },
    );
    const taskPath = { ...path, taskExecutionId: tasks[0]!.id };
    const taskLogs =
      '/workflows/{workflowId}/executions/{executionId}/tasks/{taskExecutionId}/logs' as const;
    const whole = await trellis.admin.GET(taskLogs, { params: { path: taskPath } });
    const rest = await trellis.admin.GET(taskLogs, {
      params: { path: taskPath, query: { after: whole[0]!.id } },
    });
    expect(rest).toEqual(whole.slice(1));
    const page = await trellis.admin.page(logs, {
      params: { path, query: { page: 2, pageSize: 1 } },
    });
    expect(page.data).toEqual(own.slice(1, 2));
    expect(page.pagination).toMatchObject({ page: 2, pageSize: 1, totalCount: own.length });

    await expectFailure(
      trellis.admin.GET(logs, { params: { path, query: { after: crypto.randomUUID() } } }),
      400,
      /query\.after/,
    );
    await expectFailure(
      trellis.admin.GET(logs, { params: { path, query: { after: whole[0]!.id } } }),
      400,
      /query\.after/,
    );
    await expectFailure(
      trellis.admin.GET(logs, { params: { path, query: { after: own[0]!.id, page: 1 } } }),
      400,
      /cannot be combined with page/,
    );
  });
});

describe('the SDK', () => {
  it('watches an execution as typed events until its final status, and waits with it', async () => {
    const { workflowId, executionId } = await start(
      trellis.admin,
      definition([
        { name: 'Wait', ...delay(300) },
        say('Ask', 'approved', { dependencies: ['Wait'], manualApproval: { enabled: true } }),
      ]),
    );
    const paused = await trellis.admin.waitForExecution(workflowId, executionId, {
      until: ['Paused'],
      timeoutMs: 30_000,
    });
    expect(paused.status).toBe('Paused');

    const seen: ExecutionEvent[] = [];
    const watching = (async () => {
      for await (const event of trellis.admin.watchExecution(workflowId, executionId)) {
        seen.push(event);
        if (event.event === 'approval' && event.data.status === 'Pending') {
          await decideApproval(trellis.admin, workflowId, executionId, event.data.id, 'approve');
        }
      }
    })();
    await watching;
    expect(ids(seen)).toEqual(oneTo(seen.length));
    expect(describeEvent(seen.at(-1)!)).toBe('execution Completed');
    const done = await trellis.admin.waitForExecution(workflowId, executionId, {
      timeoutMs: 5_000,
    });
    expect(done.status).toBe('Completed');

    // Resuming after an event, and stopping early, with `break` or a signal.
    const resumed = trellis.admin.watchExecution(workflowId, executionId, { after: 2 });
    expect((await resumed.next()).value).toMatchObject({ id: 3 });
    await resumed.return();
    const stop = new AbortController();
    const waiting = await start(
      trellis.admin,
      definition([say('Ask', 'x', { manualApproval: { enabled: true } })]),
    );
    const stopped = (async () => {
      for await (const event of trellis.admin.watchExecution(
        waiting.workflowId,
        waiting.executionId,
        {
          signal: stop.signal,
        },
      )) {
        if (event.event === 'approval') stop.abort(new Error('seen enough'));
      }
    })();
    await expect(stopped).rejects.toThrow('seen enough');
    await expectFailure(
      trellis.admin.waitForExecution(workflowId, crypto.randomUUID(), { timeoutMs: 5_000 }),
      404,
    );
  });
});
