import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Migrator, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildConfig } from '#platform/config/load.js';
import { createLogger } from '#platform/logging.js';
import { createTestDatabase } from '../../../test/support/services.js';
import {
  appendEntries,
  listEntries,
  purgeEntries,
  verifyChain,
  type NewAuditEntry,
} from './audit-repository.js';
import { openDatabase, type TrellisDatabase } from './database.js';
import { migrateToLatest, migrations } from './migrate.js';

const logger = createLogger({ Level: 'silent' });
let directory: string | undefined;
afterAll(async () => {
  if (directory) await rm(directory, { recursive: true, force: true });
});

const modes = [
  {
    mode: 'PostgreSQL',
    open: async () =>
      openDatabase(
        buildConfig({
          Database: { Url: await createTestDatabase(), PoolSize: 4 },
          Logging: { Level: 'silent' },
        }),
        logger,
      ),
  },
  {
    mode: 'embedded PGlite',
    open: async () => {
      directory = await mkdtemp(path.join(tmpdir(), 'trellis-audit-'));
      return openDatabase(
        buildConfig({ DataDirectory: directory, Logging: { Level: 'silent' } }),
        logger,
      );
    },
  },
];

const entry = (operation: string, targets: Record<string, string> = {}): NewAuditEntry => ({
  actor: 'ada',
  actorKind: 'user',
  project: 'default',
  projectId: null,
  operation,
  targets,
  status: 200,
  requestId: 'r-1',
  address: '127.0.0.1',
});

describe.each(modes)('the audit trail on $mode', ({ open }) => {
  let database: TrellisDatabase;
  beforeAll(async () => {
    database = await open();
    await migrateToLatest(database.db, logger);
  });
  afterAll(() => database?.close());

  it('chains entries appended at once from several connections, in id order', async () => {
    const { db } = database;
    await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        appendEntries(db, [entry('createWorkflow', { id: `w${index}` }), entry('updateWorkflow')]),
      ),
    );
    const entries = await listEntries(db, {}, { limit: 1000 });
    expect(entries).toHaveLength(40);
    const ids = entries.map((row) => BigInt(row.id));
    expect(ids).toEqual([...ids].sort((a, b) => (b > a ? 1 : b < a ? -1 : 0)));
    expect(entries.at(-1)?.prevHash).toBeNull();
    expect(entries[0]?.prevHash).toBe(entries[1]?.hash);
    expect(await verifyChain(db)).toEqual({ entries: 40, firstBreak: null });
  });

  it('refuses UPDATE, DELETE and TRUNCATE', async () => {
    const { db } = database;
    await expect(db.updateTable('auditEntry').set({ actor: 'mallory' }).execute()).rejects.toThrow(
      /append-only: UPDATE refused/,
    );
    await expect(db.deleteFrom('auditEntry').execute()).rejects.toThrow(
      /append-only: DELETE refused/,
    );
    await expect(sql`truncate audit_entry`.execute(db)).rejects.toThrow(
      /append-only: TRUNCATE refused/,
    );
    expect((await verifyChain(db)).entries).toBe(40);
  });

  it('names the first entry whose row was changed behind its back, or that lost its predecessor', async () => {
    const { db } = database;
    const [newest, second, third] = await listEntries(db, {}, { limit: 3 });
    await sql`alter table audit_entry disable trigger audit_entry_append_only`.execute(db);
    try {
      await sql`update audit_entry set actor = 'mallory' where id = ${third!.id}`.execute(db);
      expect((await verifyChain(db)).firstBreak).toEqual({ id: third!.id, reason: 'altered' });
      await sql`update audit_entry set actor = 'ada' where id = ${third!.id}`.execute(db);
      expect((await verifyChain(db)).firstBreak).toBeNull();
      await sql`delete from audit_entry where id = ${second!.id}`.execute(db);
      expect((await verifyChain(db)).firstBreak).toEqual({ id: newest!.id, reason: 'unlinked' });
      const [oldest, secondOldest] = await db
        .selectFrom('auditEntry')
        .select('id')
        .orderBy('id')
        .limit(2)
        .execute();
      await sql`delete from audit_entry where id = ${oldest!.id}`.execute(db);
      expect((await verifyChain(db)).firstBreak).toEqual({
        id: secondOldest!.id,
        reason: 'truncated',
      });
    } finally {
      await sql`alter table audit_entry enable trigger audit_entry_append_only`.execute(db);
    }
  });

  it('filters and pages newest first', async () => {
    const { db } = database;
    await appendEntries(db, [{ ...entry('deleteWorkflow'), actor: 'grace', project: null }]);
    const byGrace = await listEntries(db, { actor: 'grace' }, { limit: 10 });
    expect(byGrace.map((row) => [row.operation, row.project])).toEqual([['deleteWorkflow', null]]);
    const updates = await listEntries(db, { operation: 'updateWorkflow' }, { limit: 10 });
    expect(updates).toHaveLength(10);
    const next = await listEntries(
      db,
      { operation: 'updateWorkflow' },
      { after: updates.at(-1)!.id, limit: 100 },
    );
    expect(next).toHaveLength(10);
    expect(BigInt(next[0]!.id)).toBeLessThan(BigInt(updates.at(-1)!.id));
    const future = new Date(Date.now() + 60_000);
    expect(await listEntries(db, { from: future }, { limit: 10 })).toEqual([]);
    expect(
      await listEntries(db, { to: future, project: { name: 'default' } }, { limit: 5 }),
    ).toHaveLength(5);
  });

  it('purges past the retention only, recording the purge, and the chain left verifies', async () => {
    const { db } = database;
    const before = await listEntries(db, {}, { limit: 1000 });
    expect(await purgeEntries(db, 365)).toBe(0);
    expect(await listEntries(db, {}, { limit: 1000 })).toEqual(before);
    await sql`select pg_sleep(0.01)`.execute(db);
    expect(await purgeEntries(db, 0)).toBe(before.length);
    const [purge, ...others] = await listEntries(db, {}, { limit: 1000 });
    expect(others).toEqual([]);
    expect(purge).toMatchObject({
      actor: 'system',
      actorKind: 'system',
      project: null,
      operation: 'auditPurge',
      targets: { purged: String(before.length), lastPurgedHash: before[0]!.hash },
    });
    await appendEntries(db, [entry('createWorkflow'), entry('deleteWorkflow')]);
    expect(await verifyChain(db)).toEqual({ entries: 3, firstBreak: null });
  });

  it('tells a purge from the oldest entries deleted behind its back', async () => {
    const { db } = database;
    const [lastPurged] = await listEntries(db, {}, { limit: 1 });
    await sql`select pg_sleep(0.01)`.execute(db);
    await appendEntries(db, [entry('updateWorkflow'), entry('updateWorkflow')]);
    const kept = await listEntries(db, { operation: 'updateWorkflow' }, { limit: 2 });
    // A purge of what is older than the first of the two: the three entries of the test before.
    const { rows } = await sql<{ purged: string }>`
      select purge_audit_entries(clock_timestamp() - ${kept[1]!.at}::timestamptz) as purged
    `.execute(db);
    expect(Number(rows[0]!.purged)).toBe(3);
    const [purge] = await listEntries(db, { operation: 'auditPurge' }, { limit: 1 });
    expect(purge!.targets).toEqual({
      purged: '3',
      firstRemainingId: kept[1]!.id,
      lastPurgedHash: lastPurged!.hash,
    });
    expect(await verifyChain(db)).toEqual({ entries: 3, firstBreak: null });

    await sql`alter table audit_entry disable trigger audit_entry_append_only`.execute(db);
    try {
      await sql`delete from audit_entry where id = ${kept[1]!.id}`.execute(db);
    } finally {
      await sql`alter table audit_entry enable trigger audit_entry_append_only`.execute(db);
    }
    expect(await verifyChain(db)).toEqual({
      entries: 2,
      firstBreak: { id: kept[0]!.id, reason: 'truncated' },
    });
  });
});

describe('the audit trail across the upgrade that gave entries their project id', () => {
  let database: TrellisDatabase;
  beforeAll(async () => {
    database = await modes[0]!.open();
  });
  afterAll(() => database?.close());

  it('keeps the entries before verifying, gives them their project id, and hashes it in those after', async () => {
    const { db } = database;
    const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
    const before = await migrator.migrateTo('2026-11-28T21-00-00-idempotency-keys-per-project');
    expect(before.error).toBeUndefined();
    const partnerId = crypto.randomUUID();
    await db.insertInto('project').values({ id: partnerId, name: 'partner' }).execute();
    for (const project of ['default', 'partner', 'gone', null]) {
      await sql`
        insert into audit_entry (actor, actor_kind, project, operation, status)
        values ('ada', 'user', ${project}, 'updateWorkflow', 200)`.execute(db);
    }
    await migrateToLatest(db, logger);

    expect(await verifyChain(db)).toEqual({ entries: 4, firstBreak: null });
    const { id: defaultId } = await db
      .selectFrom('project')
      .select('id')
      .where('name', '=', 'default')
      .executeTakeFirstOrThrow();
    const upgraded = await listEntries(db, {}, { limit: 10 });
    expect(upgraded.map((row) => [row.project, row.projectId]).reverse()).toEqual([
      ['default', defaultId],
      ['partner', partnerId],
      ['gone', null],
      [null, null],
    ]);

    await appendEntries(db, [
      { ...entry('deleteWorkflow'), project: 'partner', projectId: partnerId },
    ]);
    await db.updateTable('project').set({ name: 'renamed' }).where('id', '=', partnerId).execute();
    await appendEntries(db, [
      { ...entry('addWorkflow'), project: 'renamed', projectId: partnerId },
    ]);
    expect(await verifyChain(db)).toEqual({ entries: 6, firstBreak: null });
    const partners = await listEntries(db, { project: { id: partnerId } }, { limit: 10 });
    expect(partners.map((row) => [row.project, row.operation])).toEqual([
      ['renamed', 'addWorkflow'],
      ['partner', 'deleteWorkflow'],
      ['partner', 'updateWorkflow'],
    ]);
    expect(
      (await listEntries(db, { project: { name: 'gone' } }, { limit: 10 })).map((row) => row.id),
    ).toHaveLength(1);

    const [recorded] = partners;
    await sql`alter table audit_entry disable trigger audit_entry_append_only`.execute(db);
    try {
      await sql`update audit_entry set project_id = ${defaultId} where id = ${recorded!.id}`.execute(
        db,
      );
    } finally {
      await sql`alter table audit_entry enable trigger audit_entry_append_only`.execute(db);
    }
    expect((await verifyChain(db)).firstBreak).toEqual({ id: recorded!.id, reason: 'altered' });
  });
});
