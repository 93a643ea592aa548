// GET /health answers from a cached status: the probes run at most about once a
// second however often it is asked, and a dependency going down shows within ~1 s.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { healthChecker } from '../services/health.ts';

// The clock is the test's: time moves when the test says (the refresh timer fires, Date.now advances),
// so the checks are about how many periods passed, never about how late a timer ran.
beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});
const sleep = (ms: number) => vi.advanceTimersByTimeAsync(ms);

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
    // A fresh status is answered at once, without a promise: /health's route then makes none either.
    expect(check()).toEqual({ database: 'ok', temporal: 'ok' });

    // The database goes down: within about one refresh period /health reports it, without a request probing.
    databaseUp = false;
    await sleep(500);
    const probesBefore = calls;
    expect(await check()).toEqual({ database: 'unavailable', temporal: 'ok' });
    expect(calls).toBe(probesBefore); // the background refresh saw it; the request did not probe
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
