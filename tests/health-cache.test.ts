// GET /health answers from a cached status: the probes run at most about once a
// second however often it is asked, and a dependency going down shows within ~1 s.
import { describe, expect, it } from 'vitest';
import { healthChecker } from '../services/health.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('healthChecker', () => {
  it('probes once for many concurrent and repeated requests, then refreshes in the background', async () => {
    let calls = 0;
    let databaseUp = true;
    const check = healthChecker(
      {
        database: async () => {
          calls++;
          if (!databaseUp) throw new Error('down');
        },
        temporal: async () => {},
      },
      { refreshMs: 200, idleStopMs: 5_000 },
    );
    const first = await Promise.all(Array.from({ length: 50 }, () => check()));
    expect(first.every((r) => r.database === 'ok' && r.temporal === 'ok')).toBe(true);
    expect(calls).toBe(1);
    for (let i = 0; i < 50; i++) await check();
    expect(calls).toBe(1);

    // The database goes down: within about one refresh period /health reports it, without a request probing.
    databaseUp = false;
    await sleep(500);
    const probesBefore = calls;
    expect(await check()).toEqual({ database: 'unavailable', temporal: 'ok' });
    // (at most one more probe: a request may join the background one if timers ran late)
    expect(calls).toBeLessThanOrEqual(probesBefore + 1);
    databaseUp = true;
    await sleep(500);
    expect(await check()).toEqual({ database: 'ok', temporal: 'ok' });
  });

  it('stops probing when nobody asks, and probes afresh on the next request', async () => {
    let calls = 0;
    const check = healthChecker({ database: async () => void calls++, temporal: async () => {} }, { refreshMs: 50, idleStopMs: 100 });
    await check();
    await sleep(400);
    const idle = calls;
    await sleep(200);
    expect(calls).toBe(idle);
    await check();
    expect(calls).toBe(idle + 1);
  });
});
