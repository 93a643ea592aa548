// The worker runs workflows from source against the real dev server, and
// drains cleanly on stop.
import { Client, Connection } from '@temporalio/client';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openPostgres } from '../db/client.ts';
import { type RunningWorker, startWorker } from '../runtime/worker.ts';
import { activityDeps } from '../runtime/compose-activities.ts';
import { loadConfig } from '../config/env.ts';
import { probeWorkflow } from '../workflows/index.ts';
import { testCodec, testDataConverter } from './support/payload-codec.ts';

describe('worker', () => {
  const taskQueue = `test-worker-${Date.now()}`;
  const database = openPostgres(inject('databaseUrl'), 2);
  let worker: RunningWorker;
  let connection: Connection;

  beforeAll(async () => {
    worker = await startWorker({
      address: inject('temporalAddress'),
      namespace: 'default',
      taskQueue,
      activities: activityDeps(loadConfig({}), database.db),
      payloadCodec: testCodec(),
      logger: pino({ level: 'silent' }),
    });
    connection = await Connection.connect({ address: inject('temporalAddress') });
  });
  afterAll(async () => {
    await connection.close();
    await database.close();
  });

  it('executes a workflow with activities', async () => {
    const client = new Client({ connection, dataConverter: testDataConverter() });
    const result = await client.workflow.execute(probeWorkflow, { taskQueue, workflowId: `probe-${Date.now()}`, args: [3] });
    expect(result).toBe(3);
  });

  it('stops when asked and its run promise settles', async () => {
    await worker.stop();
    expect(worker.worker.getState()).toBe('STOPPED');
  });
});
