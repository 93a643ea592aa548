// What operators see and do through Temporal (real API, worker, dev server and
// Postgres): a decision sent from the Temporal UI or CLI is audited like the
// API's, a typo'd signal is refused and audited, each run carries a summary and
// live details without content, and a failed run's execution ends Failed.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { approvalSignal, approvalUpdate } from '../workflows/messages.ts';
import { testDataConverter } from './support/payload-codec.ts';
import { isTerminal, newTenant, type RunStack, startRunStack, type TestTenant, waitForRun } from './support/run-stack.ts';

const execFileAsync = promisify(execFile);
/** The CLI `npm install` puts in .tools/ (scripts/ensure-temporal-cli.sh), used exactly as docs/operations.md shows. */
const TEMPORAL_CLI = path.resolve('.tools/temporal/bin/temporal');

const INPUT = 'Summarise the incident timeline and tell the on-call channel that the incident is closed.';

let stack: RunStack;
let connection: Connection;
let temporal: Client;

beforeAll(async () => {
  stack = await startRunStack();
  connection = await Connection.connect({ address: inject('temporalAddress') });
  temporal = new Client({ connection, dataConverter: testDataConverter() });
});
afterAll(async () => {
  await connection?.close();
  await stack?.close();
});

async function awaitingRun(t: TestTenant): Promise<string> {
  const created = await stack.api.post('/v1/agent-runs', { input: INPUT }, { key: t.key });
  expect(created.status).toBe(201);
  await waitForRun(stack.api, t.key, created.json.run_id, (r) => r.status === 'awaiting_approval');
  return created.json.run_id;
}

const runAudit = async (t: TestTenant, runId: string) =>
  ((await stack.api.get('/v1/audit-events?limit=100', { key: t.key })).json.data as { target: string; action: string; key_id: string | null }[])
    .filter((e) => e.target === `run:${runId}`)
    .map((e) => [e.action, e.key_id]);

describe('operators', () => {
  it('an Update from the Temporal UI/CLI is audited (key_id temporal:update); a typo in a signal is refused and audited; the summary names the tenant, not the input', async () => {
    const t = await newTenant(stack.app.database.db);
    const runId = await awaitingRun(t);
    const handle = temporal.workflow.getHandle(runId);

    const described = await handle.describe();
    expect(await described.staticSummary()).toBe(
      `Run for ${t.name} (${t.tenantId}) on ${(await stack.api.get(`/v1/agent-runs/${runId}`, { key: t.key })).json.model}`,
    );
    const details = await described.staticDetails();
    expect(details).toContain(`**Run:** ${runId}`);
    for (const text of [described.staticSummary(), described.staticDetails()]) expect(await text).not.toMatch(/incident|on-call/);
    // Current details: what the run waits for, as the UI's summary shows it.
    const metadata = (await handle.query('__temporal_workflow_metadata')) as { currentDetails?: string };
    expect(metadata.currentDetails).toContain('**Waiting for:** approval of 1 external effect(s): step_2 webhook_delivery');
    expect(metadata.currentDetails).not.toMatch(/incident|on-call/);

    await handle.signal(approvalSignal, { decision: 'approved' } as never);
    await expect(handle.executeUpdate(approvalUpdate, { args: [{ decision: 'approved' } as never] })).rejects.toMatchObject({
      cause: { message: 'decision must be approve or reject' },
    });
    // The command of docs/operations.md: the validated Update through the temporal CLI.
    const update = (input: string) =>
      execFileAsync(TEMPORAL_CLI, [
        'workflow',
        'update',
        'execute',
        '--address',
        inject('temporalAddress'),
        '--workflow-id',
        runId,
        '--name',
        'approval',
        '--input',
        input,
        '--codec-endpoint',
        `${stack.app.url}/codec`,
      ]);
    await expect(update('{"decision":"approved"}')).rejects.toMatchObject({ stderr: expect.stringContaining('decision must be approve or reject') });
    await update('{"decision":"approve","reason":"ops"}');
    const run = await waitForRun(stack.api, t.key, runId, isTerminal);
    expect(run.approval).toMatchObject({ state: 'approved', decision_reason: 'ops' });
    expect(await runAudit(t, runId)).toEqual([
      ['run.approval.approve', 'temporal:update'],
      ['run.approval.signal_refused', 'temporal:signal'],
    ]);
  });

  it('an approve signal is audited (key_id temporal:signal); an API decision keeps the caller key id', async () => {
    const t = await newTenant(stack.app.database.db);
    const bySignal = await awaitingRun(t);
    await temporal.workflow.getHandle(bySignal).signal(approvalSignal, { decision: 'approve' });
    await waitForRun(stack.api, t.key, bySignal, isTerminal);
    expect(await runAudit(t, bySignal)).toEqual([['run.approval.approve', 'temporal:signal']]);

    const byApi = await awaitingRun(t);
    expect((await stack.api.post(`/v1/agent-runs/${byApi}/approval`, { decision: 'approve' }, { key: t.approverKey })).status).toBe(200);
    expect(await runAudit(t, byApi)).toEqual([['run.approval.approve', t.approverKeyId]]);
  });

  it('a rejected run ends failed, and its execution ends Failed (content-free) after the hold is released', async () => {
    const t = await newTenant(stack.app.database.db);
    const runId = await awaitingRun(t);
    expect((await stack.api.post(`/v1/agent-runs/${runId}/approval`, { decision: 'reject', reason: 'private words' }, { key: t.approverKey })).status).toBe(
      200,
    );
    const run = await waitForRun(stack.api, t.key, runId, isTerminal);
    expect(run).toMatchObject({ status: 'failed', reservation: { status: 'released' }, failure: { code: 'approval_rejected' } });
    const handle = temporal.workflow.getHandle(runId);
    const failure = await handle.result().then(
      () => null,
      (err: { cause?: { message?: string } }) => err.cause,
    );
    expect(failure?.message).toBe('The run ended failed (approval_rejected).');
    expect((await handle.describe()).status.name).toBe('FAILED');
  });
});
