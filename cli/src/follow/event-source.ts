/**
 * A run's events: the server's event stream (`GET .../events`) through the SDK's
 * `watchExecution`, which resumes after a dropped connection without losing or repeating one.
 * The one source of events in the CLI.
 */
import type { TrellisClient } from '@trellis/sdk';
import type { RunEvent } from './events.js';

export interface EventOptions {
  /** Also yield `log` events (the execution's own entries and its tasks'). Default false. */
  logs?: boolean;
  /** Stops following (the iterator rejects with the signal's reason). */
  signal?: AbortSignal;
}

/** The events of one execution, from its first, until (and including) the one that ends it. */
export async function* executionEvents(
  client: TrellisClient,
  workflowId: string,
  executionId: string,
  options: EventOptions = {},
): AsyncGenerator<RunEvent, void, undefined> {
  const { logs = false, signal } = options;
  const stream = client.watchExecution(workflowId, executionId, signal ? { signal } : {});
  for await (const event of stream) {
    if (event.event === 'log' && !logs) continue;
    yield event;
  }
}
