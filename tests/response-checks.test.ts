// Unit tests: the response check (CHECK_RESPONSES) is the test suite's safety net: on under
// NODE_ENV=test, off where users run the service (npm start included), and when on, a handler
// that answers outside its declared contract is a 500, not a quiet drift.
import type http from 'node:http';
import Koa from 'koa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { mountRoutes } from '../api/contract/router.ts';
import { defineRoute } from '../api/contract/route.ts';
import { loadConfig } from '../config/env.ts';
import type { RateLimiters } from '../services/rate-limiters.ts';

describe('CHECK_RESPONSES', () => {
  it('is on under NODE_ENV=test only, unless set', () => {
    expect(loadConfig({ NODE_ENV: 'test' }).http.checkResponses).toBe(true);
    expect(loadConfig({ NODE_ENV: 'development' }).http.checkResponses).toBe(false);
    expect(loadConfig({ NODE_ENV: 'production', PAYLOAD_KEY: undefined }).http.checkResponses).toBe(false);
    expect(loadConfig({ NODE_ENV: 'development', CHECK_RESPONSES: 'true' }).http.checkResponses).toBe(true);
    expect(loadConfig({ NODE_ENV: 'test', CHECK_RESPONSES: 'false' }).http.checkResponses).toBe(false);
  });
});

describe('a handler that drifts from its declared response', () => {
  // Declares { ok: true } and answers { ok: 'yes' }.
  const drifting = defineRoute({
    method: 'get',
    path: '/drift',
    operationId: 'drift',
    summary: 'drift',
    description: 'drift',
    tags: ['public'],
    auth: 'none',
    responses: { 200: { description: 'ok', schema: z.object({ ok: z.literal(true) }) } },
    handler: async () => ({ status: 200 as const, body: { ok: 'yes' } as never }),
  });
  const servers: http.Server[] = [];
  const serve = async (checkResponses: boolean) => {
    const app = new Koa();
    app.silent = true;
    const deps = { authenticate: async () => null, rateLimiters: {} as RateLimiters, clientAddress: () => '', checkResponses, bodyLimitBytes: 1024 };
    for (const middleware of mountRoutes([drifting], deps as never)) app.use(middleware);
    const server = app.listen(0, '127.0.0.1');
    servers.push(server);
    await new Promise((r) => server.once('listening', r));
    const { port } = server.address() as { port: number };
    return (await fetch(`http://127.0.0.1:${port}/drift`)).status;
  };
  let checked: number;
  let unchecked: number;
  beforeAll(async () => {
    checked = await serve(true);
    unchecked = await serve(false);
  });
  afterAll(() => {
    for (const s of servers) s.close();
  });

  it('fails loudly when responses are checked', () => expect(checked).toBe(500));
  it('is served as it is when they are not', () => expect(unchecked).toBe(200));
});
