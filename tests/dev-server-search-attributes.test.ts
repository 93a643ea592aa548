// The embedded dev server keeps its search attributes cached, as production servers do: a run
// that carries them does not reread the cluster metadata and the namespace from the server's
// database at every use (runtime/temporal-dev-server.ts).
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { pino } from 'pino';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { RunStatusKey, TenantIdKey } from '../domain/runs/search-attributes.ts';
import { type DevServer, startDevServer } from '../runtime/temporal-dev-server.ts';
import { freePort } from './support/free-port.ts';
import { until } from './support/until.ts';

let server: DevServer;
let metricsUrl: string;
beforeAll(async () => {
  const metricsPort = await freePort();
  metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
  server = await startDevServer({
    cliPath: inject('temporalCli'),
    namespace: 'default',
    logger: pino({ level: 'silent' }),
    port: await freePort(),
    uiPort: await freePort(),
    extraArgs: ['--metrics-port', String(metricsPort)],
  });
}, 60_000);
afterAll(() => server?.stop());

/** The server's persistence requests so far of these operations (its metrics are reported every second or so). */
async function persistenceRequests(operations: RegExp): Promise<number> {
  const text = await (await fetch(metricsUrl)).text();
  return text
    .split('\n')
    .filter((l) => l.startsWith('persistence_requests{') && operations.test(l.slice(l.indexOf('operation="'))))
    .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
}

const METADATA = /^operation="(GetCurrentClusterMetadata|GetNamespace)"/;
const CREATED = /^operation="CreateWorkflowExecution"/;

/** The metadata reads once the server's metrics count `started` workflows created. */
async function metadataReadsAfter(started: number): Promise<number> {
  await until(async () => (await persistenceRequests(CREATED)) >= started, `${started} workflows created in the server's metrics`);
  return persistenceRequests(METADATA);
}

const STARTS = 10;

it('starts workflows carrying the search attributes without rereading them from its database', async () => {
  const connection = await Connection.connect({ address: server.address });
  try {
    const client = new Client({ connection });
    const start = () =>
      client.workflow.start('unregisteredWorkflow', {
        taskQueue: `nobody-${randomUUID()}`,
        workflowId: `sa-cache-${randomUUID()}`,
        typedSearchAttributes: [
          { key: TenantIdKey, value: 'ten_cache' },
          { key: RunStatusKey, value: 'accepted' },
        ],
      });
    await start(); // the first use may fill the cache
    const before = await metadataReadsAfter(1);
    for (let i = 0; i < STARTS; i++) await start();
    // Rereading costs about 4 reads a start. The cache itself expires once a minute, and the
    // server has background reads of its own, so a busy machine may see one or two.
    expect((await metadataReadsAfter(1 + STARTS)) - before).toBeLessThan(STARTS / 2);
  } finally {
    await connection.close();
  }
});
