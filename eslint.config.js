import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', 'data/', 'scratch/', 'coverage/', 'test-artifacts/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      // A `let` read by a closure before its one assignment (see api/sse.ts) is deliberate.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      'no-console': 'off',
    },
  },
  {
    // The web interface runs in the browser; its service worker in a worker scope.
    files: ['web/src/**/*.{ts,tsx}'],
    languageOptions: { globals: { ...globals.browser } },
  },
  {
    files: ['web/sw.js'],
    languageOptions: { globals: { ...globals.serviceworker } },
  },
  {
    // Workflow code runs in Temporal's sandbox: no Node built-ins, no I/O (docs/jobs.md, "Workflow code"). The jobs'
    // contracts (jobs/contract.ts, jobs/slot-contract.ts) are pure and shared with activities. Each service keeps its
    // workflows in workflow.ts.
    files: ['workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['node:*', 'fs', 'path', 'pg', '@mikro-orm/*', 'koa', '@koa/*'], message: 'Workflows must stay deterministic and side-effect free.' },
            { group: ['../activities/*', '../db/*', '../api/*', '../runtime/*', '../jobs/*', '!../jobs/contract.js', '!../jobs/slot-contract.js'], allowTypeImports: true, message: 'Import activities and services with `import type` only.' },
          ],
        },
      ],
    },
  },
  {
    // A service's workflows (docindex/workflow.ts and the like) follow the same rules, and take their own activities
    // as types only.
    files: ['*/workflow.ts', '*/sync-workflow.ts', '*/*/workflow.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['node:*', 'fs', 'path', 'pg', '@mikro-orm/*', 'koa', '@koa/*'], message: 'Workflows must stay deterministic and side-effect free.' },
            { group: ['./*.js', '!./contract.js', '!./phases.js', '!./sync-workflow.js', './*/*', '!./*/workflow.js', '../activities/*', '../db/*', '../api/*', '../runtime/*', '../jobs/*', '!../jobs/contract.js'], allowTypeImports: true, message: 'Import activities and services with `import type` only.' },
          ],
        },
      ],
    },
  },
  {
    // Activities, workflows and pipelines stay small parts (docs/development.md, "Lint and layers"): a step that grows
    // past this is split into named steps.
    files: ['activities/**/*.ts', 'workflows/**/*.ts', '*/activities.ts', '*/sync-activities.ts', '*/activity-deps.ts', '*/workflow.ts', '*/sync-workflow.ts', '*/pipeline.ts', '*/*/activities.ts', '*/*/workflow.ts'],
    rules: { 'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true }] },
  },
);
