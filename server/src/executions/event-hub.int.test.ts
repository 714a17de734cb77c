import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TrellisDatabase } from '#store/database.js';
import { executionEventsChannel } from '#store/execution-event-repository.js';
import { createLogger } from '#platform/logging.js';
import { openMigratedTestDatabase } from '../../../test/support/database.js';
import { createExecutionEventHub, type ExecutionEventHub } from './event-hub.js';

let database: TrellisDatabase & { url: string };
let hub: ExecutionEventHub;

beforeAll(async () => {
  database = await openMigratedTestDatabase();
  hub = createExecutionEventHub(database.listen, createLogger({ Level: 'silent' }));
});
afterAll(async () => {
  await hub?.close();
  await database?.close();
});

/** A read the test finishes when it likes, counting how often it was started. */
function controlledRead() {
  const started: Array<(value: string[]) => void> = [];
  const read = () => new Promise<string[]>((resolve) => started.push(resolve));
  return { read, started };
}

describe('the execution event hub', () => {
  it('shares one read among the followers of an execution, never across a notification', async () => {
    const executionId = randomUUID();
    const followers = [hub.follow(executionId), hub.follow(executionId)];
    for (const follower of followers) await follower.wait(0); // the first wait returns at once
    const { read, started } = controlledRead();

    // Two followers asking for the same events at once: one query.
    const first = hub.shared(executionId, 'after 3', read);
    const second = hub.shared(executionId, 'after 3', read);
    expect(started).toHaveLength(1);
    // Another key, or another execution, reads on its own.
    void hub.shared(executionId, 'after 4', read);
    void hub.shared(randomUUID(), 'after 3', read);
    expect(started).toHaveLength(3);

    // A notification arrives while the first read runs: it may have started before the commit
    // the notification announces, so a follower woken by it reads again.
    const woken = followers[0]!.wait(10_000);
    await sql`select pg_notify(${executionEventsChannel}, ${executionId})`.execute(database.db);
    await expect(woken).resolves.toBe(true);
    const third = hub.shared(executionId, 'after 3', read);
    expect(started).toHaveLength(4);

    started[0]!(['e4']);
    started[3]!(['e4', 'e5']);
    await expect(Promise.all([first, second, third])).resolves.toEqual([
      ['e4'],
      ['e4'],
      ['e4', 'e5'],
    ]);
    // Once a read is done, the next one is a new query.
    void hub.shared(executionId, 'after 3', read);
    expect(started).toHaveLength(5);
    for (const resolve of started.slice(1)) resolve([]);
    for (const follower of followers) follower.stop();
  });
});
