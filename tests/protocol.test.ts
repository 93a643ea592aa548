// The HTTP protocol as the contract states it: which headers each status
// carries (the ApiClient checks every reply against /openapi.json, headers
// included), 429s a client can act on, the error code of a bad Idempotency-Key,
// 405 for every method on a known path, JSON media types, authentication
// before the body is read and failed authentication limited per address,
// routing policies that can be served, and the journey retention Schedule.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { Client, Connection } from '@temporalio/client';
import { and, eq } from 'drizzle-orm';
import OpenAI from 'openai';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { journeyEvents, ledgerHolds, routingPolicies, tenants } from '../db/schema.ts';
import { ensureJourneyRetentionSchedule, journeyRetentionScheduleId } from '../runtime/schedules.ts';
import { createKey } from '../services/keys.ts';
import { setRoute } from '../services/routing.ts';
import { ApiClient } from './support/client.ts';
import { newTenant, type RunStack, startRunStack, type TestTenant } from './support/run-stack.ts';
import { startTestApp, type TestApp } from './support/test-app.ts';

let stack: RunStack;
let api: ApiClient;
const db = () => stack.app.database.db;

beforeAll(async () => {
  stack = await startRunStack();
  api = stack.api;
});
afterAll(() => stack.close());

const hi = { model: 'svc-workspace', messages: [{ role: 'user', content: 'hi' }] };
/** A documentation address of its own per test run, so per-address counters shared through Postgres start empty. */
const freshAddress = () => `198.18.${randomBytes(1)[0]}.${randomBytes(1)[0]! % 250}`;

/** A raw request (any method, any header), for what fetch refuses to send. */
function raw(method: string, url: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: http.IncomingHttpHeaders; json: any }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, json: text ? JSON.parse(text) : undefined }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the OpenAPI document states the headers each status is sent with', () => {
  it('documents x-request-id on every response, RateLimit on every 401 of a limited route, and a way to act on every 429', async () => {
    const doc = (await api.get('/openapi.json')).json;
    type Header = { required?: boolean };
    let checked = 0;
    for (const [path, item] of Object.entries(
      doc.paths as Record<string, Record<string, { responses: Record<string, { headers?: Record<string, Header> }> }>>,
    )) {
      for (const [method, op] of Object.entries(item)) {
        for (const [status, response] of Object.entries(op.responses)) {
          const headers = response.headers ?? {};
          const where = `${method.toUpperCase()} ${path} ${status}`;
          expect(headers['x-request-id']?.required, where).toBe(true);
          if (status === '401' && headers.RateLimit) expect(headers.RateLimit.required, `${where}: failed authentication spends a point`).toBe(true);
          if (status === '429') {
            // Either always retryable after Retry-After, or it says when it is not.
            expect(headers['Retry-After']?.required || headers['x-should-retry'] !== undefined, where).toBe(true);
          }
          if (status === '503') expect(headers['Retry-After']?.required, where).toBe(true);
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(100);
    const chat429 = doc.paths['/v1/chat/completions'].post.responses['429'];
    expect(chat429.headers['Retry-After'].required ?? false).toBe(false);
    expect(chat429.headers['x-should-retry'].schema).toMatchObject({ const: 'false' });
    expect(chat429.description).toContain('insufficient_credits');
  });

  it('a 401 carries the RateLimit headers of the per-address policy (authentication runs before the per-key limit)', async () => {
    const r = await api.get('/v1/models', { key: `gws_core_${'Q'.repeat(43)}`, headers: { 'x-forwarded-for': freshAddress() } });
    expect(r.status).toBe(401);
    expect(r.headers.get('ratelimit-policy')).toMatch(/^"unauthenticated";q=\d+;w=\d+$/);
    expect(r.headers.get('retry-after')).toBeNull();
  });
});

describe('429s a client can act on', () => {
  it('insufficient_credits has no Retry-After and says x-should-retry: false, which the OpenAI client obeys', async () => {
    const t = await newTenant(db(), 0);
    const direct = await api.post('/v1/chat/completions', hi, { key: t.key });
    expect(direct.status).toBe(429);
    expect(direct.json.error.code).toBe('insufficient_credits');
    expect(direct.headers.get('retry-after')).toBeNull();
    expect(direct.headers.get('x-should-retry')).toBe('false');
    expect(direct.headers.get('ratelimit')).toMatch(/^"per-key";/);

    let calls = 0;
    const client = new OpenAI({
      apiKey: t.key,
      baseURL: `${stack.app.url}/v1`,
      maxRetries: 3,
      fetch: (input, init) => {
        calls++;
        return fetch(input, init);
      },
    });
    const err = await client.chat.completions.create({ model: 'svc-workspace', messages: [{ role: 'user', content: 'hi' }] }).catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect(err.code).toBe('insufficient_credits');
    expect(calls, 'not retried').toBe(1);
  });

  it('budget_exceeded is not retryable either', async () => {
    const t = await newTenant(db(), 100_000);
    expect((await api.post('/v1/budgets', { name: 'tiny', scope: 'chat', period: 'total', limit_credits: 1 }, { key: t.key })).status).toBe(201);
    const r = await api.post('/v1/chat/completions', hi, { key: t.key });
    expect(r.status).toBe(429);
    expect(r.json.error.code).toBe('budget_exceeded');
    expect(r.headers.get('retry-after')).toBeNull();
    expect(r.headers.get('x-should-retry')).toBe('false');
  });
});

describe('Idempotency-Key', () => {
  const tooLong = 'k'.repeat(256);
  it('an invalid key on creation is 400 invalid_idempotency_key', async () => {
    const t = await newTenant(db());
    for (const key of [tooLong, 'has space']) {
      const r = await api.post(
        '/v1/agent-runs',
        { input: 'Summarise the notes. The launch moved to May.' },
        { key: t.key, headers: { 'idempotency-key': key } },
      );
      expect(r.status).toBe(400);
      expect(r.json.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_idempotency_key', param: 'Idempotency-Key' });
    }
  });
  it('an invalid key on an approval is 400 invalid_idempotency_key', async () => {
    const t = await newTenant(db());
    const r = await api.post('/v1/agent-runs/run_nope/approval', { decision: 'approve' }, { key: t.approverKey, headers: { 'idempotency-key': tooLong } });
    expect(r.status).toBe(400);
    expect(r.json.error).toMatchObject({ code: 'invalid_idempotency_key', param: 'Idempotency-Key' });
  });
});

describe('methods', () => {
  it('HEAD on a GET route answers its status and headers without a body; OPTIONS on a known path lists Allow', async () => {
    const head = await raw('HEAD', `${stack.app.url}/health`);
    expect(head.status).toBe(200);
    expect(head.headers['content-type']).toContain('application/json');
    expect(head.headers['x-request-id']).toMatch(/^req_[0-9a-f]{24}$/);
    expect(head.json).toBeUndefined();
    const options = await raw('OPTIONS', `${stack.app.url}/v1/agent-runs`);
    expect(options.status).toBe(200);
    expect(String(options.headers.allow).split(', ').sort()).toEqual(['GET', 'HEAD', 'POST']);
    expect((await raw('OPTIONS', `${stack.app.url}/v1/nowhere`)).status).toBe(404);
  });

  it('TRACE on a known path is 405 with Allow; on an unknown path 404', async () => {
    const known = await raw('TRACE', `${stack.app.url}/v1/jobs`);
    expect(known.status).toBe(405);
    expect(known.headers.allow).toContain('GET');
    expect(known.json.error).toMatchObject({ code: 'method_not_allowed', request_id: known.headers['x-request-id'] });
    const unknown = await raw('TRACE', `${stack.app.url}/v1/nowhere`);
    expect(unknown.status).toBe(404);
    expect(unknown.json.error.code).toBe('not_found');
    expect(unknown.headers.allow).toBeUndefined();
  });
});

describe('request media types', () => {
  const trial = JSON.stringify({ recipe_id: 'bounded_work_plan', objective: 'Tidy the wiki', consent_to_process: true });
  const send = (contentType: string, body = trial) => api.request('POST', '/v1/trial', { rawBody: body, headers: { 'content-type': contentType } });

  it('takes application/json, with no charset or charset=utf-8', async () => {
    expect((await send('application/json')).status).toBe(200);
    expect((await send('application/json; charset=utf-8')).status).toBe(200);
    expect((await send('Application/JSON; charset="UTF-8"')).status).toBe(200);
  });
  it('answers 415 for +json suffix types and other charsets', async () => {
    for (const type of [
      'application/foo+json',
      'application/vnd.api+json',
      'application/json-patch+json',
      'application/json; charset=utf-16',
      'application/json; charset=iso-8859-1',
    ]) {
      const r = await send(type);
      expect(r.status, type).toBe(415);
      expect(r.json.error.code, type).toBe('unsupported_media_type');
    }
  });
});

describe('authentication before the body, and failed authentication limited per address', () => {
  let limited: TestApp;
  let client: ApiClient;
  beforeAll(async () => {
    limited = await startTestApp({ TRIAL_RATE_LIMIT_POINTS: '2', RATE_LIMIT_POINTS: '1', TRUST_PROXY: 'true' });
    client = await ApiClient.connect(limited.url);
  });
  afterAll(() => limited.close());

  it('answers 401 without reading the body, then 429 once the address spent its budget', async () => {
    const from = freshAddress();
    const headers = { 'x-forwarded-for': from, 'content-type': 'application/json' };
    const unknownKey = `gws_core_${'Z'.repeat(43)}`;
    // Malformed JSON: were it parsed first, this would be 400 invalid_json.
    const first = await client.request('POST', '/v1/chat/completions', { key: unknownKey, rawBody: '{"model": ', headers });
    expect(first.status).toBe(401);
    expect(first.headers.get('ratelimit')).toMatch(/^"unauthenticated";r=1;t=\d+$/);
    // Past the body limit: were it read first, this would be 413.
    const second = await client.request('POST', '/v1/chat/completions', { rawBody: JSON.stringify({ pad: 'x'.repeat(1_200_000) }), headers });
    expect(second.status).toBe(401);
    const third = await client.request('POST', '/v1/chat/completions', { key: unknownKey, body: hi, headers: { 'x-forwarded-for': from } });
    expect(third.status).toBe(429);
    expect(third.json.error).toMatchObject({ type: 'rate_limited', code: 'rate_limit_exceeded' });
    expect(Number(third.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(third.headers.get('ratelimit-policy')).toBe('"unauthenticated";q=2;w=60');

    // Another address is not affected, and a valid key from this one is limited per key, not per address.
    expect((await client.get('/v1/models', { key: unknownKey, headers: { 'x-forwarded-for': freshAddress() } })).status).toBe(401);
    const valid = await createKey(limited.database.db, { tenant: `proto-${randomBytes(4).toString('hex')}`, kind: 'core' });
    const ok = await client.get('/v1/models', { key: valid.secret, headers: { 'x-forwarded-for': from } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('ratelimit-policy')).toBe('"per-key";q=1;w=60');
  });

  it('a key past its limit gets 429 before its body is read', async () => {
    const valid = await createKey(limited.database.db, { tenant: `proto-${randomBytes(4).toString('hex')}`, kind: 'core' });
    expect((await client.get('/v1/models', { key: valid.secret })).status).toBe(200);
    const r = await client.request('POST', '/v1/chat/completions', {
      key: valid.secret,
      rawBody: '{"model": ',
      headers: { 'content-type': 'application/json' },
    });
    expect(r.status).toBe(429);
    expect(r.json.error.code).toBe('rate_limit_exceeded');
  });

  it('keeps the public trial limited per address', async () => {
    const from = { headers: { 'x-forwarded-for': freshAddress() } };
    const body = { recipe_id: 'bounded_work_plan', objective: 'Tidy the wiki', consent_to_process: true };
    expect((await client.post('/v1/trial', body, from)).status).toBe(200);
    expect((await client.post('/v1/trial', body, from)).status).toBe(200);
    const third = await client.post('/v1/trial', body, from);
    expect(third.status).toBe(429);
    expect(third.headers.get('ratelimit-policy')).toBe('"trial";q=2;w=60');
  });
});

describe('routing policies name configured providers only', () => {
  it('refuses a policy for an unconfigured upstream with 400 provider_not_configured, recording nothing', async () => {
    const t = await newTenant(db());
    const r = await api.post('/v1/routing-policies', { model: 'svc-workspace', provider: 'upstream' }, { key: t.key });
    expect(r.status).toBe(400);
    expect(r.json.error).toMatchObject({ type: 'invalid_request_error', code: 'provider_not_configured', param: 'provider' });
    expect((await api.get('/v1/routing-policies', { key: t.key })).json.data).toEqual([]);
    expect((await api.post('/v1/routing-policies', { model: 'svc-workspace', provider: 'local' }, { key: t.key })).status).toBe(201);
  });

  it('the CLI refuses it too', async () => {
    const tenant = `proto-cli-${randomBytes(4).toString('hex')}`;
    const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: inject('databaseUrl') };
    delete env.UPSTREAM_BASE_URL;
    const run = (provider: string) =>
      new Promise<{ code: number; stderr: string }>((resolve) => {
        execFile(
          'npm',
          ['run', '--silent', 'tenants', '--', 'routing', 'set', '--tenant', tenant, '--model', 'svc-workspace', '--provider', provider],
          { env, encoding: 'utf8', timeout: 60_000 },
          (err, _out, stderr) => resolve({ code: err ? Number(err.code ?? 1) : 0, stderr }),
        );
      });
    const refused = await run('upstream');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('not configured');
    // Refused before anything is written: not even the tenant exists.
    expect(await db().select().from(tenants).where(eq(tenants.name, tenant))).toEqual([]);
    expect((await run('local')).code).toBe(0);
    const [created] = await db().select().from(tenants).where(eq(tenants.name, tenant));
    expect(await db().select({ provider: routingPolicies.provider }).from(routingPolicies).where(eq(routingPolicies.tenantId, created!.id))).toEqual([
      { provider: 'local' },
    ]);
  });

  it('a policy that outlived its provider is 409 model_not_routable for chat and the estimate, holding nothing', async () => {
    const t: TestTenant = await newTenant(db());
    await setRoute(db(), t.tenantId, 'svc-workspace', 'upstream'); // written when the deployment had an upstream
    const chat = await api.post('/v1/chat/completions', hi, { key: t.key });
    expect(chat.status).toBe(409);
    expect(chat.json.error).toMatchObject({ type: 'invalid_request_error', code: 'model_not_routable', param: 'model' });
    expect(chat.headers.get('x-should-retry')).toBe('false');
    expect(await db().select().from(ledgerHolds).where(eq(ledgerHolds.tenantId, t.tenantId))).toEqual([]);
    const estimate = await api.post('/v1/usage/estimate', { input: 'Summarise the notes. The launch moved to May.' }, { key: t.key });
    expect(estimate.status).toBe(409);
    expect(estimate.json.error.code).toBe('model_not_routable');
    // Other models still route.
    expect((await api.post('/v1/chat/completions', { ...hi, model: 'svc-workspace-fast' }, { key: t.key })).status).toBe(200);
  });
});

describe('journey retention', () => {
  let connection: Connection;
  let temporal: Client;
  beforeAll(async () => {
    connection = await Connection.connect({ address: inject('temporalAddress') });
    temporal = new Client({ connection });
  });
  afterAll(() => connection.close());

  it('a Schedule purges expired events of a chat-only tenant, which never ends a run', async () => {
    const t = await newTenant(db());
    expect((await api.post('/v1/chat/completions', hi, { key: t.key })).status).toBe(200);
    const old = new Date(Date.now() - 40 * 86_400_000);
    const expiredKey = `proto-expired-${randomBytes(4).toString('hex')}`;
    await db().insert(journeyEvents).values({ tenantId: t.tenantId, runId: null, kind: 'chat.completed', state: 'stop', eventKey: expiredKey, createdAt: old });
    const events = () => db().select().from(journeyEvents).where(eq(journeyEvents.tenantId, t.tenantId));
    expect(await events()).toHaveLength(2);

    const logger = pino({ level: 'silent' });
    await ensureJourneyRetentionSchedule(temporal, stack.taskQueue, logger);
    await ensureJourneyRetentionSchedule(temporal, stack.taskQueue, logger, 1_800); // updated in place
    const handle = temporal.schedule.getHandle(journeyRetentionScheduleId(stack.taskQueue));
    try {
      const described = await handle.describe();
      expect(described.action).toMatchObject({ type: 'startWorkflow', workflowType: 'purgeJourneyEventsWorkflow', taskQueue: stack.taskQueue });
      expect(described.spec.intervals?.map((i) => i.every)).toEqual([1_800_000]);
      expect(described.policies.overlap).toBe('SKIP');
      await handle.trigger();
      const deadline = Date.now() + 30_000;
      while (
        (
          await db()
            .select()
            .from(journeyEvents)
            .where(and(eq(journeyEvents.tenantId, t.tenantId), eq(journeyEvents.eventKey, expiredKey)))
        ).length > 0
      ) {
        if (Date.now() > deadline) throw new Error('the expired event was not purged');
        await new Promise((r) => setTimeout(r, 200));
      }
      // The event inside the retention window stays.
      expect((await events()).map((e) => e.kind)).toEqual(['chat.completed']);
    } finally {
      await handle.delete();
    }
  });
});
