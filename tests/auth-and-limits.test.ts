// Bearer auth on core routes, per-key and trial rate limits, and 503 when a
// dependency is down: each against the real server and database.
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey, revokeKey } from '../services/keys.ts';
import { ApiClient } from './support/client.ts';
import { startTestApp, type TestApp } from './support/test-app.ts';

let app: TestApp;
let api: ApiClient;
const tenant = `auth-${Date.now()}`;

beforeAll(async () => {
  app = await startTestApp();
  api = await ApiClient.connect(app.url);
});
afterAll(() => app.close());

function expectInvalidKey(r: { status: number; json: { error: Record<string, unknown> } }) {
  expect(r.status).toBe(401);
  expect(r.json.error).toMatchObject({ type: 'authentication_error', code: 'invalid_api_key', param: null });
}

describe('GET /v1/models with a core key', () => {
  it('lists exactly the admitted model ids', async () => {
    const key = await createKey(app.database.db, { tenant, kind: 'core' });
    const r = await api.get('/v1/models', { key: key.secret });
    expect(r.status).toBe(200);
    expect(r.json.data.map((m: { id: string }) => m.id)).toEqual(['svc-workspace', 'svc-workspace-fast', 'svc-workspace-quality']);
  });

  it('refuses a missing key', async () => {
    expectInvalidKey(await api.get('/v1/models'));
  });
  it('refuses a malformed Authorization header', async () => {
    expectInvalidKey(await api.get('/v1/models', { headers: { authorization: 'Basic dXNlcjpwYXNz' } }));
  });
  it('refuses an unknown key of the right shape', async () => {
    expectInvalidKey(await api.get('/v1/models', { key: `gws_core_${'A'.repeat(43)}` }));
  });
  it('refuses a revoked key', async () => {
    const key = await createKey(app.database.db, { tenant, kind: 'core' });
    expect((await api.get('/v1/models', { key: key.secret })).status).toBe(200);
    expect(await revokeKey(app.database.db, key.id)).toBe(true);
    expectInvalidKey(await api.get('/v1/models', { key: key.secret }));
  });
  it('refuses a workspace key on a core route', async () => {
    const key = await createKey(app.database.db, { tenant, kind: 'workspace' });
    expectInvalidKey(await api.get('/v1/models', { key: key.secret }));
  });
});

describe('rate limits', () => {
  it('limits per key with RateLimit headers and answers 429 with Retry-After', async () => {
    const limited = await startTestApp({ RATE_LIMIT_POINTS: '2', RATE_LIMIT_WINDOW_SECONDS: '60' });
    try {
      const client = await ApiClient.connect(limited.url);
      const key = await createKey(limited.database.db, { tenant, kind: 'core' });
      const first = await client.get('/v1/models', { key: key.secret });
      expect(first.status).toBe(200);
      expect(first.headers.get('ratelimit-policy')).toBe('"per-key";q=2;w=60');
      expect(first.headers.get('ratelimit')).toMatch(/^"per-key";r=1;t=\d+$/);
      expect((await client.get('/v1/models', { key: key.secret })).status).toBe(200);
      const third = await client.get('/v1/models', { key: key.secret });
      expect(third.status).toBe(429);
      expect(third.json.error).toMatchObject({ type: 'rate_limited', code: 'rate_limit_exceeded' });
      const retryAfter = Number(third.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      // Another key has its own budget.
      const other = await createKey(limited.database.db, { tenant, kind: 'core' });
      expect((await client.get('/v1/models', { key: other.secret })).status).toBe(200);
    } finally {
      await limited.close();
    }
  });

  it('shares per-key counters between replicas through Postgres', async () => {
    const replicas = [
      await startTestApp({ RATE_LIMIT_POINTS: '2', RATE_LIMIT_WINDOW_SECONDS: '60' }),
      await startTestApp({ RATE_LIMIT_POINTS: '2', RATE_LIMIT_WINDOW_SECONDS: '60' }),
    ];
    try {
      const [a, b] = await Promise.all(replicas.map((r) => ApiClient.connect(r.url)));
      const key = await createKey(replicas[0]!.database.db, { tenant, kind: 'core' });
      expect((await a!.get('/v1/models', { key: key.secret })).status).toBe(200);
      expect((await b!.get('/v1/models', { key: key.secret })).status).toBe(200);
      // Each replica has seen one request, but together they spent the key's two points.
      expect((await a!.get('/v1/models', { key: key.secret })).status).toBe(429);
      expect((await b!.get('/v1/models', { key: key.secret })).status).toBe(429);
    } finally {
      await Promise.all(replicas.map((r) => r.close()));
    }
  });

  it('limits the trial per client address', async () => {
    const limited = await startTestApp({ TRIAL_RATE_LIMIT_POINTS: '1', TRUST_PROXY: 'true' });
    try {
      const client = await ApiClient.connect(limited.url);
      const body = { recipe_id: 'bounded_work_plan', objective: 'Tidy the wiki', consent_to_process: true };
      const from = (ip: string) => ({ headers: { 'x-forwarded-for': ip } });
      const ip = `198.51.100.${Date.now() % 250}`;
      expect((await client.post('/v1/trial', body, from(ip))).status).toBe(200);
      const second = await client.post('/v1/trial', body, from(ip));
      expect(second.status).toBe(429);
      expect(second.json.error.code).toBe('rate_limit_exceeded');
      expect(Number(second.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect((await client.post('/v1/trial', body, from('203.0.113.9'))).status).toBe(200);
    } finally {
      await limited.close();
    }
  });
});

describe('unavailable dependencies', () => {
  it('answers /health with 503 when Temporal is unreachable', async () => {
    const down = await startTestApp({ TEMPORAL_ADDRESS: '127.0.0.1:1' });
    try {
      const r = await (await ApiClient.connect(down.url)).get('/health');
      expect(r.status).toBe(503);
      expect(r.json.error).toMatchObject({ type: 'server_error', code: 'service_unavailable' });
      expect(r.json.error.message).toContain('temporal');
    } finally {
      await down.close();
    }
  });

  it('answers /health with 503 when the database is unreachable, while the trial still works without it', async () => {
    const down = await startTestApp({ DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none' });
    try {
      const client = await ApiClient.connect(down.url);
      const health = await client.get('/health');
      expect(health.status).toBe(503);
      expect(health.json.error.message).toContain('database');
      // The trial never touches the database: it works with the database gone.
      const r = await client.post('/v1/trial', { recipe_id: 'research_question_map', objective: 'Map supplier risk in Asia', consent_to_process: true });
      expect(r.status).toBe(200);
      expect(r.json.receipt.persisted).toBe(false);
      // An authenticated route cannot check the key: 503, not 401 or 500.
      const models = await client.get('/v1/models', { key: `gws_core_${'B'.repeat(43)}` });
      expect(models.status).toBe(503);
    } finally {
      await down.close();
    }
  });
});

describe('request logs', () => {
  it('log id, route, status and latency, never bodies or credentials', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const logged = await startTestApp({}, pino({ level: 'info' }, sink));
    try {
      const client = await ApiClient.connect(logged.url);
      const key = await createKey(logged.database.db, { tenant, kind: 'core' });
      const marker = 'MARKER-7f3a-objective-text';
      await client.post('/v1/trial', { recipe_id: 'bounded_work_plan', objective: marker, consent_to_process: true });
      await client.get('/v1/models', { key: key.secret });
      const all = lines.join('');
      expect(all).not.toContain(marker);
      expect(all).not.toContain(key.secret);
      const trialLine = lines.map((l) => JSON.parse(l)).find((l) => l.route === '/v1/trial');
      expect(trialLine).toMatchObject({ method: 'POST', status: 200, msg: 'request' });
      expect(trialLine.request_id).toMatch(/^req_/);
      expect(typeof trialLine.latency_ms).toBe('number');
    } finally {
      await logged.close();
    }
  });
});
