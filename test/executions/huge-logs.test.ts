import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '#store/ids.js';
import { startTrellis, users, type Trellis } from '../support/harness.js';
import { definition, run } from '../support/engine-support.js';

let trellis: Trellis;

beforeAll(async () => {
  trellis = await startTrellis({ worker: true });
});
afterAll(async () => {
  await trellis?.stop();
});

const authorization = `Basic ${Buffer.from(`${users.admin.username}:${users.admin.password}`).toString('base64')}`;

/** A GET through plain fetch: its status and the body's size in bytes, with the parsed body. */
async function get(path: string) {
  const response = await fetch(`${trellis.baseUrl}${path}`, { headers: { authorization } });
  const body = Buffer.from(await response.arrayBuffer());
  return {
    status: response.status,
    bytes: body.length,
    json: JSON.parse(body.toString()) as { data: { id: string; message: string }[] } & Record<
      string,
      unknown
    >,
  };
}

const MiB = 1024 * 1024;

describe('huge log entries', () => {
  it('are capped when written, and a read of the logs stays small while /version answers', async () => {
    const big = "$[Outputs('Big').result]";
    const logs = ['A', 'B', 'C', 'D'].map((name) => ({
      name,
      type: { plugin: 'Flow/Log' },
      dependencies: ['Big'],
      parameters: { message: `${name}: ${big.repeat(8)}` },
    }));
    const { workflowId, executionId } = await run(
      trellis,
      definition([
        {
          name: 'Big',
          type: { plugin: 'Data/Json' },
          parameters: { expression: '$pad("", 1900000, "z")' },
        },
        ...logs,
      ]),
      120_000,
    );
    // (Flow/Log then fails on returning its 15 MB message as output, past Plugins.MaxOutputBytes:
    // its log entry is written first.)
    const tasks = await trellis.admin.GET(
      '/workflows/{workflowId}/executions/{executionId}/tasks',
      {
        params: { path: { workflowId, executionId } },
      },
    );

    // Stored: each message of 15 MB was cut to the cap, saying how much went.
    const stored = await trellis.db
      .selectFrom('logEntry')
      .select(['taskExecutionId', 'message', sql<number>`octet_length(message)`.as('bytes')])
      .where('executionId', '=', executionId)
      .execute();
    for (const row of stored) expect(row.bytes).toBeLessThanOrEqual(65_536);
    const cut = stored.filter((row) => row.message.includes('… [truncated 14.4 MiB]'));
    const namesOf = (rows: { taskExecutionId: string | null }[]) =>
      new Set(rows.map((row) => tasks.find((task) => task.id === row.taskExecutionId)?.name));
    expect(namesOf(cut)).toEqual(new Set(['A', 'B', 'C', 'D']));

    const executionLogs = `/workflows/${workflowId}/executions/${executionId}/logs`;
    const [timeline, version] = await Promise.all([
      get(`${executionLogs}?includeTasks=true`),
      fetch(`${trellis.baseUrl}/version`),
    ]);
    expect(version.status).toBe(200);
    expect(timeline.status).toBe(200);
    expect(timeline.bytes).toBeLessThan(MiB);
    const messages = timeline.json.data.map((entry) => entry.message);
    expect(messages.filter((message) => message.includes('… [truncated'))).toHaveLength(cut.length);

    const taskA = tasks.find((task) => task.name === 'A')!;
    const taskLogs = await get(`${executionLogs.replace('/logs', '')}/tasks/${taskA.id}/logs`);
    expect(taskLogs.status).toBe(200);
    expect(taskLogs.bytes).toBeLessThan(256 * 1024);
    expect(taskLogs.json.data.some((entry) => entry.message.startsWith('A: zzz'))).toBe(true);
  }, 180_000);

  it('a page of entries stored before the cap holds about 4 MiB, and the cursor reads on', async () => {
    const { workflowId, executionId } = await run(
      trellis,
      definition([{ name: 'Hello', type: { plugin: 'Flow/Log' }, parameters: { message: 'hi' } }]),
    );
    // Entries as an earlier version stored them, uncapped (raw SQL: the cap rewrites Kysely's
    // inserts only).
    const huge = [newId(), newId(), newId()];
    for (const [index, id] of huge.entries()) {
      await sql`insert into log_entry (id, execution_id, task_execution_id, dedupe_key, level, message, time_stamp)
                values (${id}, ${executionId}, null, ${`old-${index}`}, 'Info', repeat('y', 5 * 1024 * 1024), now())`.execute(
        trellis.db,
      );
    }
    const executionLogs = `/workflows/${workflowId}/executions/${executionId}/logs`;

    // Everything at once: the list ends after the first huge entry.
    const all = await get(executionLogs);
    expect(all.status).toBe(200);
    expect(all.bytes).toBeLessThan(6 * MiB);
    expect(all.json.data.at(-1)!.id).toBe(huge[0]);

    // The cursor goes on from there, one huge entry a page, to the end.
    const seen: string[] = [];
    let after = huge[0]!;
    for (;;) {
      const page = await get(`${executionLogs}?after=${after}&pageSize=100`);
      expect(page.status).toBe(200);
      expect(page.bytes).toBeLessThan(6 * MiB);
      if (page.json.data.length === 0) break;
      seen.push(...page.json.data.map((entry) => entry.id));
      after = page.json.data.at(-1)!.id;
    }
    expect(seen.filter((id) => huge.includes(id))).toEqual(huge.slice(1));

    // A numbered page is cut the same way; its pagination still counts every entry.
    const numbered = await get(`${executionLogs}?includeTasks=true&page=1&pageSize=100`);
    expect(numbered.status).toBe(200);
    expect(numbered.bytes).toBeLessThan(6 * MiB);
    expect(numbered.json.data.at(-1)!.id).toBe(huge[0]);
    expect(numbered.json.pagination).toMatchObject({ page: 1, pageSize: 100 });
    expect((numbered.json.pagination as { totalCount: number }).totalCount).toBeGreaterThan(
      numbered.json.data.length,
    );
  }, 120_000);
});
