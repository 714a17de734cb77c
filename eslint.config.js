import js from '@eslint/js';
import tseslint from 'typescript-eslint';

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
  {
    // Workflow code runs in Temporal's deterministic sandbox: no Node, no database, no server.
    // The workflow's messages live in core (the API imports them too) but are bundled with it.
    files: ['workflows-worker/src/workflows/**/*.ts', 'core/src/temporal/messages.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['node:*'],
              message: 'Workflow code must be deterministic: no Node built-ins.',
            },
            {
              group: [
                '**/core/src/db/**',
                '**/core/src/config/**',
                '**/server/**',
                '**/activities/*.js',
              ],
              allowTypeImports: true,
              message: 'Workflow code may import activities and core/db only as types.',
            },
            {
              group: ['pg', 'kysely', 'express', 'fs', 'path', 'crypto', 'child_process'],
              message: 'Workflow code must be deterministic.',
            },
          ],
        },
      ],
    },
  },
);
