import {
  CamelCasePlugin,
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
} from 'kysely';
import { describe, expect, it } from 'vitest';
import { cutToBytes, LogEntryCapPlugin } from './log-entry-cap.js';
import { unstorableCharacter } from '#definition/storable-text.js';
import type { Database } from './tables.js';

const bytes = (text: string) => Buffer.byteLength(text);

describe('cutToBytes', () => {
  it('leaves text that fits as it is', () => {
    expect(cutToBytes('short', 1024)).toBe('short');
    expect(cutToBytes('é'.repeat(512), 1024)).toBe('é'.repeat(512));
  });

  it('cuts longer text to the cap, saying how much was cut', () => {
    const cut = cutToBytes('z'.repeat(2_000_000), 65_536);
    expect(bytes(cut)).toBeLessThanOrEqual(65_536);
    expect(cut).toMatch(/^z{65000,}… \[truncated 1\.8 MiB\]$/);
  });

  it('cuts between characters: no broken UTF-8 sequence, no lone surrogate', () => {
    for (const unit of ['é', '€', '😀', 'a😀']) {
      for (let shift = 0; shift < 4; shift++) {
        const text = 'x'.repeat(shift) + unit.repeat(5000);
        const cut = cutToBytes(text, 1024);
        expect(bytes(cut)).toBeLessThanOrEqual(1024);
        const kept = cut.slice(0, cut.indexOf('… [truncated'));
        expect(text.startsWith(kept)).toBe(true);
        expect(unstorableCharacter(kept)).toBeNull();
        expect(bytes(kept)).toBeGreaterThan(900);
      }
    }
  });
});

describe('LogEntryCapPlugin', () => {
  const db = new Kysely<Database>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => new DummyDriver(),
      createIntrospector: (kysely) => new PostgresIntrospector(kysely),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
    plugins: [new LogEntryCapPlugin(1024), new CamelCasePlugin()],
  });
  const entry = {
    id: '00000000-0000-4000-8000-000000000001',
    executionId: '00000000-0000-4000-8000-000000000002',
    taskExecutionId: null,
    dedupeKey: 'k',
    level: 'Info' as const,
    message: 'm'.repeat(5000),
    exception: 'e'.repeat(5000),
    timeStamp: new Date(0),
  };
  const capped = (parameters: readonly unknown[]) =>
    parameters.filter((value) => typeof value === 'string' && value.includes('[truncated'));

  it('caps the message and exception of every entry inserted', () => {
    const { parameters } = db
      .insertInto('logEntry')
      .values([entry, { ...entry, dedupeKey: 'j' }])
      .compile();
    expect(capped(parameters)).toHaveLength(4);
    expect(parameters).toContain('k');
  });

  it('caps entries inserted by a data-modifying CTE too', () => {
    const { parameters } = db
      .with('logs', (cte) => cte.insertInto('logEntry').values({ ...entry, exception: undefined }))
      .selectFrom('workflowExecution')
      .select('id')
      .compile();
    expect(capped(parameters)).toHaveLength(1);
  });

  it('leaves other tables alone', () => {
    const { parameters } = db
      .updateTable('workflowExecution')
      .set({ message: 'm'.repeat(5000) })
      .compile();
    expect(parameters).toContain('m'.repeat(5000));
  });
});
