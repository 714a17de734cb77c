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
  'console',
  'scripts',
  'bin',
];

/** The folders that import the SDK by its package name (the API for its MCP endpoint). */
const sdkImporters = ['./cli/', './server/'].map((folder) =>
  fileURLToPath(new URL(folder, import.meta.url)),
);
const sdkSources: Record<string, string> = {
  '@trellis/sdk': fileURLToPath(new URL('./sdk/src/index.ts', import.meta.url)),
  '@trellis/sdk/mcp': fileURLToPath(new URL('./sdk/src/mcp/index.ts', import.meta.url)),
};

/**
 * cli/ and server/ import the SDK by its package name: in tests that is the SDK's source, as
 * under tsx. Only for them: elsewhere the name resolves as Node resolves it (the packed SDK's
 * consumers).
 */
const sdkSourceByName = {
  name: 'trellis-sdk-source-by-name',
  enforce: 'pre' as const,
  resolveId: (source: string, importer: string | undefined) =>
    (sdkImporters.some((folder) => importer?.startsWith(folder)) && sdkSources[source]) || null,
};

export default defineConfig({
  test: {
    // The default report, then one plain closing line with the counts (closing-line-reporter.ts).
    reporters: ['default', './test/support/closing-line-reporter.ts'],
    projects: [
      {
        plugins: [sdkSourceByName],
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
        plugins: [sdkSourceByName],
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
