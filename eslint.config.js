// ESLint (flat config): typescript-eslint's type-checked rules (style.md: lint like the anchors), run
// by `npm test`. Formatting is Prettier's job (.prettierrc.json), not ESLint's.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', 'artifacts/**', 'bench/.tmp/**', 'docs/api/**', 'stubs/**', '**/*.cjs', 'eslint.config.js'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // `_name` marks what a signature or a destructuring must name but does not use
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true }],
      // TaskStore, JobScheduler and the fakes implement Promise-returning interfaces whose in-memory
      // versions have nothing to await: `async` keeps their throws as rejections, which is the contract
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    // supertest's `res.body` and JSON.parse are `any` by design: tests read answers field by field and
    // assert them, so the no-unsafe-* family only adds casts there. The library keeps every rule.
    files: ['spec/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
);
