// The request log over the real server: one line per request with id, method, route pattern,
// status and latency; /health (probed every few seconds per replica) only when it fails.
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/test-app.ts';

interface Line {
  level: number;
  dependency?: string;
  msg: string;
  request_id: string;
  method: string;
  route: string;
  status: number;
  latency_ms: number;
}

function sinkLogger(level = 'info') {
  const lines: Line[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      lines.push(JSON.parse(String(chunk)) as Line);
      done();
    },
  });
  return { logger: pino({ level }, sink), lines, requests: () => lines.filter((l) => l.msg === 'request') };
}

describe('request log', () => {
  const healthy = sinkLogger();
  const noTemporal = sinkLogger('debug');
  let app: TestApp;
  let down: TestApp;
  beforeAll(async () => {
    app = await startTestApp({}, healthy.logger);
    // Nothing listens on port 1: the Temporal probe fails, so /health answers 503.
    down = await startTestApp({ TEMPORAL_ADDRESS: '127.0.0.1:1' }, noTemporal.logger);
  });
  afterAll(async () => {
    await app?.close();
    await down?.close();
  });

  it('writes one line per request with the route pattern, never the path or query', async () => {
    const res = await fetch(`${app.url}/v1/agent-runs/run_doesnotexist?secret-ish=1`);
    const id = res.headers.get('x-request-id');
    expect(res.status).toBe(401);
    const line = healthy.requests().find((l) => l.request_id === id);
    expect(line).toMatchObject({ method: 'GET', route: '/v1/agent-runs/:run_id', status: 401 });
    expect(JSON.stringify(line)).not.toContain('doesnotexist');
    expect(JSON.stringify(line)).not.toContain('secret-ish');
  });

  it('leaves successful /health answers out; a failed one is logged at debug, and the outage behind it once, at error', async () => {
    const ok = await fetch(`${app.url}/health`);
    expect(ok.status).toBe(200);
    const failed = await fetch(`${down.url}/health`);
    expect(failed.status).toBe(503);
    const okId = ok.headers.get('x-request-id');
    const failedId = failed.headers.get('x-request-id');
    expect(healthy.requests().filter((l) => l.request_id === okId)).toEqual([]);
    expect(noTemporal.requests().filter((l) => l.request_id === failedId)).toMatchObject([{ level: 20, route: '/health', status: 503 }]);
    await fetch(`${down.url}/health`);
    const deadline = Date.now() + 10_000;
    while (!noTemporal.lines.some((l) => l.level >= 50)) {
      if (Date.now() > deadline) throw new Error('the outage was never logged');
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(noTemporal.lines.filter((l) => l.level >= 50).map((l) => l.dependency)).toEqual(['temporal']);
  });
});
