// The operator commands of completion notifications: `npm run tenants -- list` and
// `npm run tenants -- webhooks add|list|remove`, against the test Postgres, checked
// through the API they share a database with.
import { execFile } from 'node:child_process';
import { and, eq, isNull } from 'drizzle-orm';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { auditEvents, tenants } from '../db/schema.ts';
import { ApiClient } from './support/client.ts';
import { newTenant } from './support/run-stack.ts';
import { startTestApp, type TestApp } from './support/test-app.ts';

/** Runs `npm run tenants -- …` without blocking this process, whose event loop serves the test API. */
function tenantsCli(...args: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  return tenantsCliIn('test', ...args);
}

function tenantsCliIn(nodeEnv: 'test' | 'production', ...args: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      'npm',
      ['run', '--silent', 'tenants', '--', ...args],
      { env: { ...process.env, NODE_ENV: nodeEnv, DATABASE_URL: inject('databaseUrl') }, encoding: 'utf8', timeout: 60_000 },
      (err, stdout, stderr) => resolve({ status: err ? Number(err.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const lines = (stdout: string) =>
  stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));

let app: TestApp;
let api: ApiClient;

beforeAll(async () => {
  app = await startTestApp();
  api = await ApiClient.connect(app.url);
});
afterAll(async () => {
  await app?.close();
});

describe('npm run tenants -- list', () => {
  it('prints every tenant with its id and credit balance', async () => {
    const t = await newTenant(app.database.db, 1_234);
    const [json, text] = await Promise.all([tenantsCli('list', '--json'), tenantsCli('list')]);
    expect(json.status, json.stderr).toBe(0);
    expect(lines(json.stdout)).toContainEqual({ name: t.name, id: t.tenantId, balance: 1_234, held: 0, available: 1_234 });
    expect(text.status, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/^NAME\s+ID\s+BALANCE\s+HELD\s+AVAILABLE$/m);
    expect(text.stdout).toMatch(new RegExp(`^${t.name}\\s+${t.tenantId}\\s+1234\\s+0\\s+1234$`, 'm'));
  }, 120_000);
});

describe('npm run tenants -- webhooks', () => {
  it('adds an endpoint (secret printed once), lists it with a hint, removes it; each write audited', async () => {
    const t = await newTenant(app.database.db, 0);
    const added = await tenantsCli(
      'webhooks',
      'add',
      t.name,
      'https://hooks.example.com/cli',
      '--events',
      'run.completed,run.failed',
      '--description',
      'from the CLI',
      '--json',
    );
    expect(added.status, added.stderr).toBe(0);
    const endpoint = JSON.parse(added.stdout) as { id: string; secret: string; events: string[]; url: string };
    expect(endpoint).toMatchObject({
      tenant: t.name,
      url: 'https://hooks.example.com/cli',
      events: ['run.completed', 'run.failed'],
      description: 'from the CLI',
    });
    expect(endpoint.id).toMatch(/^we_/);
    expect(() => new Webhook(endpoint.secret)).not.toThrow();

    // The API sees it, without the secret.
    const viaApi = await api.get('/v1/webhook-endpoints', { key: t.key });
    expect(viaApi.json.data).toEqual([
      expect.objectContaining({ id: endpoint.id, events: ['run.completed', 'run.failed'], secret_hint: `whsec_…${endpoint.secret.slice(-4)}` }),
    ]);

    const listed = await tenantsCli('webhooks', 'list', t.name, '--json');
    expect(listed.status, listed.stderr).toBe(0);
    expect(lines(listed.stdout)).toEqual([
      expect.objectContaining({ id: endpoint.id, url: 'https://hooks.example.com/cli', secret_hint: `whsec_…${endpoint.secret.slice(-4)}` }),
    ]);
    expect(listed.stdout).not.toContain(endpoint.secret.slice('whsec_'.length));
    const text = await tenantsCli('webhooks', 'list', t.name);
    expect(text.stdout).toContain(endpoint.id);
    expect(text.stdout).not.toContain(endpoint.secret.slice('whsec_'.length));

    const removed = await tenantsCli('webhooks', 'remove', t.name, endpoint.id);
    expect(removed.status, removed.stderr).toBe(0);
    expect((await api.get('/v1/webhook-endpoints', { key: t.key })).json.data).toEqual([]);
    const again = await tenantsCli('webhooks', 'remove', t.name, endpoint.id);
    expect(again.status).toBe(1);
    expect(again.stderr).toContain('has no webhook endpoint');

    const audit = await app.database.db
      .select()
      .from(auditEvents)
      .where(and(eq(auditEvents.tenantId, t.tenantId), eq(auditEvents.target, `webhook_endpoint:${endpoint.id}`), isNull(auditEvents.keyId)));
    expect(audit.map((e) => e.action).sort()).toEqual(['webhook_endpoint.create', 'webhook_endpoint.delete']);
  }, 120_000);

  it('adds for all four events by default and prints the secret in text mode', async () => {
    const t = await newTenant(app.database.db, 0);
    const added = await tenantsCli('webhooks', 'add', t.name, 'http://127.0.0.1:9/hook');
    expect(added.status, added.stderr).toBe(0);
    expect(added.stdout).toContain('run.awaiting_approval, run.completed, run.failed, run.needs_attention');
    expect(added.stdout).toMatch(/Signing secret \(shown only now; store it\): whsec_[A-Za-z0-9+/]{32}/);
  });

  it('refuses what the API refuses, and unknown tenants, changing nothing', async () => {
    const t = await newTenant(app.database.db, 0);
    const refused = [
      ['webhooks', 'add', t.name, 'http://hooks.example.com/x'],
      ['webhooks', 'add', t.name, 'https://user:pw@hooks.example.com/x'],
      ['webhooks', 'add', t.name, 'https://hooks.example.com/x', '--events', 'run.started'],
      ['webhooks', 'add', t.name, 'https://hooks.example.com/x', '--events', 'run.failed,run.failed'],
      ['webhooks', 'add', t.name, 'https://hooks.example.com/x', '--description', 'sk-live1234567890abcdefXYZ'],
    ];
    const [unknown, ...results] = await Promise.all([
      tenantsCli('webhooks', 'add', `no-such-${Date.now()}`, 'https://hooks.example.com/x'),
      ...refused.map((args) => tenantsCli(...args)),
    ]);
    for (const [i, r] of results.entries()) {
      expect(r.status, refused[i]!.join(' ')).not.toBe(0);
      // Errors never echo a credential.
      expect(r.stderr).not.toContain('pw@');
      expect(r.stderr).not.toContain('sk-live');
    }
    expect(unknown!.status).toBe(1);
    expect(unknown!.stderr).toContain('No tenant named');
    expect((await api.get('/v1/webhook-endpoints', { key: t.key })).json.data).toEqual([]);
  }, 120_000);

  it('the tool webhook (webhook set) keeps the same URL rule: loopback and link-local refused in production, credentials never echoed', async () => {
    const t = await newTenant(app.database.db, 0);
    const cases = [
      ['production', 'http://127.0.0.1:9/hook'],
      ['production', 'https://169.254.169.254/latest/meta-data'],
      ['test', 'https://10.0.0.8/hook'],
      ['test', 'ftp://127.0.0.1/hook'],
      ['test', 'https://user:pw@hooks.example.com/x'],
    ] as const;
    const results = await Promise.all(cases.map(([env, url]) => tenantsCliIn(env, 'webhook', 'set', '--tenant', t.name, '--url', url)));
    for (const [i, r] of results.entries()) {
      expect(r.status, cases[i]!.join(' ')).not.toBe(0);
      expect(r.stderr).toContain('nothing');
      expect(r.stderr).not.toContain('pw@');
    }
    expect(results[0]!.stderr).toContain('only outside production');
    const [row] = await app.database.db.select({ url: tenants.webhookUrl }).from(tenants).where(eq(tenants.id, t.tenantId));
    expect(row!.url).toBeNull();
    const accepted = await tenantsCliIn('test', 'webhook', 'set', '--tenant', t.name, '--url', 'http://127.0.0.1:9/hook');
    expect(accepted.status, accepted.stderr).toBe(0);
    // It sets a signing secret for the deliveries, printed now (with the listener to check them) and stored.
    const secret = accepted.stdout.match(/^Signing secret \(shown only now; store it\): (whsec_[A-Za-z0-9+/]+={0,2})$/m)?.[1];
    expect(secret, accepted.stdout).toBeDefined();
    expect(() => new Webhook(secret!)).not.toThrow();
    expect(accepted.stdout).toContain(`npx gws listen --secret ${secret}`);
    const [stored] = await app.database.db.select({ secret: tenants.webhookSecret }).from(tenants).where(eq(tenants.id, t.tenantId));
    expect(stored!.secret).toBe(secret);
  }, 120_000);
});
