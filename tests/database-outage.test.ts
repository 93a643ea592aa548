// A database outage in the middle of a run, on a Postgres the test owns: the
// run waits it out (its database activities retry without limit) and then ends
// correctly, with one hold, one charge and one delivery.
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openPostgres } from '../db/client.ts';
import { setWebhookUrl } from '../services/tenants.ts';
import { webhookReceiver } from './support/fake-servers.ts';
import { type PrivatePostgres, startPrivatePostgres } from './support/private-postgres.ts';
import { isTerminal, ledgerOf, newTenant, type RunStack, startRunStack } from './support/run-stack.ts';
import { testDataConverter } from './support/payload-codec.ts';

let postgres: PrivatePostgres;
let stack: RunStack;
let connection: Connection;

beforeAll(async () => {
  postgres = await startPrivatePostgres();
  const database = openPostgres(postgres.url);
  await database.migrate();
  await database.close();
  stack = await startRunStack({ DATABASE_URL: postgres.url });
  connection = await Connection.connect({ address: inject('temporalAddress') });
});
afterAll(async () => {
  await stack?.close();
  await connection?.close();
  postgres?.destroy();
});

/** Polls the run through the API, tolerating the 503s of the outage. */
async function finalRun(key: string, runId: string, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await stack.api.get(`/v1/agent-runs/${runId}`, { key }).catch(() => null);
    if (r?.status === 200 && isTerminal(r.json)) return r.json;
    if (Date.now() > deadline) throw new Error(`run ${runId} did not end: ${r?.status} ${r?.json?.status}`);
    await new Promise((res) => setTimeout(res, 500));
  }
}

describe('a database outage during a run', () => {
  it('is waited out: the run resumes when the database is back and ends correctly', { timeout: 150_000 }, async () => {
    const db = stack.app.database.db;
    const hook = await webhookReceiver();
    try {
      const t = await newTenant(db);
      await setWebhookUrl(db, t.name, hook.url, { allowLoopback: true });
      const created = await stack.api.post('/v1/agent-runs', { input: 'Tell the on-call channel that the incident timeline is ready.' }, { key: t.key });
      const runId = created.json.run_id as string;
      const temporal = new Client({ connection, dataConverter: testDataConverter() });
      for (;;) {
        const state = await temporal.workflow.getHandle(runId).query<{ status: string }>('state');
        if (state.status === 'awaiting_approval') break;
        await new Promise((r) => setTimeout(r, 100));
      }

      postgres.stop();
      expect((await stack.api.get(`/v1/agent-runs/${runId}`, { key: t.key })).status).toBe(503);
      // An operator approves through Temporal while the database is down; recording it must wait.
      await temporal.workflow.getHandle(runId).signal('approval', { decision: 'approve' });
      // Waited on the condition, not the clock: the decision's audit activity has failed and been
      // retried several times against the stopped database, and the run has gone no further.
      const retries = async () => {
        const { raw } = await temporal.workflow.getHandle(runId).describe();
        return Math.max(0, ...(raw.pendingActivities ?? []).map((a) => Number(a.attempt ?? 0)));
      };
      const deadline = Date.now() + 60_000;
      while ((await retries()) < 4) {
        if (Date.now() > deadline) throw new Error('the audit activity was not retried against the stopped database');
        await new Promise((r) => setTimeout(r, 200));
      }
      expect((await temporal.workflow.getHandle(runId).describe()).status.name).toBe('RUNNING');
      expect(hook.received).toHaveLength(0);
      postgres.start();

      const run = await finalRun(t.key, runId, 90_000);
      expect(run.status).toBe('completed');
      expect(run.receipt.action_boundary.effects_performed).toEqual(['webhook_delivery:step_1']);
      expect(hook.received).toHaveLength(1);
      const { holds, charges } = await ledgerOf(db, runId);
      expect(holds.map((h) => h.status)).toEqual(['settled']);
      expect(charges.map((c) => c.amount)).toEqual([run.usage.charged]);
    } finally {
      await hook.close();
    }
  });
});
