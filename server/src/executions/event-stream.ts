import type { ServerResponse } from 'node:http';
import type { Kysely } from 'kysely';
import {
  hasEnded,
  isTerminal,
  readEvents,
  type ExecutionEvent,
} from '#store/execution-event-repository.js';
import type { Database } from '#store/tables.js';
import type { Logger } from '#platform/logging.js';
import type { ExecutionEventHub } from './event-hub.js';

/** Events read (and so held in memory) at a time; a stream further behind reads page after page. */
const pageSize = 100;

/** How long a client waits before reconnecting after the connection drops (the SSE `retry:`). */
const retryMs = 1_000;

export interface EventStreamOptions {
  db: Kysely<Database>;
  hub: ExecutionEventHub;
  executionId: string;
  /** The execution is a dry run: its `execution` events say so (`dryRun`), as its detail does. */
  dryRun: boolean;
  /** Send the events after this one (0: all). */
  after: number;
  heartbeatMs: number;
  pollIntervalMs: number;
  log: Logger;
}

/** One event as a Server-Sent Events message (JSON never holds a raw line break). */
export function eventFrame(event: ExecutionEvent): string {
  return `id: ${event.id}\nevent: ${event.type}\ndata: ${JSON.stringify(event.data)}\n\n`;
}

/** An `execution` event with the execution's `dryRun`, which the stored event does not hold. */
function withDryRun(event: ExecutionEvent, dryRun: boolean): ExecutionEvent {
  return event.type === 'execution' ? { ...event, data: { ...event.data, dryRun } } : event;
}

/**
 * Streams an execution's events to `res` as Server-Sent Events: those after `after`, page by page,
 * then each new one as the hub says there may be some (or every poll interval), until the
 * execution's terminal event, which ends the response. The next write waits while the socket
 * is full, so a slow client holds at most one page here; a client that goes away ends
 * everything (the follower, the timers) at once.
 */
export async function streamExecutionEvents(res: ServerResponse, options: EventStreamOptions) {
  const { db, executionId, log } = options;
  const gone = new AbortController();
  res.once('close', () => gone.abort());
  const follower = options.hub.follow(executionId, gone.signal);

  res.writeHead(200, {
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-store, no-transform',
    Connection: 'keep-alive',
    // Reverse proxies (nginx) would otherwise hold events back in their buffers.
    'X-Accel-Buffering': 'no',
  });
  let lastWrite = Date.now();
  const write = async (text: string) => {
    lastWrite = Date.now();
    if (res.write(text) || follower.ended) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        res.off('drain', done);
        follower.signal.removeEventListener('abort', done);
        resolve();
      };
      res.on('drain', done);
      follower.signal.addEventListener('abort', done, { once: true });
      if (follower.ended) done();
    });
  };
  const heartbeat = setInterval(
    () => {
      // A client that is not reading gets nothing more to hold.
      if (Date.now() - lastWrite >= options.heartbeatMs && !res.writableNeedDrain) {
        res.write(': heartbeat\n\n');
        lastWrite = Date.now();
      }
    },
    Math.max(50, Math.floor(options.heartbeatMs / 2)),
  );

  let cursor = options.after;
  /** Sends every event after the cursor; `done` once the final one went out or the client left. */
  const sendNew = async (): Promise<{ sent: number; done: boolean }> => {
    let sent = 0;
    for (;;) {
      const after = cursor;
      const events = await options.hub.shared(executionId, `${after}`, () =>
        readEvents(db, executionId, after, pageSize),
      );
      for (const event of events) {
        if (follower.ended) return { sent, done: true };
        await write(eventFrame(withDryRun(event, options.dryRun)));
        cursor = event.id;
        sent++;
        if (isTerminal(event)) return { sent, done: true };
      }
      if (events.length < pageSize) return { sent, done: false };
    }
  };
  try {
    await write(`retry: ${retryMs}\n: events of execution ${executionId}\n\n`);
    while (await follower.wait(options.pollIntervalMs)) {
      const { sent, done } = await sendNew();
      if (done) return;
      // Nothing after the cursor, and the run is over: the client resumed at or past its final
      // event, and nothing will ever come. Without this the response would never end. The run
      // may also have ended between the read and this check: its last events commit with its
      // end, so they are visible now, and go out before the response ends.
      if (sent === 0 && (await hasEnded(db, executionId))) {
        const last = await sendNew();
        if (last.done || last.sent === 0) return;
      }
    }
  } catch (error) {
    // The client reconnects with its Last-Event-ID and gets the rest.
    log.warn({ err: error, executionId, after: cursor }, 'execution event stream failed');
  } finally {
    clearInterval(heartbeat);
    follower.stop();
    // A client that stopped reading would keep its connection (and the server's close) waiting.
    if (res.writableNeedDrain) res.destroy();
    else if (!res.writableEnded) res.end();
  }
}
