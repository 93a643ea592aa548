// Hostile input gets a 4xx from the contract layer, never a 500 from Postgres,
// and a database failure logs no request content. Real API over a socket, real
// Postgres (and, for the failure drill, a database whose tables are gone).
import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { Writable } from 'node:stream';
import pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openPostgres } from '../db/client.ts';
import { createKey } from '../services/keys.ts';
import { grantCredits } from '../services/ledger.ts';
import { ApiClient } from './support/client.ts';
import { startTestApp, type TestApp } from './support/test-app.ts';

let app: TestApp;
let api: ApiClient;
let core: string;
let ws: string;
let approver: string;

beforeAll(async () => {
  app = await startTestApp();
  api = await ApiClient.connect(app.url);
  const name = `h-${randomBytes(5).toString('hex')}`;
  const key = await createKey(app.database.db, { tenant: name, kind: 'core' });
  await grantCredits(app.database.db, { tenantId: key.tenantId, amount: 1_000, entryKey: `g-${name}` });
  core = key.secret;
  ws = (await createKey(app.database.db, { tenant: name, kind: 'workspace' })).secret;
  approver = (await createKey(app.database.db, { tenant: name, kind: 'approver', name: 'Hostile Input' })).secret;
});
afterAll(() => app.close());

const NUL = '\u0000';

function expectBadRequest(
  r: { status: number; json: { error: { type: string; code: string; param: string | null } } },
  param: string | null,
  code = 'invalid_request',
) {
  expect(r.status).toBe(400);
  expect(r.json.error).toMatchObject({ type: 'invalid_request_error', code, param });
}

describe('NUL characters', () => {
  it.each([
    ['run input', () => api.post('/v1/agent-runs', { input: `Summarise${NUL}this` }, { key: core }), 'input'],
    ['a run list query', () => api.get(`/v1/agent-runs?q=a%00b`, { key: core }), 'q'],
    ['a path id', () => api.get('/v1/agent-runs/%00', { key: core }), 'run_id'],
    ['vault content', () => api.post('/v1/vault/entries', { subject: 'door', content: `code${NUL}4711` }, { key: ws }), 'content'],
    ['a vault tag', () => api.post('/v1/vault/entries', { subject: 'door', content: 'code', tags: [`a${NUL}`] }, { key: ws }), 'tags[0]'],
    [
      'chat memory.subject',
      () =>
        api.post(
          '/v1/chat/completions',
          { model: 'svc-workspace', messages: [{ role: 'user', content: 'hi' }], memory: { remember: true, subject: `x${NUL}` } },
          { key: core },
        ),
      'memory.subject',
    ],
    [
      'an object key in an opaque body',
      () => api.post('/v1/traces', { name: 'checkout', spans: [{ name: 'db', duration_ms: 1, status: 'ok', attributes: { [`k${NUL}`]: 1 } }] }, { key: core }),
      'spans[0].attributes.k\ufffd',
    ], // named, never echoed with the NUL
  ])('in %s is a 400 naming where', async (_what, send, param) => {
    expectBadRequest(await send(), param);
  });
});

describe('nesting', () => {
  it('a body nested 5,000 levels deep is a 400 at the parser, on every kind of route', async () => {
    const deep = `${'{"a":'.repeat(5_000)}1${'}'.repeat(5_000)}`;
    for (const [path, key] of [
      ['/v1/agent-runs', core],
      ['/v1/traces', core],
      ['/v1/provider-credentials/validate', core],
      ['/v1/trial', undefined],
    ] as const) {
      const r = await api.request('POST', path, { key, rawBody: deep, headers: { 'content-type': 'application/json' } });
      expectBadRequest(r, null);
      expect(r.json.error.message).toContain('nests deeper than 64 levels');
    }
  });

  it('64 levels still parse', async () => {
    let value: unknown = 1;
    for (let i = 0; i < 64; i++) value = { a: value }; // the leaf sits at depth 64, the limit
    const r = await api.post('/v1/agent-runs/not-a-run/approval', value, { key: approver });
    // Parsed and validated as any body is: the answer is about the body's fields, not its depth.
    expect(r.status).toBe(400);
    expect(r.json.error.message).not.toContain('nests deeper');
  });
});

describe('requests Koa never sees', () => {
  it('CONNECT is answered 405 with the contract error object, not a dropped connection', async () => {
    const { hostname, port } = new URL(app.url);
    const raw = await rawExchange(hostname, Number(port), `CONNECT example.com:443 HTTP/1.1\r\nhost: example.com:443\r\n\r\n`);
    expect(raw).toMatch(/^HTTP\/1\.1 405 /);
    expect(raw).toMatch(/\r\nx-request-id: req_/);
    const body = JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4));
    expect(body.error).toMatchObject({ type: 'invalid_request_error', code: 'method_not_allowed' });
  });
});

describe('one URL rule for every delivery target', () => {
  it.each([
    ['the metadata service over http', 'http://169.254.169.254/latest/meta-data'],
    ['the metadata service over https', 'https://169.254.169.254/latest/meta-data'],
    ['a private address', 'https://10.0.0.8/v1/traces'],
    ['plain http to a public name', 'http://otel.example.com/v1/traces'],
  ])('a trace export endpoint naming %s is refused, as a webhook endpoint is', async (_what, endpoint) => {
    const trace = await api.post('/v1/trace-exports', { name: 'otel', kind: 'otlp_http', endpoint }, { key: core });
    expectBadRequest(trace, 'endpoint');
    const webhook = await api.post('/v1/webhook-endpoints', { url: endpoint }, { key: core });
    expectBadRequest(webhook, 'url');
    expect(trace.json.error.message.replace('endpoint', 'url')).toBe(webhook.json.error.message);
  });
});

describe('numbers and lengths as sent', () => {
  it.each(['%2B10', '1e1', '%2010', '0x10', '10.0', ''])('limit=%s is a 400 naming limit', async (limit) => {
    const r = await api.get(`/v1/agent-runs?limit=${limit}`, { key: core });
    expectBadRequest(r, 'limit');
  });
  it('limit=10 is read', async () => {
    expect((await api.get('/v1/agent-runs?limit=10', { key: core })).status).toBe(200);
  });
  it('a vault subject of 201 characters as sent (199 once trimmed) is over its limit of 200', async () => {
    const padded = `  ${'s'.repeat(199)}`; // 201 as sent, 199 after trimming
    const r = await api.post('/v1/vault/entries', { subject: padded, content: 'code' }, { key: ws });
    expectBadRequest(r, 'subject');
    const fits = await api.post('/v1/vault/entries', { subject: ` ${'s'.repeat(199)}`, content: 'code' }, { key: ws });
    expect(fits.status).toBe(201);
  });
});

describe('a key that would reach object prototypes', () => {
  it.each([
    ['__proto__', '/v1/agent-runs', '{"input":"Summarise","__proto__":{"x":1}}', '__proto__'],
    [
      '__proto__',
      '/v1/traces',
      '{"name":"checkout","spans":[{"name":"db","duration_ms":1,"status":"ok","attributes":{"a":{"__proto__":{"x":1}}}}]}',
      'spans[0].attributes.a.__proto__',
    ],
  ])('a body with %s (at %s) is a 400 naming the key, not "not valid JSON"', async (key, path, rawBody, param) => {
    const r = await api.request('POST', path, {
      key: core,
      rawBody,
      headers: { 'content-type': 'application/json', 'idempotency-key': `proto-${randomBytes(4).toString('hex')}` },
    });
    expectBadRequest(r, param);
    expect(r.json.error.message).toContain(`"${key}"`);
  });
});

describe('dates and cursors outside what the database holds', () => {
  const forged = (t: string, id: string) => Buffer.from(JSON.stringify({ t, id })).toString('base64url');

  it.each([
    ['created_after in year 0', () => api.get('/v1/agent-runs?created_after=0000-01-01T00:00:00Z', { key: core }), 'created_after', 'invalid_request'],
    [
      'a cursor dated +270,000 years',
      () => api.get(`/v1/agent-runs?cursor=${forged('+270000-01-01T00:00:00.000Z', 'run_1')}`, { key: core }),
      'cursor',
      'invalid_cursor',
    ],
    [
      'a cursor dated -270,000 years',
      () => api.get(`/v1/agent-runs?cursor=${forged('-270000-01-01T00:00:00.000Z', 'run_1')}`, { key: core }),
      'cursor',
      'invalid_cursor',
    ],
    [
      'a cursor holding a NUL id',
      () => api.get(`/v1/vault/entries?cursor=${forged('2026-01-01T00:00:00.000Z', `x${NUL}`)}`, { key: ws }),
      'cursor',
      'invalid_cursor',
    ],
    [
      'chat memory.expires_at in year 0',
      () =>
        api.post(
          '/v1/chat/completions',
          { model: 'svc-workspace', messages: [{ role: 'user', content: 'hi' }], memory: { remember: true, expires_at: '0000-06-01T00:00:00Z' } },
          { key: core },
        ),
      'memory.expires_at',
      'invalid_request',
    ],
    [
      'chat memory.expires_at in the past',
      () =>
        api.post(
          '/v1/chat/completions',
          { model: 'svc-workspace', messages: [{ role: 'user', content: 'hi' }], memory: { remember: true, expires_at: '2001-01-01T00:00:00Z' } },
          { key: core },
        ),
      'memory.expires_at',
      'invalid_request',
    ],
  ])('%s is a 400', async (_what, send, param, code) => {
    expectBadRequest(await send(), param, code);
  });
});

describe('credential values through URLs and references', () => {
  const token = 'sk-proj-Abc123Def456Ghi789Jkl012';
  it.each([
    [
      'a trace export endpoint with a key in its query',
      () => api.post('/v1/trace-exports', { name: 'otel', kind: 'otlp_http', endpoint: `https://otel.example.com/v1/traces?api_key=${token}` }, { key: core }),
      'endpoint',
    ],
    [
      'a trace export endpoint with userinfo',
      () => api.post('/v1/trace-exports', { name: 'otel', kind: 'webhook', endpoint: 'https://admin:S3cr3t@hooks.example.com/t' }, { key: core }),
      'endpoint',
    ],
    [
      'an onboarding webhook_url with userinfo',
      () =>
        api.post(
          '/v1/onboarding/validate',
          { organization: 'Acme', jobs: ['do_work'], webhook_url: 'https://user:pass@hooks.example.com/runs' },
          { key: core },
        ),
      'webhook_url',
    ],
    [
      'a secret:// reference whose name is a token',
      () => api.post('/v1/provider-credentials/validate', { provider: 'upstream', reference: 'secret://ghp_abcdefghijklmnopqrstuvwxyz0123' }, { key: core }),
      'reference',
    ],
    [
      'a bearer token in a trace attribute',
      () =>
        api.post(
          '/v1/traces',
          { name: 'checkout', spans: [{ name: 'http.call', duration_ms: 3, status: 'ok', attributes: { auth: 'Bearer abcdefghijklmnop' } }] },
          { key: core },
        ),
      'spans[0].attributes.auth',
    ],
    [
      'a card number in a trace attribute',
      () =>
        api.post(
          '/v1/traces',
          { name: 'checkout', spans: [{ name: 'payment', duration_ms: 3, status: 'ok', attributes: { card: '4111 1111 1111 1111' } }] },
          { key: core },
        ),
      'spans[0].attributes.card',
    ],
    [
      'a chat context_url with userinfo',
      () =>
        api.post(
          '/v1/chat/completions',
          { model: 'svc-workspace', messages: [{ role: 'user', content: 'hi' }], context_url: 'https://me:pw@docs.example.com/page' },
          { key: core },
        ),
      'context_url',
    ],
  ])('%s is refused with credential_value_refused', async (_what, send, param) => {
    expectBadRequest(await send(), param, 'credential_value_refused');
  });

  it('a trace span name is an identifier, not free text', async () => {
    const r = await api.post(
      '/v1/traces',
      { name: 'checkout', spans: [{ name: 'SELECT * FROM users WHERE email = bob', duration_ms: 3, status: 'ok' }] },
      { key: core },
    );
    expectBadRequest(r, 'spans[0].name');
  });

  it('the trial redacts a secret-looking token instead of echoing it', async () => {
    const r = await api.post('/v1/trial', {
      recipe_id: 'bounded_work_plan',
      objective: `Rotate the key ${token} used by billing, then update the runbook.`,
      consent_to_process: true,
    });
    expect(r.status).toBe(200);
    expect(r.text).not.toContain(token);
    expect(r.text).toContain('[redacted]');
  });

  it('a plain reference and a plain endpoint are admitted', async () => {
    expect(
      (
        await api.post(
          '/v1/trace-exports',
          { name: 'otel', kind: 'otlp_http', endpoint: 'https://otel.example.com/v1/traces?tenant=acme', credential: 'env:OTEL_TOKEN' },
          { key: core },
        )
      ).status,
    ).toBe(201);
    expect((await api.post('/v1/provider-credentials/validate', { provider: 'upstream', reference: 'secret://prod/openai' }, { key: core })).status).toBe(200);
  });
});

describe('a database failure', () => {
  let broken: TestApp;
  let brokenApi: ApiClient;
  let brokenCore: string;
  let brokenWs: string;
  const lines: string[] = [];
  const dbName = `gws_broken_${randomBytes(4).toString('hex')}`;
  const admin = () => new pg.Client({ connectionString: inject('databaseUrl') });

  beforeAll(async () => {
    const a = admin();
    await a.connect();
    await a.query(`CREATE DATABASE "${dbName}"`);
    await a.end();
    const url = new URL(inject('databaseUrl'));
    url.pathname = `/${dbName}`;
    const database = openPostgres(url.toString());
    await database.migrate();
    const key = await createKey(database.db, { tenant: 'broken', kind: 'core' });
    await grantCredits(database.db, { tenantId: key.tenantId, amount: 1_000, entryKey: 'broken-grant' });
    brokenCore = key.secret;
    brokenWs = (await createKey(database.db, { tenant: 'broken', kind: 'workspace' })).secret;
    // Keys, tenants, the ledger and rate limits still work; what stores customer content is gone.
    for (const table of ['runs', 'memory_entries', 'traces']) await database.pool!.query(`ALTER TABLE ${table} RENAME TO ${table}_gone`);
    await database.close();
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    });
    broken = await startTestApp({ DATABASE_URL: url.toString() }, pino({ level: 'info' }, sink));
    brokenApi = await ApiClient.connect(broken.url);
  });
  afterAll(async () => {
    await broken.close();
    const a = admin();
    await a.connect();
    await a.query(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
    await a.end();
  });

  it('answers an opaque 500 and logs class, SQLSTATE and request id, never the content it was given', async () => {
    const marker = `marker-${randomBytes(6).toString('hex')}`;
    const sent = [
      await brokenApi.post('/v1/agent-runs', { input: `Summarise ${marker}` }, { key: brokenCore }),
      await brokenApi.post('/v1/vault/entries', { subject: marker, content: `The code is ${marker}` }, { key: brokenWs }),
      await brokenApi.post(
        '/v1/traces',
        { name: marker, spans: [{ name: 'db', duration_ms: 1, status: 'ok', attributes: { note: marker } }] },
        { key: brokenCore },
      ),
      await brokenApi.post(
        '/v1/chat/completions',
        { model: 'svc-workspace', messages: [{ role: 'user', content: `Tell me about ${marker}` }], memory: true },
        { key: brokenCore },
      ),
    ];
    for (const r of sent) {
      expect(r.status).toBe(500);
      expect(r.json.error).toMatchObject({ type: 'server_error', code: 'internal_error' });
      expect(r.text).not.toContain(marker);
    }
    const errorsLogged = lines
      .map((l) => JSON.parse(l) as { msg: string; request_id?: string; err?: { name: string; sqlstate?: string } })
      .filter((l) => l.msg === 'unhandled error');
    expect(errorsLogged).toHaveLength(4);
    for (const [i, l] of errorsLogged.entries()) {
      expect(l.err).toMatchObject({ sqlstate: '42P01' });
      expect(l.request_id).toBe(sent[i]!.headers.get('x-request-id'));
    }
    expect(lines.filter((l) => l.includes(marker))).toEqual([]);
  });
});

/** Sends raw bytes and reads until the server closes: for requests no HTTP client library sends as written. */
function rawExchange(host: string, port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, host, () => socket.write(request));
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk) => (received += chunk));
    socket.on('end', () => resolve(received));
    socket.on('error', reject);
  });
}
