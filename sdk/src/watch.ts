import { createParser } from 'eventsource-parser';
import type { Client } from 'openapi-fetch';
import { TrellisApiError } from './errors.js';
import type { components, paths } from './generated/schema.js';

type Schemas = components['schemas'];

/**
 * The `data` of each event type. The document describes the stream as the wire carries it
 * (`ExecutionStreamEvent`: every field text, `data` JSON whose schema is its `contentSchema`);
 * these are those schemas, by `event`.
 */
interface EventData {
  execution: Schemas['ExecutionChangedData'];
  task: Schemas['TaskChangedData'];
  log: Schemas['LogEntry'];
  approval: Schemas['ApprovalChangedData'];
}

/** One event of an execution's stream, parsed: `{ id, event, data }`, `data` typed by `event`. */
export type ExecutionEvent = {
  [Type in Schemas['ExecutionStreamEvent']['event']]: {
    /** Its number within the execution (1, 2, 3...). */
    id: number;
    event: Type;
    data: EventData[Type];
  };
}[Schemas['ExecutionStreamEvent']['event']];

export interface WatchOptions {
  /** Start after this event (the `id` of the last one seen); default: from the first. */
  after?: number;
  /** Stops the watch: the iteration rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Wait before reconnecting when the connection drops (the server's `retry:` wins). Default 1 s. */
  retryMs?: number;
  /** Give up (with an `Error`) after this many reconnects in a row that brought no event. Default 10. */
  maxRetries?: number;
}

const finished = ['Completed', 'Failed', 'Canceled'];

/** Whether an event is the execution's final status: the stream ends after it. */
export function isFinalEvent(event: ExecutionEvent): boolean {
  return event.event === 'execution' && finished.includes(event.data.status);
}

/**
 * Follows an execution's event stream (`GET .../events`): every event in order, from the first
 * (or after `after`), live, until the execution's final status. A dropped connection is resumed
 * with `Last-Event-ID`, so no event is lost or repeated. Uses only `fetch` and web streams, so it
 * runs in browsers and Node alike; credentials go in headers, as for every other call.
 */
export async function* watchExecution(
  raw: Client<paths>,
  workflowId: string,
  executionId: string,
  options: WatchOptions = {},
): AsyncGenerator<ExecutionEvent, void, undefined> {
  const { signal, maxRetries = 10 } = options;
  let retryMs = options.retryMs ?? 1_000;
  let last = options.after;
  let fruitless = 0;
  for (;;) {
    if (signal?.aborted) throw abortReason(signal);
    // Ours to abort as well: a caller that stops iterating closes the connection.
    const connection = new AbortController();
    const abort = () => connection.abort(signal?.reason);
    signal?.addEventListener('abort', abort, { once: true });
    try {
      let response: Response;
      let body: ReadableStream<Uint8Array> | null | undefined;
      try {
        const answer = await raw.GET('/workflows/{workflowId}/executions/{executionId}/events', {
          params: {
            path: { workflowId, executionId },
            header: last === undefined ? {} : { 'Last-Event-ID': String(last) },
          },
          headers: { Accept: 'text/event-stream' },
          parseAs: 'stream',
          signal: connection.signal,
        });
        response = answer.response;
        if (!response.ok) {
          const error = TrellisApiError.fromResponse(response, answer.error);
          // The service may come back (503, a proxy's 502); a request it refuses will not.
          if (response.status < 500) throw error;
          throw new Retry(error);
        }
        body = answer.data as ReadableStream<Uint8Array> | undefined;
      } catch (error) {
        if (signal?.aborted || error instanceof TrellisApiError) throw error;
        throw new Retry(error);
      }
      if (!body) throw new TypeError('The event stream answered without a body');

      const parsed: ExecutionEvent[] = [];
      const parser = createParser({
        onEvent: (message) => {
          if (message.id === undefined || message.event === undefined) return;
          parsed.push({
            id: Number(message.id),
            event: message.event,
            data: JSON.parse(message.data) as unknown,
          } as ExecutionEvent);
        },
        onRetry: (ms) => (retryMs = ms),
      });
      const reader = body.getReader();
      const decoder = new TextDecoder();
      try {
        for (;;) {
          let chunk: { done: boolean; value?: Uint8Array | undefined };
          try {
            chunk = await reader.read();
          } catch (error) {
            if (signal?.aborted) throw error;
            throw new Retry(error);
          }
          if (chunk.done) break;
          parser.feed(decoder.decode(chunk.value, { stream: true }));
          for (const event of parsed.splice(0)) {
            last = event.id;
            fruitless = 0;
            yield event;
            if (isFinalEvent(event)) return;
          }
        }
      } finally {
        await reader.cancel().catch(() => undefined);
      }
      // Ended before the final status (the service stopped, a proxy cut it): resume.
      throw new Retry(new Error('The event stream ended before the execution finished'));
    } catch (error) {
      if (!(error instanceof Retry)) throw error;
      if (++fruitless > maxRetries) {
        throw new Error(
          `Lost the event stream of execution ${executionId} ${maxRetries} times in a row`,
          { cause: error.cause },
        );
      }
      await pause(retryMs, signal);
    } finally {
      signal?.removeEventListener('abort', abort);
      connection.abort();
    }
  }
}

/** A failure worth reconnecting after. */
class Retry extends Error {
  constructor(cause: unknown) {
    super('retry', { cause });
  }
}

function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortReason(signal));
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', stop);
      resolve();
    }, ms);
    const stop = () => {
      clearTimeout(timer);
      reject(abortReason(signal!));
    };
    signal?.addEventListener('abort', stop, { once: true });
  });
}

/** Why a signal aborted, as an Error (an `AbortError` DOMException unless the caller gave one). */
export function abortReason(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason : new DOMException(String(reason), 'AbortError');
}
