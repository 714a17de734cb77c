import js from '@eslint/js';
import { createNodeResolver, importX } from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';

/**
 * Folder boundaries (docs/ARCHITECTURE.md#rooms): what each folder may import besides itself and npm
 * packages. Checked on resolved paths, so `core/src/plugins` and the top-level `plugins/` differ.
 * Tests, wherever they sit, may also use test/support (their services and harness).
 */
const topFolders = [
  'core',
  'server',
  'workflows-worker',
  'plugins',
  'plugin-kit',
  'sdk',
  'cli',
  'console',
  'test',
  'bench',
  'bin',
  'scripts',
  'generated',
];
const mayImport = {
  core: ['generated', 'plugin-kit'],
  server: ['core', 'generated'],
  'workflows-worker': ['core', 'generated'],
  // The plugin contract: the author kit, which itself depends on nothing.
  plugins: ['plugin-kit'],
  'plugin-kit': [],
  // The generated types, as `./generated/*.js` (tsconfig.json's rootDirs); its build copies them.
  sdk: ['generated'],
  // The CLI is a client like any other: the published SDK only (by its package name).
  cli: ['sdk'],
  // The console too: a browser app on the published SDK only (by its package name), and the
  // pure definition language (mayImportParts).
  console: ['sdk'],
  // Tests also build what they run (scripts/build/build-console.mjs, for the console the API serves).
  test: [
    'sdk',
    'cli',
    'core',
    'bin',
    'workflows-worker',
    'server',
    'generated',
    'plugins',
    'scripts',
  ],
  bench: ['sdk', 'core', 'test', 'workflows-worker', 'generated'],
};
/** Parts of a folder another may import, though not the rest of it: no Node, no database. */
const mayImportParts = {
  console: { core: ['./src/definition', './src/validation'] },
};
const tests = ['**/*.test.ts', '**/*.test.js', '**/*.int.test.ts'];

function boundary(folder) {
  const allowed = [folder, ...mayImport[folder]];
  const parts = mayImportParts[folder] ?? {};
  const named = Object.entries(parts).map(([other, paths]) =>
    paths.map((path) => `${other}/${path.slice(2)}`),
  );
  const message = `${folder}/ may import only ${[...allowed, ...named.flat()].join(', ')} (docs/ARCHITECTURE.md#rooms).`;
  const forbidden = topFolders.filter((other) => !allowed.includes(other));
  return [
    {
      target: `./${folder}`,
      from: forbidden.filter((other) => !(other in parts)).map((other) => `./${other}`),
      message,
    },
    ...Object.entries(parts).map(([other, paths]) => ({
      target: `./${folder}`,
      from: `./${other}`,
      except: paths,
      message,
    })),
  ];
}

/** Workflow code runs in Temporal's deterministic sandbox: no Node, no database, no server. */
const workflowPatterns = [
  { group: ['node:*'], message: 'Workflow code must be deterministic: no Node built-ins.' },
  {
    group: ['**/core/src/db/**', '**/core/src/config/**', '**/activities/*.js'],
    allowTypeImports: true,
    message: 'Workflow code may import activities and core/db only as types.',
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
      'import-x/no-restricted-paths': [
        'error',
        { zones: Object.keys(mayImport).flatMap(boundary) },
      ],
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
    files: ['workflows-worker/src/workflows/**/*.ts', 'core/src/temporal/messages.ts'],
    ignores: tests,
    rules: { 'no-restricted-imports': ['error', { patterns: workflowPatterns }] },
  },
);
