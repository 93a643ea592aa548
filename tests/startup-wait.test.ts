// Start-up's waits (runtime/startup.ts): a dependency that is unreachable while
// the process starts is tried again with backoff, logged once when the wait
// begins and once when it is back, and given up on after STARTUP_TIMEOUT_MS of
// waiting in all, naming it; any other failure is not waited on.
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DATABASE, notConnected, StartUp, TEMPORAL } from '../runtime/startup.ts';

// The clock is the test's: the backoff's timers fire when the test moves time on.
beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

function logged() {
  const lines: { level: number; msg: string; [k: string]: unknown }[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { logger: pino({ level: 'debug' }, sink), lines };
}

const refused = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });

/** Runs `promise` to its end while moving the clock on in small steps; its rejection, if any, is returned as the value. */
async function settle<T>(promise: Promise<T>, stepMs = 50): Promise<T | Error> {
  let done = false;
  const result = promise.then(
    (v) => v,
    (e: Error) => e,
  );
  void result.finally(() => {
    done = true;
  });
  while (!done) await vi.advanceTimersByTimeAsync(stepMs);
  return result;
}

describe('StartUp.waitFor', () => {
  it('waits out a dependency that is down, with one line when the wait begins and one when it is back', async () => {
    const { logger, lines } = logged();
    const startup = new StartUp(logger, 60_000);
    let calls = 0;
    const steps: (string | undefined)[] = [];
    const result = await settle(
      startup.waitFor(DATABASE, 'migrating the database', async () => {
        calls++;
        steps.push(startup.pending());
        if (calls <= 6) throw refused();
        return 'migrated';
      }),
    );
    expect(result).toBe('migrated');
    expect(calls).toBe(7);
    // While it waits, the API's 503 says for what.
    expect(steps[0]).toBe('migrating the database');
    expect(steps[1]).toBe('migrating the database: waiting for the database');
    expect(lines.filter((l) => l.level >= 40).map((l) => [l.msg, l.dependency])).toEqual([
      ['dependency unavailable during start-up: waiting for it', 'the database'],
    ]);
    expect(lines.filter((l) => l.msg === 'dependency back: start-up goes on')).toHaveLength(1);
    expect(startup.pending()).toBe('migrating the database');
    startup.ready();
    expect(startup.pending()).toBeUndefined();
  });

  it('backs off: 250 ms, doubling, at most 5 s between attempts', async () => {
    const { logger } = logged();
    const startup = new StartUp(logger, 600_000);
    const at: number[] = [];
    const start = Date.now();
    await settle(
      startup.waitFor(DATABASE, 'migrating the database', async () => {
        at.push(Date.now() - start);
        if (at.length < 9) throw refused();
      }),
      10,
    );
    const gaps = at.slice(1).map((t, i) => t - at[i]!);
    expect(gaps.map((g) => Math.round(g / 10) * 10)).toEqual([250, 500, 1_000, 2_000, 4_000, 5_000, 5_000, 5_000]);
  });

  it('does not wait on a failure that is no outage (a bad migration, a wrong password)', async () => {
    const { logger, lines } = logged();
    const startup = new StartUp(logger, 60_000);
    let calls = 0;
    const failure = Object.assign(new Error('password authentication failed for user "postgres"'), { code: '28P01' });
    const result = await settle(
      startup.waitFor(DATABASE, 'migrating the database', async () => {
        calls++;
        throw failure;
      }),
    );
    expect(result).toBe(failure);
    expect(calls).toBe(1);
    expect(lines.filter((l) => l.level >= 40)).toEqual([]);
  });

  it('gives up after STARTUP_TIMEOUT_MS of waiting in all, over every step, naming the dependency', async () => {
    const { logger, lines } = logged();
    const startup = new StartUp(logger, 10_000);
    let databaseUp = false;
    const t0 = Date.now();
    const first = startup.waitFor(DATABASE, 'migrating the database', async () => {
      if (!databaseUp) throw refused();
    });
    await vi.advanceTimersByTimeAsync(6_000);
    databaseUp = true;
    await settle(first);
    // Up at 6 s, seen at the next attempt (7.75 s: 250, 500, 1 000, 2 000, 4 000 ms apart); the second wait has what is left.
    const firstWaitMs = Date.now() - t0;
    expect(firstWaitMs).toBeGreaterThanOrEqual(7_750);
    const began = Date.now();
    const unavailable = Object.assign(new Error('14 UNAVAILABLE: No connection established'), { code: 14 });
    const second = await settle(
      startup.waitFor(TEMPORAL, 'creating the schedules', async () => {
        throw unavailable;
      }),
    );
    expect(second).toBeInstanceOf(Error);
    expect((second as Error).message).toMatch(/^Temporal \(TEMPORAL_ADDRESS\) stayed unreachable: start-up waited 10 s for it in all \(STARTUP_TIMEOUT_MS\)/);
    expect((second as Error).message).toContain('14 UNAVAILABLE');
    expect(Date.now() - began).toBeGreaterThanOrEqual(10_000 - firstWaitMs);
    expect(Date.now() - began).toBeLessThanOrEqual(10_000 - firstWaitMs + 100);
    expect(lines.filter((l) => l.msg === 'dependency unavailable during start-up: waiting for it').map((l) => l.dependency)).toEqual([
      'the database',
      'Temporal',
    ]);
  });

  it('bounds an attempt that hangs once it is waiting', async () => {
    const { logger } = logged();
    const startup = new StartUp(logger, 3_000);
    let calls = 0;
    const result = await settle(
      startup.waitFor(DATABASE, 'creating the dev keys', () => {
        calls++;
        return calls === 1 ? Promise.reject(refused()) : new Promise<never>(() => {});
      }),
    );
    expect((result as Error).message).toMatch(/^the database \(DATABASE_URL\) stayed unreachable.*ECONNREFUSED/);
  });

  it('retries the worker only on a connection it could not make', () => {
    expect(notConnected(Object.assign(new Error('tcp connect error'), { name: 'TransportError' }))).toBe(true);
    expect(notConnected(Object.assign(new Error('14 UNAVAILABLE'), { code: 14 }))).toBe(false);
  });
});
