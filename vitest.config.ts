import { defineConfig } from 'vitest/config';

// Two projects, one command (`npm test` runs both; `npx vitest run --project unit` only the fast one):
// - unit: pure functions and the workflow on Temporal's time-skipping test server with fake
//   activities. No global setup: no dev server, no Postgres, no shared workflow bundle.
// - integration: everything else, against a real Temporal dev server and Postgres that the
//   global setup starts once per run.
const unitFiles = [
  'tests/trace-sampling.test.ts',
  'tests/fill-schema.test.ts',
  'tests/grounded-values.test.ts',
  'tests/grammar-schema.test.ts',
  'tests/policy.test.ts',
  'tests/requested-actions.test.ts',
  'tests/verification.test.ts',
  'tests/plan-check.test.ts',
  'tests/exact-plan.test.ts',
  'tests/exact-analysis-tools.test.ts',
  'tests/catalog-fit.test.ts',
  'tests/response-checks.test.ts',
  'tests/server-span.test.ts',
  'tests/promise-context-manager.test.ts',
  'tests/request-metrics.test.ts',
  'tests/install-scripts.test.ts',
  'tests/workflow.test.ts',
  'tests/client-drift.test.ts',
  'tests/openapi-generators.test.ts',
  'tests/ids.test.ts',
  'tests/delivery-url.test.ts',
  'tests/configuration-doc.test.ts',
  'tests/run-states.test.ts',
  'tests/tool-calling-accounting.test.ts',
  'tests/embedded-adapter-report.test.ts',
  'tests/approval-votes.test.ts',
  'tests/fresh-judge.test.ts',
  'tests/startup-wait.test.ts',
  // Spawns `gws listen` and posts to it: no API, database or Temporal server.
  'tests/gws-listen.test.ts',
  // A fake Temporal frontend and the Temporal CLI: no database or Temporal server.
  'tests/temporal-cli-parity.test.ts',
  'tests/temporal-connection-settings.test.ts',
  'tests/temporal-tls-connection.test.ts',
];

export default defineConfig({
  test: {
    pool: 'forks',
    maxWorkers: 2,
    // One summary line ("N passed, N failed") over both projects, which CI reads.
    reporters: ['default', './tests/support/summary-reporter.ts'],
    projects: [
      {
        test: {
          name: 'unit',
          include: unitFiles,
          pool: 'forks',
          testTimeout: 30_000,
          hookTimeout: 120_000,
          // Runs before the integration group, so its wall-time checks share no CPU with the heavy files.
          sequence: { groupOrder: 0 },
        },
      },
      {
        test: {
          name: 'integration',
          include: ['tests/**/*.test.ts'],
          exclude: unitFiles,
          globalSetup: ['tests/support/global-setup.ts'],
          pool: 'forks',
          maxWorkers: 2,
          testTimeout: 60_000,
          hookTimeout: 180_000,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
