// Two approvers from the command line (issue 64): `npm run keys -- create --kind approver --name …`,
// `npm run tenants -- approvals set … --required 2`, then `gws approve` with each person's
// GWS_APPROVER_KEY, against the real API, worker, Temporal dev server and Postgres.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { and, eq, like } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { auditEvents } from '../db/schema.ts';
import { setWebhookUrl } from '../services/tenants.ts';
import { webhookReceiver } from './support/fake-servers.ts';
import { isTerminal, newTenant, type RunStack, startRunStack, waitForRun } from './support/run-stack.ts';
import { until } from './support/until.ts';

const GWS = fileURLToPath(new URL('../bin/gws.mjs', import.meta.url));

let stack: RunStack;
beforeAll(async () => {
  stack = await startRunStack();
});
afterAll(async () => {
  await stack?.close();
});

type Outcome = { status: number; stdout: string; stderr: string };

/** Runs a command without blocking this process, whose event loop serves the test API. */
function run(file: string, args: string[], env: Record<string, string>): Promise<Outcome> {
  return new Promise((resolve) => {
    execFile(file, args, { env: { ...process.env, ...env }, encoding: 'utf8', timeout: 90_000 }, (err, stdout, stderr) =>
      resolve({ status: err ? Number(err.code ?? 1) : 0, stdout, stderr }),
    );
  });
}
const npmRun = (script: string, ...args: string[]) =>
  run('npm', ['run', '--silent', script, '--', ...args], { NODE_ENV: 'test', DATABASE_URL: inject('databaseUrl') });
const gws = (args: string[], env: Record<string, string>) => run(process.execPath, [GWS, ...args], { GWS_BASE_URL: stack.app.url, ...env });

describe('two approvers from the command line', () => {
  it('mints two named approver keys, requires both, and each `gws approve` counts once', { timeout: 240_000 }, async () => {
    const db = stack.app.database.db;
    const hook = await webhookReceiver();
    try {
      const t = await newTenant(db);
      await setWebhookUrl(db, t.name, hook.url, { allowLoopback: true });
      const [dana, lee, nameless] = await Promise.all([
        npmRun('keys', 'create', '--tenant', t.name, '--kind', 'approver', '--name', 'Dana Lee', '--json'),
        npmRun('keys', 'create', '--tenant', t.name, '--kind', 'approver', '--name', 'Sam Lee', '--json'),
        npmRun('keys', 'create', '--tenant', t.name, '--kind', 'approver'),
      ]);
      expect(dana.status, dana.stderr).toBe(0);
      expect(lee.status, lee.stderr).toBe(0);
      expect(nameless.status).not.toBe(0);
      expect(nameless.stderr).toContain('needs the name');
      const danaKey = JSON.parse(dana.stdout) as { key: string; name: string };
      const samKey = JSON.parse(lee.stdout) as { key: string };
      expect(danaKey.name).toBe('Dana Lee');

      const set = await npmRun('tenants', 'approvals', 'set', '--tenant', t.name, '--tool', 'webhook_delivery', '--required', '2');
      expect(set.status, set.stderr).toBe(0);
      const unmeetable = await npmRun('tenants', 'approvals', 'set', '--tenant', t.name, '--tool', 'nowhere__send', '--required', '2');
      expect(unmeetable.status).not.toBe(0);
      expect(unmeetable.stderr).toContain('nothing was changed');
      const listed = await npmRun('tenants', 'approvals', 'list', '--tenant', t.name, '--json');
      expect(
        listed.stdout
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l)),
      ).toEqual([expect.objectContaining({ scope: { tool: 'webhook_delivery' }, required: 2 })]);
      const audits = await db
        .select()
        .from(auditEvents)
        .where(and(eq(auditEvents.tenantId, t.tenantId), eq(auditEvents.action, 'approval_policy.set')));
      expect(audits).toHaveLength(1);

      const created = await stack.api.post('/v1/agent-runs', { input: 'Tell the team channel that the release notes are out.' }, { key: t.key });
      const runId = created.json.run_id as string;
      await waitForRun(stack.api, t.key, runId, (r) => r.status === 'awaiting_approval');

      // A core key in GWS_APPROVER_KEY decides nothing; GWS_API_KEY alone is not read for decisions.
      const byCore = await gws(['approve', runId], { GWS_APPROVER_KEY: t.key });
      expect(byCore.status).not.toBe(0);
      const unset = await gws(['approve', runId], { GWS_API_KEY: t.key });
      expect(unset.stderr).toContain('GWS_APPROVER_KEY is not set');

      const first = await gws(['approve', runId, '--reason', 'checked'], { GWS_APPROVER_KEY: danaKey.key });
      expect(first.status, first.stderr).toBe(0);
      expect(first.stdout).toContain('approved by Dana Lee; 1 more approval needed');
      const again = await gws(['approve', runId], { GWS_APPROVER_KEY: danaKey.key });
      expect(again.status).not.toBe(0);
      expect(again.stderr).toContain('already approved');

      const second = await gws(['approve', runId], { GWS_APPROVER_KEY: samKey.key });
      expect(second.status, second.stderr).toBe(0);
      const ended = await waitForRun(stack.api, t.key, runId, isTerminal);
      expect(ended.status).toBe('completed');
      expect(ended.receipt.action_boundary.approved_by.map((a: { name: string }) => a.name)).toEqual(['Dana Lee', 'Sam Lee']);
      const decisions = await db
        .select()
        .from(auditEvents)
        .where(and(eq(auditEvents.target, `run:${runId}`), like(auditEvents.action, 'run.approval.%')));
      expect(decisions).toHaveLength(2);
      await until(() => hook.received.length >= 1, 'the delivery');
      expect(hook.received).toHaveLength(1);
    } finally {
      await hook.close();
    }
  });
});
