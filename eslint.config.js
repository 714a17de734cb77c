import js from '@eslint/js';
import { createNodeResolver, importX } from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';

/**
 * The rooms and what each may import besides itself and npm packages (docs/ARCHITECTURE.md#rooms).
 * `core/src` holds six rooms, from the pure language up to the use cases; the others are top-level
 * folders. Checked on resolved paths, so `core/src/plugin-host` and the top-level `plugins/`
 * differ. Tests, wherever they sit, may reach what they test and test/support. `npm run house`
 * prints the rooms' sizes and checks the same table, with import circles and climbing imports.
 */
const core = (room) => `core/src/${room}`;
const coreRooms = ['definition', 'protocol', 'platform', 'store', 'plugin-host', 'application'];
const domain = coreRooms.map(core);
export const mayImport = {
  // The workflow language: parse, DAG, expressions, limits, inputs, problems. No Node, no I/O.
  [core('definition')]: ['generated', 'plugin-kit'],
  // What the API and the worker share through Temporal: workflow type, messages, ids, statuses.
  [core('protocol')]: [core('definition')],
  // Configuration, logging, observability, the Temporal connection and dev server.
  [core('platform')]: [core('definition'), core('protocol'), 'generated'],
  // The database: tables, migrations, repositories.
  [core('store')]: [core('definition'), core('protocol'), core('platform'), 'plugin-kit'],
  // Plugin packages, catalog, registry, runner and sandbox.
  [core('plugin-host')]: [
    core('definition'),
    core('protocol'),
    core('platform'),
    core('store'),
    'plugin-kit',
  ],
  // The use cases both processes call: executions, workflows, triggers, approvals.
  [core('application')]: [...domain, 'generated'],
  // And the SDK's MCP tools, which its `/mcp` serves calling the API itself as the caller.
  server: [...domain, 'generated', 'sdk'],
  'workflows-worker': [...domain, 'generated'],
  bin: [...domain, 'server', 'workflows-worker', 'generated'],
  // The plugin contract: the author kit, which itself depends on nothing.
  plugins: ['plugin-kit'],
  'plugin-kit': [],
  // The generated types, as `./generated/*.js` (tsconfig.json's rootDirs); its build copies them.
  sdk: ['generated'],
  // The CLI is a client like any other, published on its own: the SDK (by its package name).
  cli: ['sdk'],
  // The console too, and the pure definition language its editor checks with.
  console: ['sdk', core('definition')],
  scripts: [...domain, 'server', 'workflows-worker', 'generated', 'sdk', 'test'],
  // Tests also build what they run (scripts/build/build-console.mjs, for the console the API serves).
  test: [
    ...domain,
    'sdk',
    'cli',
    'console',
    'bin',
    'workflows-worker',
    'server',
    'generated',
    'plugins',
    'plugin-kit',
    'scripts',
  ],
  bench: [...domain, 'sdk', 'test', 'workflows-worker', 'server', 'bin', 'generated'],
  generated: [],
};
const rooms = Object.keys(mayImport);
const tests = ['**/*.test.ts', '**/*.test.js', '**/*.int.test.ts'];

function boundary(room) {
  const allowed = [room, ...mayImport[room]];
  return {
    target: `./${room}`,
    from: rooms.filter((other) => !allowed.includes(other)).map((other) => `./${other}`),
    message: `${room}/ may import only ${allowed.join(', ')} (docs/ARCHITECTURE.md#rooms).`,
  };
}

/** Workflow code runs in Temporal's deterministic sandbox: no Node, no database, no server. */
const workflowPatterns = [
  { group: ['node:*'], message: 'Workflow code must be deterministic: no Node built-ins.' },
  {
    group: ['#store/*', '#platform/*', '#plugin-host/*', '#application/*', '**/activities/*.js'],
    allowTypeImports: true,
    message:
      'Workflow code imports the definition and the protocol; activities and the other rooms only as types.',
  },
  {
    group: ['pg', 'kysely', 'express', 'fs', 'path', 'crypto', 'child_process'],
    message: 'Workflow code must be deterministic.',
  },
];

export default tseslint.config(
  {
    ignores: [
      'generated/**',
      'node_modules/**',
      '**/dist/**',
      '.trellis/**',
      '.tools/**',
      '.test-data/**',
      // Compiled (strict) with the client generated for it, outside the repository:
      // scripts/contract/clients/typescript-fetch.sh.
      'test/clients/typescript-fetch/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  // Type-aware rules on TypeScript: promises awaited or handled, no needless assertions.
  ...tseslint.configs.recommendedTypeCheckedOnly.map((config) => ({
    ...config,
    files: ['**/*.{ts,tsx}'],
  })),
  {
    files: ['**/*.{ts,tsx}'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/switch-exhaustiveness-check': [
        'error',
        { considerDefaultExhaustiveForUnions: true },
      ],
      // A value narrowed to unknown and printed with String() is meant to be printed as it is.
      '@typescript-eslint/no-base-to-string': ['error', { checkUnknown: false }],
      // Handlers and callbacks are async to fit the interfaces they implement, awaiting or not.
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/return-await': ['error', 'in-try-catch'],
    },
  },
  {
    // vitest's asymmetric matchers (`expect.any(String)`) are typed `any`.
    files: tests,
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
    },
  },
  {
    files: ['**/*.{ts,tsx,js,mjs}'],
    ignores: tests,
    plugins: { 'import-x': importX },
    settings: {
      // no-cycle reads the files an import names: TypeScript ones too.
      'import-x/extensions': ['.ts', '.tsx', '.js', '.mjs'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts', '.tsx'] },
      'import-x/resolver-next': [
        // Sources import each other as `.js`; the files are `.ts`.
        createNodeResolver({ extensionAlias: { '.js': ['.ts', '.js'] } }),
      ],
    },
    rules: {
      'import-x/no-restricted-paths': ['error', { zones: rooms.map(boundary) }],
      // Value imports only: `npm run lint`'s scripts/dev/import-circles.ts also counts type-only ones.
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
    },
  },
  {
    files: ['cli/src/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/sdk/src/**', '**/sdk/dist/**'],
              message: "The CLI uses the SDK as published: import '@trellis/sdk'.",
            },
          ],
        },
      ],
    },
  },
  {
    files: ['console/src/**/*.{ts,tsx}'],
    languageOptions: { globals: { document: 'readonly', window: 'readonly' } },
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/sdk/src/**', '**/sdk/dist/**'],
              message: "The console uses the SDK as published: import '@trellis/sdk'.",
            },
          ],
        },
      ],
    },
  },
  // Workflow code runs in Temporal's sandbox, and so does the messages module it shares.
  {
    files: ['workflows-worker/src/workflows/**/*.ts', 'core/src/protocol/**/*.ts'],
    ignores: tests,
    rules: { 'no-restricted-imports': ['error', { patterns: workflowPatterns }] },
  },
);
