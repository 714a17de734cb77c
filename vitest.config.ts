import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const sources = [
  'core',
  'server',
  'workflows-worker',
  'plugins',
  'plugin-kit',
  'sdk',
  'cli',
  'scripts',
  'bin',
];

// Code that imports the SDK by its package name (cli/) gets its source, as under tsx.
const resolve = {
  alias: { '@trellis/sdk': fileURLToPath(new URL('./sdk/src/index.ts', import.meta.url)) },
};

export default defineConfig({
  test: {
    projects: [
      {
        resolve,
        test: {
          name: 'unit',
          // Unit tests first: they are fast and say the most when something basic broke.
          sequence: { groupOrder: 0 },
          include: sources.map((folder) => `${folder}/**/*.test.{ts,js}`),
          exclude: ['**/node_modules/**', '**/*.int.test.{ts,js}'],
        },
      },
      {
        // Real PostgreSQL and a real Temporal dev server, started once by the global setup.
        resolve,
        test: {
          name: 'integration',
          sequence: { groupOrder: 1 },
          include: [
            'test/**/*.test.ts',
            ...sources.map((folder) => `${folder}/**/*.int.test.{ts,js}`),
          ],
          exclude: ['**/node_modules/**'],
          globalSetup: ['test/global-setup.ts'],
          testTimeout: 120_000,
          hookTimeout: 180_000,
          fileParallelism: true,
          maxWorkers: 2,
        },
      },
    ],
  },
});
