// Platform setup and trust surfaces: catalogs, validators, stores, audit,
// sandbox admission, and the behaviour each store changes.
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../config/paths.ts';
import { createKey } from '../services/keys.ts';
import { grantCredits } from '../services/ledger.ts';
import { setRoute } from '../services/routing.ts';
import { setWebhookUrl } from '../services/tenants.ts';
import { ApiClient } from './support/client.ts';
import { storedRun, isTerminal, type RunStack, startRunStack, waitForRun } from './support/run-stack.ts';
import { startTestApp } from './support/test-app.ts';

let stack: RunStack;
let api: ApiClient;

interface T {
  name: string;
  tenantId: string;
  key: string;
  keyId: string;
}

async function tenant(credits = 10_000): Promise<T> {
  const name = `p-${randomBytes(5).toString('hex')}`;
  const k = await createKey(stack.app.database.db, { tenant: name, kind: 'core' });
  if (credits) await grantCredits(stack.app.database.db, { tenantId: k.tenantId, amount: credits, entryKey: `g-${k.id}` });
  return { name, tenantId: k.tenantId, key: k.secret, keyId: k.id };
}

beforeAll(async () => {
  stack = await startRunStack();
  api = stack.api;
});
afterAll(() => stack.close());

const CATALOGS = [
  ['/v1/providers', 'provider_catalog'],
  ['/v1/adapters', 'adapter_catalog'],
  ['/v1/account-free-adapters', 'account_free_adapter_catalog'],
  ['/v1/adapters/conformance', 'adapter_conformance_contract'],
  ['/v1/sandbox-profiles', 'sandbox_profile_catalog'],
  ['/v1/sandbox-capabilities', 'sandbox_capabilities'],
  ['/v1/control-plane', 'control_plane'],
  ['/v1/enterprise/readiness', 'enterprise_readiness'],
  ['/v1/onboarding', 'onboarding_guide'],
  ['/v1/tools', 'tool_catalog'],
  ['/v1/skills', 'skill_catalog'],
  ['/v1/evaluations', 'evaluation_catalog'],
  ['/v1/protocol/capabilities', 'protocol_capabilities'],
] as const;

describe('catalogs', () => {
  it.each(CATALOGS)('%s answers its catalog with a core key and 401 without one', async (route, object) => {
    const t = await tenant();
    const r = await api.get(route, { key: t.key });
    expect(r.status).toBe(200);
    expect(r.json.object).toBe(object);
    expect((await api.get(route)).status).toBe(401);
  });

  it('the model catalog lists exactly what chat admits', async () => {
    const t = await tenant();
    const ids = (await api.get('/v1/models', { key: t.key })).json.data.map((m: { id: string }) => m.id);
    for (const model of ids) {
      const r = await api.post('/v1/chat/completions', { model, messages: [{ role: 'user', content: 'hi' }] }, { key: t.key });
      expect(r.status).toBe(200);
    }
    expect((await api.post('/v1/chat/completions', { model: 'svc-workspace-max', messages: [{ role: 'user', content: 'hi' }] }, { key: t.key })).status).toBe(
      404,
    );
  });

  it('tools show their real status per tenant', async () => {
    const t = await tenant();
    const status = async () =>
      Object.fromEntries((await api.get('/v1/tools', { key: t.key })).json.data.map((x: { id: string; status: string }) => [x.id, x.status]));
    expect(await status()).toEqual({
      memory_recall: 'available',
      text_analysis: 'available',
      count_list_items: 'available',
      find_contact_details: 'available',
      calculate: 'available',
      webhook_delivery: 'not_configured',
    });
    await setWebhookUrl(stack.app.database.db, t.name, 'http://127.0.0.1:9/hook', { allowLoopback: true });
    expect((await status()).webhook_delivery).toBe('available');
  });

  it('providers show their credential boundary as a reference, never a value', async () => {
    process.env.PLATFORM_TEST_UPSTREAM_KEY = 'sk-live-abcdefghijklmnopqrstuvwxyz0123';
    const app = await startTestApp({
      UPSTREAM_BASE_URL: 'http://127.0.0.1:9/v1',
      UPSTREAM_API_KEY_ENV: 'PLATFORM_TEST_UPSTREAM_KEY',
      UPSTREAM_MODEL_MAP: '{"svc-workspace":"m"}',
    });
    try {
      const t = await tenant();
      const r = await (await ApiClient.connect(app.url)).get('/v1/providers', { key: t.key });
      const upstream = r.json.data.find((p: { id: string }) => p.id === 'upstream');
      expect(upstream).toMatchObject({ status: 'available', models: ['svc-workspace'], credential_boundary: { reference: 'env:PLATFORM_TEST_UPSTREAM_KEY' } });
      expect(r.text).not.toContain('sk-live');
      const local = await api.get('/v1/providers', { key: t.key });
      expect(local.json.data.find((p: { id: string }) => p.id === 'upstream').status).toBe('not_configured');
    } finally {
      await app.close();
    }
  });
});

describe('validation routes', () => {
  const cases = [
    [
      '/v1/adapters/conformance/validate',
      {
        id: 'acme',
        name: 'Acme adapter',
        capabilities: ['chat.completions', 'chat.streaming'],
        models: ['x'],
        streaming: true,
        structured_output: false,
        credential: { reference: 'env:ACME_KEY' },
      },
      { id: 'acme', name: 'A', capabilities: ['chat.streaming'], models: ['x'], streaming: true, structured_output: false },
      'capabilities',
    ],
    [
      '/v1/onboarding/validate',
      { organization: 'Acme', jobs: ['do_work'], provider_credential: 'secret://acme/llm' },
      { organization: 'Acme', jobs: ['sell_things'] },
      'jobs[0]',
    ],
    [
      '/v1/provider-credentials/validate',
      { provider: 'upstream', reference: 'env:UPSTREAM_KEY' },
      { provider: 'upstream', reference: 'lowercase-name' },
      'reference',
    ],
    [
      '/v1/skills/validate',
      { name: 'brief', steps: [{ skill: 'recall' }, { skill: 'analyze' }] },
      { name: 'brief', steps: [{ skill: 'teleport' }] },
      'steps[0].skill',
    ],
    [
      '/v1/evaluations/validate',
      { suite_id: 'refusal-policy', cases: [{ input: 'x' }, { input: 'y' }] },
      { suite_id: 'nope', cases: [{ input: 'x' }] },
      'suite_id',
    ],
    [
      '/v1/evaluations/patch-candidate',
      { benchmark: 'swe', instance_id: 'a-1', patch: '--- a/x.py\n+++ b/x.py\n@@ -1,1 +1,1 @@\n-old\n+new\n' },
      { benchmark: 'swe', instance_id: 'a-1', patch: 'just text' },
      'patch',
    ],
    ['/v1/routing/preview', { model: 'svc-workspace' }, { model: 'gpt-4' }, 'model'],
  ] as const;

  it.each(cases)('%s admits a valid body, refuses an invalid one with its param, and needs a key', async (route, good, bad, param) => {
    const t = await tenant();
    const ok = await api.post(route, good, { key: t.key });
    expect(ok.status).toBe(200);
    const refused = await api.post(route, bad, { key: t.key });
    expect(refused.status).toBe(400);
    expect(refused.json.error.param).toBe(param);
    expect((await api.post(route, good)).status).toBe(401);
  });

  it('routing preview shows the plan without executing, and follows the tenant policy', async () => {
    const t = await tenant();
    expect((await api.post('/v1/routing/preview', { model: 'svc-workspace' }, { key: t.key })).json).toMatchObject({
      provider: 'local',
      source: 'default',
      executed: false,
    });
    // No upstream here, so the API refuses this policy (400 provider_not_configured); written directly, it
    // is a policy from when the deployment had one.
    await setRoute(stack.app.database.db, t.tenantId, 'svc-workspace', 'upstream');
    expect((await api.post('/v1/routing/preview', { model: 'svc-workspace' }, { key: t.key })).json).toMatchObject({
      provider: 'upstream',
      source: 'tenant routing policy',
      provider_status: 'not_configured',
      would_fail: true,
    });
  });

  it('patch candidates are untrusted and never executed', async () => {
    const t = await tenant();
    const r = await api.post(
      '/v1/evaluations/patch-candidate',
      { benchmark: 'swe', instance_id: 'i-9', patch: '--- a/src/a.ts\n+++ b/src/a.ts\n@@ -1,2 +1,2 @@\n-a\n+b\n c\n' },
      { key: t.key },
    );
    expect(r.json).toMatchObject({ trust: 'untrusted', executed: false, files_touched: ['src/a.ts'], lines_added: 1, lines_removed: 1 });
  });
});

describe('credential values are refused everywhere a reference is taken', () => {
  const secrets = [
    'sk-proj-AbCdEf0123456789GhIjKlMnOp',
    'ghp_0123456789abcdefABCDEF0123456789abcd',
    'AKIAIOSFODNN7EXAMPLE',
    '-----BEGIN RSA PRIVATE KEY-----\nMIIEow...',
    'xoxb-123456789012-abcdefABCDEF',
    'Zx8Qw2Lm9Tr4Yp7Vb3Nc6Hk1Jd5Fs0Ga',
  ];
  const bodies = (secret: string): [string, unknown, string][] => [
    ['/v1/provider-credentials/validate', { provider: 'upstream', reference: secret }, 'reference'],
    ['/v1/trace-exports', { name: 'otel', kind: 'otlp_http', endpoint: 'https://otel.example.com', credential: secret }, 'credential'],
    ['/v1/onboarding/validate', { organization: 'Acme', jobs: ['do_work'], provider_credential: secret }, 'provider_credential'],
    [
      '/v1/adapters/conformance/validate',
      { id: 'a', name: 'A', capabilities: ['chat.completions'], models: ['m'], streaming: true, structured_output: false, credential: { reference: secret } },
      'credential.reference',
    ],
  ];

  it.each(secrets)('refuses %s with credential_value_refused and stores nothing', async (secret) => {
    const t = await tenant();
    for (const [route, body, param] of bodies(secret)) {
      const r = await api.post(route, body, { key: t.key });
      expect(r.status, route).toBe(400);
      expect(r.json.error).toMatchObject({ code: 'credential_value_refused', param });
      expect(r.text).not.toContain(secret.slice(0, 12));
    }
    const db = stack.app.database.db;
    const stored = await db.execute(sql`select count(*)::int as n from trace_exports t where t::text like ${`%${secret.slice(0, 12)}%`}`);
    expect((stored as unknown as { rows: { n: number }[] }).rows[0]!.n).toBe(0);
    expect((await api.get('/v1/trace-exports', { key: t.key })).json.data).toEqual([]);
  });

  it('admits references', async () => {
    const t = await tenant();
    const r = await api.post(
      '/v1/trace-exports',
      { name: 'otel', kind: 'otlp_http', endpoint: 'https://otel.example.com/v1/traces', credential: 'env:OTEL_TOKEN' },
      { key: t.key },
    );
    expect(r.status).toBe(201);
    expect(r.json).toMatchObject({ credential: 'env:OTEL_TOKEN', active: false });
  });
});

describe('stores', () => {
  const stores = [
    [
      '/v1/budgets',
      { name: 'monthly', scope: 'all', period: 'month', limit_credits: 500 },
      { name: 'monthly', scope: 'everything', period: 'month', limit_credits: 5 },
      'scope',
    ],
    ['/v1/routing-policies', { model: 'svc-workspace-fast', provider: 'local' }, { model: 'svc-workspace-fast', provider: 'vendor-x' }, 'provider'],
    [
      '/v1/traces',
      { name: 'checkout', spans: [{ name: 'db.query', duration_ms: 12, status: 'ok', attributes: { rows: 3 } }] },
      { name: 'checkout', spans: [] },
      'spans',
    ],
    [
      '/v1/trace-exports',
      { name: 'otel', kind: 'webhook', endpoint: 'https://hooks.example.com/t' },
      { name: 'otel', kind: 'webhook', endpoint: 'not a url' },
      'endpoint',
    ],
    [
      '/v1/evaluation-runs',
      {
        suite_id: 'refusal-policy',
        execution: 'customer',
        descriptor: { suite_id: 'refusal-policy', cases: [{ input: 'x' }, { input: 'y' }] },
        results: { passed: 2, failed: 0 },
      },
      {
        suite_id: 'refusal-policy',
        execution: 'remote',
        descriptor: { suite_id: 'refusal-policy', cases: [{ input: 'x' }, { input: 'y' }] },
        results: { passed: 2, failed: 0 },
      },
      'execution',
    ],
  ] as const;

  it.each(stores)('%s upserts (201), lists per tenant, refuses bad bodies and missing keys', async (route, good, bad, param) => {
    const a = await tenant();
    const b = await tenant();
    const created = await api.post(route, good, { key: a.key });
    expect(created.status).toBe(201);
    expect((await api.post(route, good, { key: a.key })).status).toBe(201);
    const listed = await api.get(route, { key: a.key });
    expect(listed.json.data.length).toBeGreaterThanOrEqual(1);
    if (route !== '/v1/traces' && route !== '/v1/evaluation-runs') expect(listed.json.data).toHaveLength(1); // upsert, not insert
    expect((await api.get(route, { key: b.key })).json.data).toEqual([]);
    const refused = await api.post(route, bad, { key: a.key });
    expect(refused.status).toBe(400);
    expect(refused.json.error.param).toBe(param);
    expect((await api.get(route)).status).toBe(401);
  });

  it('traces keep metadata only: a body with prompt or response content is refused', async () => {
    const t = await tenant();
    const r = await api.post(
      '/v1/traces',
      { name: 'chat', spans: [{ name: 'llm', duration_ms: 5, status: 'ok', attributes: { prompt: 'tell me a secret' } }] },
      { key: t.key },
    );
    expect(r.status).toBe(400);
    expect(r.json.error).toMatchObject({ code: 'trace_content_refused', param: 'spans[0].attributes.prompt' });
    const extra = await api.post('/v1/traces', { name: 'chat', response: 'hello', spans: [{ name: 'llm', duration_ms: 5, status: 'ok' }] }, { key: t.key });
    expect(extra.json.error.code).toBe('unsupported_parameter');
    expect((await api.get('/v1/traces', { key: t.key })).json.data).toEqual([]);
  });

  it('evaluation runs are bound to the digest of their descriptor', async () => {
    const t = await tenant();
    const descriptor = {
      suite_id: 'refusal-policy',
      cases: [
        { input: 'x', expected: 'refusal' },
        { input: 'hello', expected: 'answer' },
      ],
    };
    const validated = await api.post('/v1/evaluations/validate', descriptor, { key: t.key });
    const run = await api.post(
      '/v1/evaluation-runs',
      { suite_id: 'refusal-policy', execution: 'connected', descriptor, results: { passed: 1, failed: 1 } },
      { key: t.key },
    );
    expect(run.json.descriptor_digest).toBe(validated.json.descriptor_digest);
  });

  it('evaluation runs are checked against the suites as data: known suite, every case, one result each', async () => {
    const t = await tenant();
    const catalog = (await api.get('/v1/evaluations', { key: t.key })).json.data;
    expect(catalog.map((s: { id: string; cases: number; case_names: string[] }) => [s.id, s.cases, s.case_names.length])).toEqual([
      ['trial-determinism', 3, 3],
      ['structured-output-conformance', 4, 4],
      ['refusal-policy', 2, 2],
    ]);
    const two = { suite_id: 'refusal-policy', cases: [{ input: 'x' }, { input: 'y' }] };
    const post = (body: object) => api.post('/v1/evaluation-runs', { execution: 'customer', ...body }, { key: t.key });
    for (const [body, param] of [
      [{ suite_id: 'made-up', descriptor: { ...two, suite_id: 'made-up' }, results: { passed: 2, failed: 0 } }, 'suite_id'],
      [
        { suite_id: 'refusal-policy', descriptor: { suite_id: 'refusal-policy', cases: [{ input: 'x' }] }, results: { passed: 1, failed: 0 } },
        'descriptor.cases',
      ],
      [{ suite_id: 'refusal-policy', descriptor: two, results: { passed: 5, failed: 0 } }, 'results'],
      [{ suite_id: 'refusal-policy', descriptor: { ...two, suite_id: 'trial-determinism' }, results: { passed: 2, failed: 0 } }, 'descriptor.suite_id'],
    ] as const) {
      const r = await post(body);
      expect(r.status).toBe(400);
      expect(r.json.error.param).toBe(param);
    }
  });
});

describe('stores change behaviour', () => {
  it('a budget stops a run at reserve, with nothing held', async () => {
    const t = await tenant(10_000);
    await api.post('/v1/budgets', { name: 'tiny', scope: 'runs', period: 'day', limit_credits: 1 }, { key: t.key });
    const created = await api.post('/v1/agent-runs', { input: 'Review the supplier terms; then list renewal dates.' }, { key: t.key });
    const run = await waitForRun(api, t.key, created.json.run_id, isTerminal);
    expect(run.status).toBe('needs_attention');
    expect(run.failure.code).toBe('budget_exceeded');
    expect((await api.get('/v1/usage', { key: t.key })).json.open_reservations).toEqual([]);
    // Chat is outside a runs-scoped budget, but not outside an all-scoped one.
    expect((await api.post('/v1/chat/completions', { model: 'svc-workspace', messages: [{ role: 'user', content: 'hi' }] }, { key: t.key })).status).toBe(200);
    await api.post('/v1/budgets', { name: 'tiny-all', scope: 'all', period: 'month', limit_credits: 1 }, { key: t.key });
    const chat = await api.post('/v1/chat/completions', { model: 'svc-workspace', messages: [{ role: 'user', content: 'hi' }] }, { key: t.key });
    expect(chat.status).toBe(429);
    expect(chat.json.error.code).toBe('budget_exceeded');
    // Raising the budget lets runs through again.
    await api.post('/v1/budgets', { name: 'tiny', scope: 'runs', period: 'day', limit_credits: 1000 }, { key: t.key });
    await api.post('/v1/budgets', { name: 'tiny-all', scope: 'all', period: 'month', limit_credits: 1000 }, { key: t.key });
    const again = await waitForRun(api, t.key, (await api.post('/v1/agent-runs', { input: 'List renewal dates.' }, { key: t.key })).json.run_id, isTerminal);
    expect(again.status).toBe('needs_attention'); // admitted and run to its end (listing needs a model)
    expect(again.failure.code).toBe('unresolved_remainder');
  });

  it('a routing policy changes the provider chosen for chat', async () => {
    const upstream = http.createServer((req, res) => {
      req.resume();
      req.on('end', () =>
        res.setHeader('content-type', 'application/json').end(JSON.stringify({ choices: [{ message: { content: 'from upstream' }, finish_reason: 'stop' }] })),
      );
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    const app = await startTestApp({ UPSTREAM_BASE_URL: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1` });
    try {
      const t = await tenant();
      const client = await ApiClient.connect(app.url);
      const ask = () => client.post('/v1/chat/completions', { model: 'svc-workspace-quality', messages: [{ role: 'user', content: 'hello' }] }, { key: t.key });
      expect((await ask()).json.choices[0].message.content).not.toBe('from upstream');
      expect((await client.post('/v1/routing-policies', { model: 'svc-workspace-quality', provider: 'upstream' }, { key: t.key })).status).toBe(201);
      expect((await ask()).json.choices[0].message.content).toBe('from upstream');
      await client.post('/v1/routing-policies', { model: 'svc-workspace-quality', provider: 'local' }, { key: t.key });
      expect((await ask()).json.choices[0].message.content).not.toBe('from upstream');
    } finally {
      await app.close();
      upstream.closeAllConnections();
      await new Promise((r) => upstream.close(r));
    }
  });
});

describe('audit events', () => {
  it('record key, budget, routing, trace-export, approval and vault-forget writes, content-free', async () => {
    const t = await tenant();
    const ws = await createKey(stack.app.database.db, { tenant: t.name, kind: 'workspace' });
    const approver = await createKey(stack.app.database.db, { tenant: t.name, kind: 'approver', name: 'Audit Approver' });
    await api.post('/v1/budgets', { name: 'b1', scope: 'all', period: 'total', limit_credits: 100000 }, { key: t.key });
    await api.post('/v1/routing-policies', { model: 'svc-workspace', provider: 'local' }, { key: t.key });
    await api.post('/v1/trace-exports', { name: 'x', kind: 'webhook', endpoint: 'https://h.example.com' }, { key: t.key });
    const marker = `AUDIT-${randomBytes(4).toString('hex')}`;
    const entry = (await api.post('/v1/vault/entries', { subject: marker, content: marker }, { key: ws.secret })).json.id;
    await api.request('DELETE', `/v1/vault/entries/${entry}`, { key: ws.secret });
    const newKey = (await api.post('/v1/vault/keys', {}, { key: ws.secret })).json.id;
    const run = (await api.post('/v1/agent-runs', { input: 'Draft the note and tell the team that it is out.' }, { key: t.key })).json.run_id;
    await waitForRun(api, t.key, run, (r) => r.status === 'awaiting_approval');
    await api.post(`/v1/agent-runs/${run}/approval`, { decision: 'reject', reason: marker }, { key: approver.secret });

    const audit = await api.get('/v1/audit-events?limit=100', { key: t.key });
    expect(audit.status).toBe(200);
    const actions = audit.json.data.map((e: { action: string; target: string; key_id: string | null }) => [e.action, e.target, e.key_id]).reverse();
    expect(actions).toEqual([
      ['budget.upsert', 'budget:b1', t.keyId],
      ['routing_policy.upsert', 'model:svc-workspace', t.keyId],
      ['trace_export.upsert', 'trace_export:x', t.keyId],
      ['vault.forget', `vault_entry:${entry}`, ws.id],
      ['key.create', `key:${newKey}`, ws.id],
      ['run.approval.reject', `run:${run}`, approver.id],
    ]);
    expect(audit.text).not.toContain(marker);
    expect(audit.json.data.every((e: { digest: string }) => e.digest.startsWith('sha256:'))).toBe(true);
    const other = await tenant();
    expect((await api.get('/v1/audit-events', { key: other.key })).json.data).toEqual([]);
    expect((await api.get('/v1/audit-events?limit=101', { key: t.key })).status).toBe(400);
  });
});

describe('sandbox jobs', () => {
  it('validation errors and the closed admission are explicit error objects, never 401', async () => {
    const t = await tenant();
    const invalid = await api.post('/v1/sandbox-jobs', { profile: 'restricted', command: [] }, { key: t.key });
    expect(invalid.status).toBe(400);
    expect(invalid.json.error.param).toBe('command');
    const unknown = await api.post('/v1/sandbox-jobs', { profile: 'gpu', command: ['ls'] }, { key: t.key });
    expect(unknown.json.error.param).toBe('profile');
    const closed = await api.post('/v1/sandbox-jobs', { profile: 'restricted', command: ['ls'] }, { key: t.key });
    expect(closed.status).toBe(403);
    expect(closed.json.error.code).toBe('sandbox_jobs_disabled');
    expect((await api.post('/v1/sandbox-jobs', { profile: 'restricted', command: ['ls'] })).status).toBe(401);
  });

  it('with the second phase enabled, refuses explicitly: no runner is configured, so nothing is admitted that nothing would run', async () => {
    const app = await startTestApp({ SANDBOX_JOBS_ENABLED: 'true' });
    try {
      const t = await tenant();
      const client = await ApiClient.connect(app.url);
      const r = await client.post('/v1/sandbox-jobs', { profile: 'restricted', command: ['ls'] }, { key: t.key });
      expect(r.status).toBe(403);
      expect(r.json.error.code).toBe('sandbox_runner_not_configured');
      const capabilities = (await client.get('/v1/sandbox-capabilities', { key: t.key })).json;
      expect(capabilities).toMatchObject({ enabled: true, runner: 'not_configured', lifecycle: ['validated', 'refused'] });
      expect(capabilities.admission).toContain('sandbox_runner_not_configured');
    } finally {
      await app.close();
    }
  });
});

describe('the OpenAPI document covers every route of the contract', () => {
  const contractFile = path.resolve(projectRoot, '..', 'shared', 'api-contract.md');
  // The contract sits beside the repository (../shared), as in CI and the developers' checkouts.
  it.runIf(existsSync(contractFile))('lists each contract method and path', async () => {
    const contract = readFileSync(contractFile, 'utf8');
    const routes = [...contract.matchAll(/^\| (GET|POST|PUT|PATCH|DELETE) \| (\/[^ |]*) \|/gm)].map((m) => [m[1]!.toLowerCase(), m[2]!]);
    expect(routes.length).toBeGreaterThanOrEqual(45);
    const doc = (await api.get('/openapi.json')).json;
    const missing = routes.filter(([method, p]) => p !== '/v1/capabilities' && !doc.paths[p!]?.[method!]);
    expect(missing).toEqual([]);
  });
});

describe('claims derived from state', () => {
  it('a trace may name only a run of its own tenant', async () => {
    const owner = await tenant();
    const other = await tenant();
    const run = await storedRun(stack.app.database.db, owner.tenantId, 'x');
    const span = [{ name: 'db', duration_ms: 1, status: 'ok' }];
    const foreign = await stack.api.post('/v1/traces', { name: 'checkout', run_id: run.id, spans: span }, { key: other.key });
    expect(foreign.status).toBe(400);
    expect(foreign.json.error.param).toBe('run_id');
    expect((await stack.api.post('/v1/traces', { name: 'checkout', run_id: run.id, spans: span }, { key: owner.key })).status).toBe(201);
  });

  it('enterprise readiness reads the audit store and claims no planned SSO', async () => {
    const t = await tenant();
    await stack.api.post('/v1/budgets', { name: 'cap', scope: 'all', period: 'month', limit_credits: 10 }, { key: t.key }); // one audited write
    const checks = (await stack.api.get('/v1/enterprise/readiness', { key: t.key })).json.checks as { id: string; state: string; detail?: string }[];
    expect(checks.find((c) => c.id === 'audit_events')).toEqual({ id: 'audit_events', state: 'ready', detail: '1 of the newest 1000 kept for your tenant' });
    expect(checks.find((c) => c.id === 'sso')!.state).toBe('not_available');
  });
});
