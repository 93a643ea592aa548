// Once per test run: a real Temporal dev server (in memory, own ports) and a
// fresh Postgres database with migrations applied. Tests reach both through
// vitest's inject().
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bundleServiceWorkflows } from '../../runtime/workflow-bundle.ts';
import { tracedBundlePath, workflowInterceptorModules } from '../../runtime/temporal-tracing.ts';
import pg from 'pg';
import { pino } from 'pino';
import type { TestProject } from 'vitest/node';
import { openPostgres } from '../../db/client.ts';
import { resolveTemporalCli, startDevServer } from '../../runtime/temporal-dev-server.ts';
import { FAST_DRAINAGE_ARGS } from './fast-drainage.ts';
import { freePort } from './free-port.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    temporalAddress: string;
    temporalCli: string;
    databaseUrl: string;
    workflowBundlePath: string;
    /** This run's PAYLOAD_KEY (base64 of 32 bytes): every API, worker and client of the run encrypts with it. */
    payloadKey: string;
  }
}

/** Where the test database is created; CI sets it, a developer may point it elsewhere. */
const ADMIN_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

export default async function setup(project: TestProject) {
  const logger = pino({ level: 'warn' });
  const cli = await resolveTemporalCli(process.env.TEMPORAL_CLI);
  const temporal = await startDevServer({
    cliPath: cli,
    port: await freePort(),
    uiPort: await freePort(),
    namespace: 'default',
    extraArgs: FAST_DRAINAGE_ARGS,
    logger,
  });

  const dbName = `gws_test_${Date.now()}_${randomBytes(3).toString('hex')}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  try {
    await admin.connect();
  } catch (err) {
    await temporal.stop();
    throw new Error(`Tests need Postgres at ${ADMIN_URL} (set TEST_DATABASE_URL): ${(err as Error).message}`);
  }
  await admin.query(`CREATE DATABASE "${dbName}"`);
  const databaseUrl = withDatabase(ADMIN_URL, dbName);
  const database = openPostgres(databaseUrl);
  await database.migrate();
  await database.close();

  // One workflow bundle for every worker of the run, and its traced variant beside it, as `npm run build` writes them.
  const bundleDir = mkdtempSync(path.join(os.tmpdir(), 'gws-bundle-'));
  const workflowBundlePath = path.join(bundleDir, 'workflow-bundle.js');
  for (const traced of [false, true]) {
    const code = await bundleServiceWorkflows({ workflowInterceptorModules: workflowInterceptorModules(traced) });
    writeFileSync(traced ? tracedBundlePath(workflowBundlePath) : workflowBundlePath, code);
  }
  project.provide('workflowBundlePath', workflowBundlePath);

  project.provide('temporalAddress', temporal.address);
  project.provide('temporalCli', cli);
  project.provide('databaseUrl', databaseUrl);
  project.provide('payloadKey', randomBytes(32).toString('base64'));

  return async () => {
    await temporal.stop();
    await admin.query(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`).catch(() => {});
    await admin.end();
    rmSync(bundleDir, { recursive: true, force: true });
  };
}
