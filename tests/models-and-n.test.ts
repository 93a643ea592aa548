// GET /v1/models/{model} (client.models.retrieve) and the n=1-only rule of chat, with the official
// `openai` npm client against the real server.
import { randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ledgerHolds } from '../db/schema.ts';
import { MODEL_IDS } from '../domain/models.ts';
import { createKey } from '../services/keys.ts';
import { grantCredits } from '../services/ledger.ts';
import { ApiClient } from './support/client.ts';
import { startTestApp, type TestApp } from './support/test-app.ts';

let app: TestApp;
let api: ApiClient;

interface Tenant {
  tenantId: string;
  key: string;
}

async function tenant(credits = 100_000): Promise<Tenant> {
  const k = await createKey(app.database.db, { tenant: `models-${randomBytes(5).toString('hex')}`, kind: 'core' });
  if (credits) await grantCredits(app.database.db, { tenantId: k.tenantId, amount: credits, entryKey: `g-${k.id}` });
  return { tenantId: k.tenantId, key: k.secret };
}

const clientFor = (t: Tenant) => new OpenAI({ apiKey: t.key, baseURL: `${app.url}/v1`, maxRetries: 0 });

/** The rejection of `promise`, or a failure when it resolves. */
async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected the call to be rejected');
}

beforeAll(async () => {
  app = await startTestApp();
  api = await ApiClient.connect(app.url);
});
afterAll(() => app.close());

describe('GET /v1/models/{model}', () => {
  it('client.models.retrieve answers the model object, the same one the list has', async () => {
    const client = clientFor(await tenant(0));
    const model = await client.models.retrieve('svc-workspace');
    expect(model.id).toBe('svc-workspace');
    expect(model.object).toBe('model');
    expect(model.owned_by).toBe('governed-workspace-service');
    expect(model.created).toBe(1_767_225_600);
    expect(model).toMatchObject({ description: expect.any(String), credits_per_1k_tokens: expect.any(Number) });

    const list = await client.models.list();
    const ids = list.data.map((m) => m.id);
    expect(ids).toEqual([...MODEL_IDS]);
    for (const id of MODEL_IDS) {
      expect(await client.models.retrieve(id)).toEqual(list.data.find((m) => m.id === id));
    }
  });

  it('an unknown id is 404 model_not_found (NotFoundError), and the id is not echoed', async () => {
    const t = await tenant(0);
    const unknown = `gpt-4o-${randomBytes(4).toString('hex')}`;
    const err = await rejectionOf(clientFor(t).models.retrieve(unknown));
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    const e = err as InstanceType<typeof OpenAI.NotFoundError>;
    expect(e.status).toBe(404);
    expect(e.code).toBe('model_not_found');
    expect(e.param).toBe('model');
    expect(e.type).toBe('not_found');
    expect(e.message).not.toContain(unknown);

    // The raw answer, checked against the OpenAPI document: the same error as chat's unknown model.
    const raw = await api.get(`/v1/models/${unknown}`, { key: t.key });
    expect(raw.status).toBe(404);
    expect(raw.text).not.toContain(unknown);
    const chat = await api.post('/v1/chat/completions', { model: unknown, messages: [{ role: 'user', content: 'hi' }] }, { key: t.key });
    expect(chat.status).toBe(404);
    expect({ ...raw.json.error, request_id: null }).toEqual({ ...chat.json.error, request_id: null });
  });

  it('ids with odd characters are 404 model_not_found like any unknown id; past the length bound, 400 param model', async () => {
    const t = await tenant(0);
    for (const encoded of ['SVC-WORKSPACE', 'svc-workspace%20', '%C3%A9', 'a%2Fb', '..%2Fhealth', "'%3B--", 'a'.repeat(100)]) {
      const r = await api.get(`/v1/models/${encoded}`, { key: t.key });
      expect(r.status, encoded).toBe(404);
      expect(r.json.error, encoded).toMatchObject({ code: 'model_not_found', param: 'model' });
      expect(r.text, encoded).not.toContain(decodeURIComponent(encoded));
    }
    const long = await api.get(`/v1/models/${'a'.repeat(101)}`, { key: t.key });
    expect(long.status).toBe(400);
    expect(long.json.error).toMatchObject({ code: 'invalid_request', param: 'model' });
    // A NUL cannot be an id: 400 before any lookup, as on the other {id} routes.
    const nul = await api.get('/v1/models/a%00b', { key: t.key });
    expect(nul.status).toBe(400);
    expect(nul.json.error.param).toBe('model');
    // Another segment is another path: no such route.
    const deeper = await api.get('/v1/models/svc-workspace/extra', { key: t.key });
    expect(deeper.status).toBe(404);
    expect(deeper.json.error.code).toBe('not_found');
  });

  it('takes the same keys as GET /v1/models: core only', async () => {
    const core = await createKey(app.database.db, { tenant: `models-${randomBytes(5).toString('hex')}`, kind: 'core' });
    const workspace = await createKey(app.database.db, { tenantId: core.tenantId, kind: 'workspace' });
    expect((await api.get('/v1/models/svc-workspace', { key: core.secret })).status).toBe(200);
    for (const key of [workspace.secret, undefined]) {
      for (const path of ['/v1/models', '/v1/models/svc-workspace', '/v1/models/no-such-model']) {
        const r = await api.get(path, { key });
        expect(r.status, path).toBe(401);
        expect(r.json.error.code).toBe('invalid_api_key');
      }
    }
  });

  it('is documented: core key, a bounded path parameter, 404 with the error object', async () => {
    const doc = (await api.get('/openapi.json')).json;
    const op = doc.paths['/v1/models/{model}'].get;
    expect(op.operationId).toBe('retrieveModel');
    expect(op.security).toEqual([{ coreKey: [] }]);
    expect(op.parameters).toEqual([
      expect.objectContaining({ in: 'path', name: 'model', required: true, schema: expect.objectContaining({ type: 'string', minLength: 1, maxLength: 100 }) }),
    ]);
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '404']));
  });
});

describe('n', () => {
  it('n: 2 is a 400 invalid_request with param n that says only n=1 is supported, and reserves nothing', async () => {
    const t = await tenant();
    const err = await rejectionOf(
      clientFor(t).chat.completions.create({ model: 'svc-workspace', n: 2, messages: [{ role: 'user', content: 'Two answers please.' }] }),
    );
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    const e = err as InstanceType<typeof OpenAI.BadRequestError>;
    expect(e.status).toBe(400);
    expect(e.code).toBe('invalid_request');
    expect(e.param).toBe('n');
    expect(e.type).toBe('invalid_request_error');
    expect(e.message).toBe('400 Invalid n: only n=1 is supported (one choice per request); omit n or send 1, and send separate requests for more choices');
    expect(await app.database.db.select().from(ledgerHolds).where(eq(ledgerHolds.tenantId, t.tenantId))).toEqual([]);

    // Streaming and every other value than 1 answer the same.
    for (const n of [0, 3, 1.5, '1', null]) {
      const r = await api.post(
        '/v1/chat/completions',
        { model: 'svc-workspace', n, stream: true, messages: [{ role: 'user', content: 'hi' }] },
        { key: t.key },
      );
      expect(r.status, String(n)).toBe(400);
      expect(r.json.error, String(n)).toMatchObject({ code: 'invalid_request', param: 'n', message: expect.stringContaining('only n=1 is supported') });
    }
  });

  it('n: 1 (or no n) answers one choice', async () => {
    const client = clientFor(await tenant());
    for (const n of [1, undefined]) {
      const completion = await client.chat.completions.create({
        model: 'svc-workspace',
        n,
        messages: [{ role: 'user', content: 'Summarise the plan in one line. The launch moved to May.' }],
      });
      expect(completion.choices).toHaveLength(1);
      expect(completion.choices[0]!.index).toBe(0);
      expect(completion.choices[0]!.finish_reason).toBe('stop');
    }
  });

  it('is documented as the constant 1', async () => {
    const doc = (await api.get('/openapi.json')).json;
    const n = doc.components.schemas.ChatCompletionRequest.properties.n;
    expect(n).toMatchObject({ const: 1, description: expect.stringContaining('only 1 is supported') });
  });
});
