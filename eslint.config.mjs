// @ts-check
// What `ng add angular-eslint` writes for an app (typescript-eslint and angular-eslint, the
// Angular CLI's choice) with typed linting, plus ESLint's own rules for the Node tooling.
import eslint from '@eslint/js';
import angular from 'angular-eslint';
import { defineConfig, globalIgnores } from 'eslint/config';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/** The Angular apps: the demo, the origin tests' own app, and the one `ng new --demo=false` gets. */
const APPS = ['src/**/*.ts', 'test/app/src/**/*.ts', 'schematics/ng-new/minimal/**/*.ts'];
/** `ng new --demo=false` copies these into src/app; where they live, no tsconfig includes them. */
const MINIMAL_APP = [
  'schematics/ng-new/minimal/src/*.ts',
  'schematics/ng-new/minimal/src/app/*.ts',
  'schematics/ng-new/minimal/src/app/pages/*.ts',
];

export default defineConfig([
  globalIgnores([
    'dist/',
    'dist-*/',
    '.angular/',
    'bench/results/',
    'coverage/',
    'profiles/',
    'test-results/',
    'tmp/',
    // A user's app as they wrote it (the replay in test/schematics/scaffold.test.mjs): its own strict
    // build checks it there, with the stock app's tsconfig this workspace does not have.
    'test/schematics/persona/',
  ]),
  {
    files: ['**/*.ts', '**/*.mts'],
    extends: [
      eslint.configs.recommended,
      tseslint.configs.recommendedTypeChecked,
      tseslint.configs.stylisticTypeChecked,
    ],
    languageOptions: {
      parserOptions: {
        // The builds' own tsconfigs, so lint sees the types the compiler sees.
        project: ['tsconfig.app.json', 'tsconfig.spec.json', 'test/app/tsconfig.app.json'],
        tsconfigRootDir: import.meta.dirname,
      },
    },
  },
  {
    files: MINIMAL_APP,
    languageOptions: {
      parserOptions: {
        project: false,
        // Typed with the unit tests' compiler options (its app.spec.ts uses Vitest's globals), its
        // files over the template's src/ as they land (schematics/tsconfig.minimal.json).
        projectService: {
          allowDefaultProject: MINIMAL_APP,
          defaultProject: 'schematics/tsconfig.minimal.json',
        },
        tsconfigRootDir: import.meta.dirname,
      },
    },
  },
  {
    // The origin: a function that outgrows a screen is split into named steps (docs/architecture.md).
    files: ['server/**/*.ts'],
    rules: {
      'max-lines-per-function': ['error', { max: 60, skipBlankLines: true, skipComments: true }],
      // One private-field style: JavaScript's own `#`.
      'no-restricted-syntax': [
        'error',
        {
          selector: ':matches(PropertyDefinition, MethodDefinition)[accessibility="private"]',
          message: 'Use a #private member.',
        },
      ],
    },
  },
  {
    files: ['bench/variants/stock/server.ts'],
    rules: {
      // The Angular CLI's generated server.ts, benched as generated: `||` also maps PORT='' to 4000.
      '@typescript-eslint/prefer-nullish-coalescing': 'off',
    },
  },
  {
    files: APPS,
    extends: [angular.configs.tsRecommended],
    processor: angular.processInlineTemplates,
    rules: {
      '@angular-eslint/directive-selector': [
        'error',
        { type: 'attribute', prefix: 'app', style: 'camelCase' },
      ],
      '@angular-eslint/component-selector': [
        'error',
        { type: 'element', prefix: 'app', style: 'kebab-case' },
      ],
    },
  },
  {
    files: ['**/*.html'],
    extends: [angular.configs.templateRecommended, angular.configs.templateAccessibility],
  },
  {
    files: ['**/*.mjs', '**/*.cjs'],
    extends: [eslint.configs.recommended],
    languageOptions: { globals: globals.node },
  },
  {
    // Their functions passed to Playwright (page.evaluate, waitForFunction, …) run in the page.
    files: ['test/browser/**/*.mjs', 'test/helpers/browser.mjs'],
    languageOptions: { globals: { ...globals.node, ...globals.browser } },
  },
]);
