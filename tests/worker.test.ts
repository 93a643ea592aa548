// The worker runs workflows from source against the real dev server, and
// drains cleanly on stop. Between activities the activity context storage is off, so its hooks do
// not tax every promise of a process it shares (the API under npm start).
import { Client, Connection } from '@temporalio/client';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openPostgres } from '../db/client.ts';
import { activityContextStorage, storageIsOn } from '../runtime/activity-storage.ts';
import { type RunningWorker, startWorker } from '../runtime/worker.ts';
import { activityDeps } from '../runtime/compose-activities.ts';
import { loadConfig } from '../config/env.ts';
import { localTemporal } from '../config/temporal-connection-settings.ts';
import { probeWorkflow } from '../workflows/index.ts';
import { testCodec, testDataConverter } from './support/payload-codec.ts';
import { until } from './support/until.ts';

describe('worker', () => {
  const taskQueue = `test-worker-${Date.now()}`;
  const database = openPostgres(inject('databaseUrl'), 2);
  let worker: RunningWorker;
  let connection: Connection;

  beforeAll(async () => {
    worker = await startWorker({
      temporal: localTemporal(inject('temporalAddress')),
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

  it('turns the activity context storages off once no activity runs, and on again for the next', async () => {
    const client = new Client({ connection, dataConverter: testDataConverter() });
    // Both storages an activity enters: its Context, and its worker connection's call context.
    const off = () => !storageIsOn(activityContextStorage) && !storageIsOn(worker.worker.options.connection!.callContextStorage);
    await client.workflow.execute(probeWorkflow, { taskQueue, workflowId: `probe-${Date.now()}`, args: [2] });
    await until(off, 'the activity context storages to be off');
    // The next activities run as before (tests/agent-runs.test.ts and the others run whole runs, whose activities read their Context).
    expect(await client.workflow.execute(probeWorkflow, { taskQueue, workflowId: `probe-${Date.now()}-again`, args: [2] })).toBe(2);
    await until(off, 'the activity context storages to be off again');
  });

  it('stops when asked and its run promise settles', async () => {
    await worker.stop();
    expect(worker.worker.getState()).toBe('STOPPED');
  });
});
