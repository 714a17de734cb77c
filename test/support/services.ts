/**
 * What `test/global-setup.ts` started, for integration tests: the shared PostgreSQL and Temporal,
 * plus names that keep parallel test files apart on them.
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { expect, inject } from 'vitest';
import { createDatabase } from './postgres.js';

export interface TestServices {
  pgAdminUrl: string;
  temporalAddress: string;
}

export function testServices(): TestServices {
  return { pgAdminUrl: inject('pgAdminUrl'), temporalAddress: inject('temporalAddress') };
}

/** A fresh, empty database on the test PostgreSQL, named after the calling test file; its URL. */
export async function createTestDatabase(): Promise<string> {
  return createDatabase(testServices().pgAdminUrl, uniqueName('trellis_test', '_').toLowerCase());
}

/** A task queue no other test file uses, so workers of parallel files never steal each other's tasks. */
export function uniqueTaskQueue(): string {
  return uniqueName('trellis-test', '-');
}

function uniqueName(prefix: string, separator: string): string {
  const testPath = expect.getState().testPath;
  const file = testPath ? path.basename(testPath).replace(/(\.int)?\.test\.ts$/, '') : 'setup';
  const label = file.replace(/[^a-zA-Z0-9]+/g, separator).slice(0, 24);
  // 63 bytes is PostgreSQL's identifier limit: prefix + 24 + 12 stays well below it.
  return [prefix, label, randomUUID().replaceAll('-', '').slice(0, 12)].join(separator);
}
