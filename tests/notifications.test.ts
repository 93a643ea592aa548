// Completion notifications (extension): the webhook-endpoint routes, and the
// delivery activity against a local receiver: Standard Webhooks signatures that
// verify, one webhook-id for every attempt and endpoint, content-free bodies, the
// delivery log, and the final attempt recorded failed. The end-to-end test (a run
// notifying through the workflow) is at the bottom.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, Connection } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { and, eq } from 'drizzle-orm';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { notificationActivities, NOTIFICATION_RETRY } from '../activities/notify.ts';
import { auditEvents, journeyEvents, webhookDeliveries } from '../db/schema.ts';
import { MAX_WEBHOOK_ENDPOINTS, NOTIFICATION_MAX_ATTEMPTS } from '../domain/notifications.ts';
import { deliveryUrlProblem } from '../domain/delivery-url.ts';
import type { NotificationEvent } from '../domain/runs/progress.ts';
import { ApiClient } from './support/client.ts';
import { freePort } from './support/free-port.ts';
import { storedRun, isTerminal, newTenant, type RunStack, startRunStack, type TestTenant, waitForRun } from './support/run-stack.ts';
import { startTestApp, type TestApp } from './support/test-app.ts';
import { testDataConverter } from './support/payload-codec.ts';
import { until } from './support/until.ts';

/** The lead flips this once workflows/agent-run.ts calls notificationTargets / deliverNotification. */
const WORKFLOW_SENDS_NOTIFICATIONS = true;

const PUBLIC_BASE = 'https://api.example.test';
/** The mock activity environment logs each (expected) failed attempt as a warning otherwise. */
const silentLogger = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} };
const SECRET_INPUT = 'Quarterly numbers: the Falcon deal closes at 4.2M; summarise the timeline. The deal was signed in May.';

interface Delivery {
  headers: Record<string, string>;
  raw: string;
}

/** A webhook receiver that keeps raw bodies (signatures are over the exact bytes) and answers scripted statuses (204 once the script runs out). */
async function receiver(options: { delayMs?: number } = {}) {
  const received: Delivery[] = [];
  const script: number[] = [];
  const server = http.createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (raw += c));
    req.on('end', () => {
      const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : (v ?? '')]));
      received.push({ headers, raw });
      const status = script.shift() ?? 204;
      const extra = status >= 300 && status < 400 ? { location: 'http://127.0.0.1:9/elsewhere' } : {};
      setTimeout(() => res.writeHead(status, extra).end(status >= 400 ? 'receiver says no' : ''), options.delayMs ?? 0);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return {
    url,
    received,
    /** The statuses the next requests get, in order. */
    answer(...statuses: number[]) {
      script.splice(0, script.length, ...statuses);
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

let app: TestApp;
let api: ApiClient;
let db: TestApp['database']['db'];

beforeAll(async () => {
  app = await startTestApp();
  api = await ApiClient.connect(app.url);
  db = app.database.db;
});
afterAll(async () => {
  await app?.close();
});

const createEndpoint = (t: TestTenant, body: object) => api.post('/v1/webhook-endpoints', body, { key: t.key });

async function registered(t: TestTenant, url: string, events?: NotificationEvent[]): Promise<{ id: string; secret: string }> {
  const r = await createEndpoint(t, { url, ...(events ? { events } : {}) });
  expect(r.status, r.text).toBe(201);
  return { id: r.json.id, secret: r.json.secret };
}

async function runOf(t: TestTenant): Promise<string> {
  return (await storedRun(db, t.tenantId, SECRET_INPUT)).id;
}

const deliveryRows = (runId: string) => db.select().from(webhookDeliveries).where(eq(webhookDeliveries.runId, runId));

describe('webhook endpoint routes', () => {
  it('creates an endpoint, returns its secret once, and lists it with a hint only', async () => {
    const t = await newTenant(db);
    const created = await createEndpoint(t, { url: 'https://hooks.example.com/gws', description: 'ops receiver' });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({
      object: 'webhook_endpoint',
      url: 'https://hooks.example.com/gws',
      events: ['run.awaiting_approval', 'run.completed', 'run.failed', 'run.needs_attention'],
      description: 'ops receiver',
    });
    expect(created.json.id).toMatch(/^we_[0-9a-f]{20}$/);
    const secret: string = created.json.secret;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(Buffer.from(secret.slice('whsec_'.length), 'base64')).toHaveLength(24);
    expect(() => new Webhook(secret)).not.toThrow();
    expect(created.json.secret_hint).toBe(`whsec_…${secret.slice(-4)}`);

    const listed = await api.get('/v1/webhook-endpoints', { key: t.key });
    expect(listed.status).toBe(200);
    expect(listed.json).toMatchObject({ object: 'list', has_more: false });
    const { secret: _shownOnce, ...withoutSecret } = created.json;
    expect(listed.json.data).toEqual([withoutSecret]);
    expect(listed.text).not.toContain(secret.slice('whsec_'.length));

    const one = await api.get(`/v1/webhook-endpoints/${created.json.id}`, { key: t.key });
    expect(one.status).toBe(200);
    expect(one.json.secret).toBeUndefined();
    expect(one.text).not.toContain(secret.slice('whsec_'.length));
  });

  it('audits creation and deletion without the secret', async () => {
    const t = await newTenant(db);
    const { id, secret } = await registered(t, 'https://hooks.example.com/audit');
    expect((await api.request('DELETE', `/v1/webhook-endpoints/${id}`, { key: t.key })).status).toBe(200);
    const events = await db
      .select()
      .from(auditEvents)
      .where(and(eq(auditEvents.tenantId, t.tenantId), eq(auditEvents.target, `webhook_endpoint:${id}`)));
    expect(events.map((e) => e.action).sort()).toEqual(['webhook_endpoint.create', 'webhook_endpoint.delete']);
    expect(events.every((e) => e.keyId !== null && !JSON.stringify(e).includes(secret))).toBe(true);
  });

  it('subscribes to the events asked for', async () => {
    const t = await newTenant(db);
    const r = await createEndpoint(t, { url: 'https://hooks.example.com/a', events: ['run.failed', 'run.completed'] });
    expect(r.status).toBe(201);
    expect(r.json.events).toEqual(['run.failed', 'run.completed']);
    expect(r.json.description).toBeNull();
  });

  it.each([
    ['plain http to a public host', { url: 'http://hooks.example.com/x' }, 'url'],
    ['not a URL', { url: 'hooks.example.com/x' }, 'url'],
    ['another scheme', { url: 'ftp://hooks.example.com/x' }, 'url'],
    ['a fragment', { url: 'https://hooks.example.com/x#frag' }, 'url'],
    ['a URL over 2048 characters', { url: `https://hooks.example.com/${'a'.repeat(2030)}` }, 'url'],
    ['a cloud metadata address', { url: 'https://169.254.169.254/latest' }, 'url'],
    ['a private address', { url: 'https://10.1.2.3/hook' }, 'url'],
    ['an IPv6 unique-local address', { url: 'https://[fd00::1]/hook' }, 'url'],
    ['no url', { events: ['run.completed'] }, 'url'],
    ['no events', { url: 'https://hooks.example.com/x', events: [] }, 'events'],
    ['a repeated event', { url: 'https://hooks.example.com/x', events: ['run.failed', 'run.failed'] }, 'events'],
    ['an unknown event', { url: 'https://hooks.example.com/x', events: ['run.started'] }, 'events[0]'],
    ['a long description', { url: 'https://hooks.example.com/x', description: 'd'.repeat(201) }, 'description'],
  ])('refuses %s (400, param names it)', async (_name, body, param) => {
    const t = await newTenant(db, 0);
    const r = await createEndpoint(t, body);
    expect(r.status).toBe(400);
    expect(r.json.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_request', param });
    expect((await api.get('/v1/webhook-endpoints', { key: t.key })).json.data).toEqual([]);
  });

  it('refuses credentials in the URL (userinfo or a key in the query) and unknown fields', async () => {
    const t = await newTenant(db, 0);
    for (const url of ['https://user:pass@hooks.example.com/x', 'https://hooks.example.com/x?token=abc123']) {
      const r = await createEndpoint(t, { url });
      expect(r.status).toBe(400);
      expect(r.json.error).toMatchObject({ code: 'credential_value_refused', param: 'url' });
      expect(r.text).not.toContain('pass@');
    }
    const extra = await createEndpoint(t, { url: 'https://hooks.example.com/x', secret: 'mine' });
    expect(extra.status).toBe(400);
    expect(extra.json.error).toMatchObject({ code: 'unsupported_parameter', param: 'secret' });
  });

  it('accepts loopback http outside production, and the URL rules refuse it in production', async () => {
    const t = await newTenant(db, 0);
    for (const url of ['http://127.0.0.1:9/hook', 'http://localhost:9/hook', 'http://[::1]:9/hook']) {
      expect((await createEndpoint(t, { url })).status, url).toBe(201);
    }
    const production = { allowLoopback: false };
    expect(deliveryUrlProblem('http://127.0.0.1:9/hook', production)).toMatch(/outside production/);
    expect(deliveryUrlProblem('https://localhost/hook', production)).toMatch(/outside production/);
    expect(deliveryUrlProblem('https://hooks.example.com/x', production)).toBeNull();
    expect(deliveryUrlProblem('https://203.0.113.7/x', production)).toBeNull();
  });

  it(`allows at most ${MAX_WEBHOOK_ENDPOINTS} live endpoints per tenant (409 webhook_endpoint_limit_reached)`, async () => {
    const t = await newTenant(db, 0);
    const ids: string[] = [];
    for (let i = 0; i < MAX_WEBHOOK_ENDPOINTS; i++) ids.push((await registered(t, `https://hooks.example.com/${i}`)).id);
    const over = await createEndpoint(t, { url: 'https://hooks.example.com/over' });
    expect(over.status).toBe(409);
    expect(over.json.error.code).toBe('webhook_endpoint_limit_reached');
    expect(over.headers.get('x-should-retry')).toBe('false');
    expect((await api.get('/v1/webhook-endpoints', { key: t.key })).json.data).toHaveLength(MAX_WEBHOOK_ENDPOINTS);
    expect((await api.request('DELETE', `/v1/webhook-endpoints/${ids[0]}`, { key: t.key })).status).toBe(200);
    expect((await createEndpoint(t, { url: 'https://hooks.example.com/again' })).status).toBe(201);
  });

  it('deletes softly, like Stripe: 200 deleted, then 404; another tenant gets 404 and cannot see it', async () => {
    const a = await newTenant(db, 0);
    const b = await newTenant(db, 0);
    const { id } = await registered(a, 'https://hooks.example.com/del');

    for (const path of [`/v1/webhook-endpoints/${id}`, `/v1/webhook-endpoints/${id}/deliveries`]) {
      const other = await api.get(path, { key: b.key });
      expect(other.status).toBe(404);
      expect(other.json.error.code).toBe('not_found');
    }
    expect((await api.get('/v1/webhook-endpoints', { key: b.key })).json.data).toEqual([]);
    expect((await api.request('DELETE', `/v1/webhook-endpoints/${id}`, { key: b.key })).status).toBe(404);

    const deleted = await api.request('DELETE', `/v1/webhook-endpoints/${id}`, { key: a.key });
    expect(deleted.status).toBe(200);
    expect(deleted.json).toEqual({ object: 'webhook_endpoint', id, deleted: true });
    expect((await api.request('DELETE', `/v1/webhook-endpoints/${id}`, { key: a.key })).status).toBe(404);
    expect((await api.get(`/v1/webhook-endpoints/${id}`, { key: a.key })).status).toBe(404);
    expect((await api.get('/v1/webhook-endpoints', { key: a.key })).json.data).toEqual([]);
    expect((await api.request('DELETE', '/v1/webhook-endpoints/we_unknown', { key: a.key })).status).toBe(404);
  });

  it('needs a core key', async () => {
    expect((await api.get('/v1/webhook-endpoints')).status).toBe(401);
    expect((await api.post('/v1/webhook-endpoints', { url: 'https://hooks.example.com/x' })).status).toBe(401);
  });

  it('is documented as an extension, with its own tag', async () => {
    const doc = (await (await fetch(`${app.url}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { summary: string; description: string; tags: string[] }>>;
    };
    const ops = [
      doc.paths['/v1/webhook-endpoints']!.post!,
      doc.paths['/v1/webhook-endpoints']!.get!,
      doc.paths['/v1/webhook-endpoints/{endpoint_id}']!.get!,
      doc.paths['/v1/webhook-endpoints/{endpoint_id}']!.delete!,
      doc.paths['/v1/webhook-endpoints/{endpoint_id}/deliveries']!.get!,
    ];
    for (const op of ops) {
      expect(op.summary).toContain('(extension)');
      expect(op.description).toMatch(/^Extension:/);
      expect(op.tags).toEqual(['notifications']);
    }
  });
});

describe('notification activities', () => {
  const acts = () => notificationActivities({ db, publicBaseUrl: PUBLIC_BASE, deliveryRules: { allowLoopback: true } });
  /** deliverNotification as Temporal's attempt `attempt` would run it. */
  const attemptOf = (attempt: number, input: Parameters<ReturnType<typeof acts>['deliverNotification']>[0], timeoutMs?: number) =>
    new MockActivityEnvironment({ attempt }, { logger: silentLogger }).run(
      notificationActivities({ db, publicBaseUrl: PUBLIC_BASE, webhookTimeoutMs: timeoutMs, deliveryRules: { allowLoopback: true } }).deliverNotification,
      input,
    );

  it('exports an 8-attempt exponential retry policy', () => {
    expect(NOTIFICATION_RETRY).toMatchObject({ maximumAttempts: NOTIFICATION_MAX_ATTEMPTS, backoffCoefficient: 4 });
    expect(NOTIFICATION_MAX_ATTEMPTS).toBe(8);
  });

  it('targets the live endpoints of the tenant subscribed to the event', async () => {
    const t = await newTenant(db, 0);
    const other = await newTenant(db, 0);
    const all = await registered(t, 'https://hooks.example.com/all');
    const completedOnly = await registered(t, 'https://hooks.example.com/completed', ['run.completed']);
    const gone = await registered(t, 'https://hooks.example.com/gone');
    await registered(other, 'https://hooks.example.com/other');
    expect((await api.request('DELETE', `/v1/webhook-endpoints/${gone.id}`, { key: t.key })).status).toBe(200);

    expect(await acts().notificationTargets({ tenantId: t.tenantId, event: 'run.completed' })).toEqual([all.id, completedOnly.id]);
    expect(await acts().notificationTargets({ tenantId: t.tenantId, event: 'run.failed' })).toEqual([all.id]);
    expect(await acts().notificationTargets({ tenantId: (await newTenant(db, 0)).tenantId, event: 'run.failed' })).toEqual([]);
  });

  it('sends a signed, content-free notification that verifies with standardwebhooks', async () => {
    const hook = await receiver();
    try {
      const t = await newTenant(db, 0);
      const ep = await registered(t, hook.url);
      const runId = await runOf(t);
      const out = await acts().deliverNotification({ tenantId: t.tenantId, runId, endpointId: ep.id, event: 'run.completed' });
      expect(out).toEqual({ status: 204 });
      expect(hook.received).toHaveLength(1);
      const [d] = hook.received as [Delivery];

      const verified = new Webhook(ep.secret).verify(d.raw, d.headers);
      expect(verified).toEqual({
        type: 'run.completed',
        timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        data: {
          object: 'agent_run_event',
          run_id: runId,
          tenant_id: t.tenantId,
          state: 'completed',
          status_url: `${PUBLIC_BASE}/v1/agent-runs/${runId}`,
          events_url: `${PUBLIC_BASE}/v1/agent-runs/${runId}/events`,
        },
      });
      expect(d.headers['content-type']).toBe('application/json');
      expect(d.headers['webhook-id']).toMatch(/^msg_[0-9a-f]{32}$/);
      expect(Math.abs(Number(d.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(60);
      expect(d.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
      // A wrong secret or a changed body does not verify.
      expect(() => new Webhook(`whsec_${Buffer.alloc(24, 1).toString('base64')}`).verify(d.raw, d.headers)).toThrow();
      expect(() => new Webhook(ep.secret).verify(d.raw.replace('completed', 'failed'), d.headers)).toThrow();
      // Ids, state and URLs only: nothing of the run's input, and no secret.
      expect(d.raw).not.toContain('Falcon');
      expect(d.raw).not.toContain(ep.secret.slice('whsec_'.length));
      expect(Object.keys(d.headers).filter((h) => h.startsWith('authorization'))).toEqual([]);

      const [row] = await deliveryRows(runId);
      expect(row).toMatchObject({
        id: `${d.headers['webhook-id']}:${ep.id}`,
        status: 'delivered',
        attempts: 1,
        lastStatusCode: 204,
        eventType: 'run.completed',
        endpointId: ep.id,
      });

      // Delivered already (say the worker died before Temporal heard): a repeat sends nothing.
      expect(await acts().deliverNotification({ tenantId: t.tenantId, runId, endpointId: ep.id, event: 'run.completed' })).toEqual({ status: 204 });
      expect(hook.received).toHaveLength(1);

      // The delivery log: content-free.
      const log = await api.get(`/v1/webhook-endpoints/${ep.id}/deliveries`, { key: t.key });
      expect(log.status).toBe(200);
      expect(log.json.data).toEqual([
        expect.objectContaining({
          object: 'webhook_delivery',
          webhook_id: d.headers['webhook-id'],
          endpoint_id: ep.id,
          run_id: runId,
          event_type: 'run.completed',
          status: 'delivered',
          attempts: 1,
          last_status_code: 204,
        }),
      ]);
    } finally {
      await hook.close();
    }
  });

  it('retries with the same webhook-id and body; the delivery row follows each attempt', async () => {
    const hook = await receiver();
    try {
      const t = await newTenant(db, 0);
      const ep = await registered(t, hook.url);
      const runId = await runOf(t);
      // The event time comes from the run's journey: the same on every attempt.
      await db
        .insert(journeyEvents)
        .values({ tenantId: t.tenantId, runId, kind: 'run.awaiting_approval', state: 'awaiting_approval', eventKey: `${runId}:test:aa` });
      const input = { tenantId: t.tenantId, runId, endpointId: ep.id, event: 'run.awaiting_approval' as const };
      hook.answer(500, 302);

      const first = await attemptOf(1, input).catch((e: unknown) => e);
      expect(first).toBeInstanceOf(ApplicationFailure);
      expect((first as ApplicationFailure).nonRetryable).toBe(false);
      expect((first as ApplicationFailure).message).toContain('HTTP 500');
      expect(await deliveryRows(runId)).toEqual([expect.objectContaining({ status: 'pending', attempts: 1, lastStatusCode: 500 })]);

      // A redirect is not followed: it is a failed attempt.
      const second = await attemptOf(2, input).catch((e: unknown) => e);
      expect((second as ApplicationFailure).message).toContain('HTTP 302');
      expect(await deliveryRows(runId)).toEqual([expect.objectContaining({ status: 'pending', attempts: 2, lastStatusCode: 302 })]);

      expect(await attemptOf(3, input)).toEqual({ status: 204 });
      expect(hook.received).toHaveLength(3);
      const ids = new Set(hook.received.map((d) => d.headers['webhook-id']));
      expect(ids.size).toBe(1);
      expect(new Set(hook.received.map((d) => d.raw)).size).toBe(1);
      for (const d of hook.received)
        expect(new Webhook(ep.secret).verify(d.raw, d.headers)).toMatchObject({ type: 'run.awaiting_approval', data: { state: 'awaiting_approval' } });
      expect(await deliveryRows(runId)).toEqual([expect.objectContaining({ status: 'delivered', attempts: 3, lastStatusCode: 204 })]);
    } finally {
      await hook.close();
    }
  });

  it('uses one webhook-id per run and event across endpoints, another for another event', async () => {
    const one = await receiver();
    const two = await receiver();
    try {
      const t = await newTenant(db, 0);
      const a = await registered(t, one.url);
      const b = await registered(t, two.url);
      const runId = await runOf(t);
      await acts().deliverNotification({ tenantId: t.tenantId, runId, endpointId: a.id, event: 'run.failed' });
      await acts().deliverNotification({ tenantId: t.tenantId, runId, endpointId: b.id, event: 'run.failed' });
      await acts().deliverNotification({ tenantId: t.tenantId, runId, endpointId: a.id, event: 'run.awaiting_approval' });
      const [fa, aa] = one.received as [Delivery, Delivery];
      const [fb] = two.received as [Delivery];
      expect(fa.headers['webhook-id']).toBe(fb.headers['webhook-id']);
      expect(aa.headers['webhook-id']).not.toBe(fa.headers['webhook-id']);
      // Each endpoint's secret signs its own copy.
      expect(() => new Webhook(b.secret).verify(fa.raw, fa.headers)).toThrow();
      expect(new Webhook(b.secret).verify(fb.raw, fb.headers)).toMatchObject({ type: 'run.failed' });
      expect((await deliveryRows(runId)).map((r) => r.id).sort()).toHaveLength(3);
    } finally {
      await one.close();
      await two.close();
    }
  });

  it('records the final attempt as failed and stops retrying', async () => {
    const hook = await receiver();
    try {
      const t = await newTenant(db, 0);
      const ep = await registered(t, hook.url);
      const runId = await runOf(t);
      const input = { tenantId: t.tenantId, runId, endpointId: ep.id, event: 'run.needs_attention' as const };
      hook.answer(503, 503);
      const before = await attemptOf(NOTIFICATION_MAX_ATTEMPTS - 1, input).catch((e: unknown) => e);
      expect((before as ApplicationFailure).nonRetryable).toBe(false);
      expect(await deliveryRows(runId)).toEqual([expect.objectContaining({ status: 'pending', attempts: NOTIFICATION_MAX_ATTEMPTS - 1, lastStatusCode: 503 })]);

      const last = await attemptOf(NOTIFICATION_MAX_ATTEMPTS, input).catch((e: unknown) => e);
      expect(last).toBeInstanceOf(ApplicationFailure);
      expect((last as ApplicationFailure).nonRetryable).toBe(true);
      expect(await deliveryRows(runId)).toEqual([expect.objectContaining({ status: 'failed', attempts: NOTIFICATION_MAX_ATTEMPTS, lastStatusCode: 503 })]);
      const log = await api.get(`/v1/webhook-endpoints/${ep.id}/deliveries`, { key: t.key });
      expect(log.json.data[0]).toMatchObject({ status: 'failed', attempts: NOTIFICATION_MAX_ATTEMPTS, last_status_code: 503 });
      // Nothing the receiver said is kept.
      expect(log.text).not.toContain('receiver says no');
    } finally {
      await hook.close();
    }
  });

  it('an unreachable or slow endpoint is a failed attempt without a status code', async () => {
    const t = await newTenant(db, 0);
    const closed = await registered(t, `http://127.0.0.1:${await freePort()}/hook`);
    const runId = await runOf(t);
    await expect(acts().deliverNotification({ tenantId: t.tenantId, runId, endpointId: closed.id, event: 'run.failed' })).rejects.toThrow(
      /could not be reached/,
    );

    const slow = await receiver({ delayMs: 2_000 });
    try {
      const ep = await registered(t, slow.url);
      const failure = await attemptOf(1, { tenantId: t.tenantId, runId, endpointId: ep.id, event: 'run.failed' }, 200).catch((e: unknown) => e);
      expect((failure as Error).message).toMatch(/did not answer within 200 ms/);
      const rows = await deliveryRows(runId);
      expect(rows).toHaveLength(2);
      expect(rows.every((r) => r.status === 'pending' && r.lastStatusCode === null && r.attempts === 1)).toBe(true);
    } finally {
      await slow.close();
    }
  });

  it('sends nothing to a deleted endpoint and closes a pending delivery as failed', async () => {
    const hook = await receiver();
    try {
      const t = await newTenant(db, 0);
      const ep = await registered(t, hook.url);
      const runId = await runOf(t);
      const input = { tenantId: t.tenantId, runId, endpointId: ep.id, event: 'run.completed' as const };
      hook.answer(500);
      await expect(attemptOf(1, input)).rejects.toThrow(/HTTP 500/);
      expect((await api.request('DELETE', `/v1/webhook-endpoints/${ep.id}`, { key: t.key })).status).toBe(200);
      expect(await attemptOf(2, input)).toEqual({ status: 0 });
      expect(hook.received).toHaveLength(1);
      expect(await deliveryRows(runId)).toEqual([expect.objectContaining({ status: 'failed', attempts: 1, lastStatusCode: 500 })]);
    } finally {
      await hook.close();
    }
  });

  it("refuses, without retrying, a run or endpoint that is not the tenant's", async () => {
    const t = await newTenant(db, 0);
    const other = await newTenant(db, 0);
    const ep = await registered(t, 'https://hooks.example.com/x');
    const otherRun = await runOf(other);
    const err = await acts()
      .deliverNotification({ tenantId: t.tenantId, runId: otherRun, endpointId: ep.id, event: 'run.completed' })
      .catch((e: unknown) => e);
    expect((err as ApplicationFailure).nonRetryable).toBe(true);
    const err2 = await acts()
      .deliverNotification({ tenantId: other.tenantId, runId: otherRun, endpointId: ep.id, event: 'run.completed' })
      .catch((e: unknown) => e);
    expect((err2 as ApplicationFailure).nonRetryable).toBe(true);
    expect(await deliveryRows(otherRun)).toEqual([]);
  });
});

// Enabled once workflows/agent-run.ts sends notifications (WORKFLOW_SENDS_NOTIFICATIONS).
describe.skipIf(!WORKFLOW_SENDS_NOTIFICATIONS)('end to end: a run notifies its endpoints', () => {
  let stack: RunStack;
  beforeAll(async () => {
    stack = await startRunStack();
  });
  afterAll(async () => {
    await stack?.close();
  });

  const waitFor = async (hook: { received: Delivery[] }, n: number, timeoutMs = 30_000) => {
    const deadline = Date.now() + timeoutMs;
    while (hook.received.length < n) {
      if (Date.now() > deadline) throw new Error(`received ${hook.received.length} of ${n} notifications`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  it('awaiting_approval, then the end, signed, each once, content-free', async () => {
    const hook = await receiver();
    try {
      const t = await newTenant(stack.app.database.db);
      const reg = await stack.api.post('/v1/webhook-endpoints', { url: hook.url }, { key: t.key });
      expect(reg.status).toBe(201);
      const secret: string = reg.json.secret;

      const created = await stack.api.post(
        '/v1/agent-runs',
        { input: 'Summarise the incident timeline and tell the on-call channel that the incident is closed.' },
        { key: t.key },
      );
      expect(created.status).toBe(201);
      const runId: string = created.json.run_id;
      await waitForRun(stack.api, t.key, runId, (r) => r.status === 'awaiting_approval');
      await waitFor(hook, 1);
      const first = new Webhook(secret).verify(hook.received[0]!.raw, hook.received[0]!.headers) as {
        type: string;
        data: { run_id: string; state: string; status_url: string };
      };
      expect(first).toMatchObject({ type: 'run.awaiting_approval', data: { run_id: runId, state: 'awaiting_approval' } });
      expect(first.data.status_url).toMatch(new RegExp(`/v1/agent-runs/${runId}$`));

      expect(
        (await stack.api.post(`/v1/agent-runs/${runId}/approval`, { decision: 'approve' }, { key: t.approverKey, headers: { 'idempotency-key': 'e2e-1' } }))
          .status,
      ).toBe(200);
      const ended = await waitForRun(stack.api, t.key, runId, isTerminal);
      await waitFor(hook, 2);
      const last = new Webhook(secret).verify(hook.received[1]!.raw, hook.received[1]!.headers) as { type: string; data: { state: string } };
      expect(last).toMatchObject({ type: `run.${ended.status}`, data: { state: ended.status } });
      expect(['run.completed', 'run.needs_attention']).toContain(last.type);

      // Once the run's workflow has closed, nothing can send another notification: count them then.
      const connection = await Connection.connect({ address: inject('temporalAddress') });
      try {
        const handle = new Client({ connection, dataConverter: testDataConverter() }).workflow.getHandle(runId);
        await until(async () => (await handle.describe()).status.name !== 'RUNNING', 'the run workflow to close');
      } finally {
        await connection.close();
      }
      expect(hook.received).toHaveLength(2);
      expect(new Set(hook.received.map((d) => d.headers['webhook-id'])).size).toBe(2);
      for (const d of hook.received) expect(d.raw).not.toContain('incident timeline');

      const log = await stack.api.get(`/v1/webhook-endpoints/${reg.json.id}/deliveries`, { key: t.key });
      expect(log.json.data.map((x: { event_type: string; status: string }) => [x.event_type, x.status]).sort()).toEqual(
        [
          ['run.awaiting_approval', 'delivered'],
          [last.type, 'delivered'],
        ].sort(),
      );
    } finally {
      await hook.close();
    }
  });
});
