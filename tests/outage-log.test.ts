// A database outage is logged once, not once per request: every request in it
// is answered 503 (as it should be) and logged at debug, and the outage itself
// is one error line when the probes find the database down and one warn line
// when it is back, with how long it lasted and how many requests were refused.
// /health keeps naming the dependency that is down. On a Postgres the test owns.
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgres } from '../db/client.ts';
import { type PrivatePostgres, startPrivatePostgres } from './support/private-postgres.ts';
import { newTenant } from './support/run-stack.ts';
import { startTestApp, type TestApp } from './support/test-app.ts';

let postgres: PrivatePostgres;
let app: TestApp;
const lines: { level: number; msg: string; [k: string]: unknown }[] = [];

beforeAll(async () => {
  postgres = await startPrivatePostgres();
  const database = openPostgres(postgres.url);
  await database.migrate();
  await database.close();
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  app = await startTestApp({ DATABASE_URL: postgres.url, KEY_CACHE_TTL_MS: '0' }, pino({ level: 'info' }, sink));
});
afterAll(async () => {
  await app?.close();
  postgres?.destroy();
});

const ERROR = 50;

describe('a database outage', () => {
  it('is one error line and one "back" line, however many requests it refused; /health names the database meanwhile', { timeout: 90_000 }, async () => {
    const t = await newTenant(app.database.db);
    const get = () => fetch(`${app.url}/v1/agent-runs`, { headers: { authorization: `Bearer ${t.key}` } });
    expect((await get()).status).toBe(200);
    const before = lines.length;

    postgres.stop();
    // 60 requests: what 4 requests a second for 15 s would send, each one a 503.
    for (let i = 0; i < 60; i++) expect((await get()).status).toBe(503);
    const health = await fetch(`${app.url}/health`);
    expect(health.status).toBe(503);
    expect(await health.json()).toMatchObject({ error: { message: expect.stringContaining('database') } });

    postgres.start();
    const deadline = Date.now() + 60_000;
    while (!lines.some((l) => l.msg === 'dependency back')) {
      if (Date.now() > deadline) throw new Error('no "dependency back" line within 60 s');
      await new Promise((r) => setTimeout(r, 100));
    }
    const during = lines.slice(before);
    expect(during.filter((l) => l.level >= ERROR).map((l) => [l.msg, l.dependency])).toEqual([
      ['dependency down: requests that need it are answered 503 until it is back', 'database'],
    ]);
    const back = during.find((l) => l.msg === 'dependency back')!;
    expect(back).toMatchObject({ dependency: 'database', refused: expect.any(Number), down_ms: expect.any(Number) });
    expect(back.refused as number).toBeGreaterThanOrEqual(60);
    expect((await get()).status).toBe(200);
  });
});
