// Every chat hold ends, even when its API process dies. Chat holds name their
// API instance; each API process keeps a lease and sweeps, on start and every
// interval, the open chat holds whose owner's lease lapsed or that outlived any
// chat, with one audit record each. End to end: an API process killed with -9
// in the middle of a slow streamed chat leaves a hold that the next API process
// releases, and GET /v1/usage shows nothing held.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { and, eq, sql } from 'drizzle-orm';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type Database, openPostgres } from '../db/client.ts';
import { auditEvents, ledgerHolds } from '../db/schema.ts';
import { CHAT_HOLD_STEP, renewLease, startHoldSweeper, sweepHolds } from '../services/hold-sweeper.ts';
import { balanceOf, grantCredits, reserve, settle } from '../services/ledger.ts';
import { setRoute } from '../services/routing.ts';
import { fakeUpstream } from './support/fake-servers.ts';
import { freePort } from './support/free-port.ts';
import { serviceProcessEnv } from './support/payload-codec.ts';
import { newTenant } from './support/run-stack.ts';
import { startTestApp } from './support/test-app.ts';
import { until } from './support/until.ts';
import { untilStarted } from './support/until-started.ts';

let database: Database;
beforeAll(() => {
  database = openPostgres(inject('databaseUrl'), 4);
});
afterAll(() => database.close());

const id = (p: string) => `${p}-${randomBytes(4).toString('hex')}`;

async function ageHold(runId: string, ms: number) {
  await database.db
    .update(ledgerHolds)
    .set({ createdAt: sql`now() - ${`${ms} milliseconds`}::interval` as unknown as Date })
    .where(eq(ledgerHolds.runId, runId));
}

const holdOf = async (runId: string) => (await database.db.select().from(ledgerHolds).where(eq(ledgerHolds.runId, runId)))[0]!;

describe('the hold sweeper', () => {
  it("releases, with one audit record, the chat holds of an instance whose lease lapsed, leaves a live owner's and young holds alone, and takes holds that outlived any chat", async () => {
    const db = database.db;
    const t = await newTenant(db, 1_000);
    const timing = { leaseMs: 1_000, maxChatMs: 600_000 };
    const dead = id('api_dead');
    const live = id('api_live');
    await renewLease(db, dead, 1); // lapses at once
    await renewLease(db, live, 600_000);
    const runs = { dead: id('chatcmpl-dead'), young: id('chatcmpl-young'), live: id('chatcmpl-live'), old: id('chatcmpl-old') };
    await reserve(db, { tenantId: t.tenantId, runId: runs.dead, step: CHAT_HOLD_STEP, amount: 100, owner: dead });
    await reserve(db, { tenantId: t.tenantId, runId: runs.young, step: CHAT_HOLD_STEP, amount: 10, owner: dead });
    await reserve(db, { tenantId: t.tenantId, runId: runs.live, step: CHAT_HOLD_STEP, amount: 20, owner: live });
    await reserve(db, { tenantId: t.tenantId, runId: runs.old, step: CHAT_HOLD_STEP, amount: 30, owner: live });
    await ageHold(runs.dead, 5_000);
    await ageHold(runs.live, 5_000);
    await ageHold(runs.old, 700_000);

    const swept = await sweepHolds(db, timing);
    const mine = swept.filter((h) => h.tenantId === t.tenantId).map((h) => [h.runId, h.why]);
    expect(mine.sort()).toEqual(
      [
        [runs.dead, 'owner_gone'],
        [runs.old, 'too_old'],
      ].sort(),
    );
    expect((await holdOf(runs.dead)).status).toBe('released');
    expect((await holdOf(runs.old)).closedBy).toBe('sweeper');
    expect((await holdOf(runs.young)).status).toBe('open');
    expect((await holdOf(runs.live)).status).toBe('open');
    expect(await balanceOf(db, t.tenantId)).toEqual({ balance: 1_000, held: 30, available: 970 });

    // A second pass (another replica's) finds nothing more; each release has exactly one audit record.
    expect((await sweepHolds(db, timing)).filter((h) => h.tenantId === t.tenantId)).toEqual([]);
    const audits = await db
      .select()
      .from(auditEvents)
      .where(and(eq(auditEvents.tenantId, t.tenantId), eq(auditEvents.action, 'ledger.hold.released')));
    expect(audits.map((a) => a.target).sort()).toEqual([`chat:${runs.dead}`, `chat:${runs.old}`].sort());
  });

  it('never touches a hold its owner settled first', async () => {
    const db = database.db;
    const t = await newTenant(db, 1_000);
    const dead = id('api_dead');
    await renewLease(db, dead, 1);
    const run = id('chatcmpl-settled');
    await reserve(db, { tenantId: t.tenantId, runId: run, step: CHAT_HOLD_STEP, amount: 50, owner: dead });
    await settle(db, { runId: run, step: CHAT_HOLD_STEP, actualAmount: 7 });
    await ageHold(run, 5_000);
    expect((await sweepHolds(db, { leaseMs: 1_000, maxChatMs: 600_000 })).some((h) => h.runId === run)).toBe(false);
    expect(await holdOf(run)).toMatchObject({ status: 'settled', chargedAmount: 7, closedBy: null });
  });

  it('keeps its own lease while it runs, and ends it when stopped', async () => {
    const db = database.db;
    const sweeper = startHoldSweeper(db, pino({ level: 'silent' }), { leaseMs: 600_000, renewMs: 100_000, sweepMs: 100_000, maxChatMs: 600_000 });
    const leaseOf = async () =>
      (await db.execute(sql`select lease_until > now() as alive from service_instances where id = ${sweeper.instanceId}`)) as unknown as {
        rows: { alive: boolean }[];
      };
    await until(async () => (await leaseOf()).rows[0]?.alive, 'the lease');
    await sweeper.stop();
    expect((await leaseOf()).rows).toEqual([]);
  });
});

describe('a chat whose settle fails', () => {
  it('releases its hold instead of leaving it open, and answers the opaque 500', async () => {
    const app = await startTestApp();
    const db = database.db;
    const t = await newTenant(db, 1_000);
    // The charge's ledger entry is refused for this tenant only: the settle fails, the release (no entry) does not.
    const fn = `refuse_${t.tenantId.replace(/[^a-z0-9]/gi, '_')}`;
    await db.execute(
      sql.raw(
        `create function ${fn}() returns trigger language plpgsql as $$ begin if new.tenant_id = '${t.tenantId}' then raise exception 'refused by test'; end if; return new; end $$`,
      ),
    );
    await db.execute(sql.raw(`create trigger ${fn} before insert on ledger_entries for each row execute function ${fn}()`));
    try {
      const r = await fetch(`${app.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'svc-workspace', messages: [{ role: 'user', content: 'Say hello.' }] }),
      });
      expect(r.status).toBe(500);
      const holds = await db.select().from(ledgerHolds).where(eq(ledgerHolds.tenantId, t.tenantId));
      expect(holds.map((h) => [h.step, h.status])).toEqual([[CHAT_HOLD_STEP, 'released']]);
      expect(await balanceOf(db, t.tenantId)).toEqual({ balance: 1_000, held: 0, available: 1_000 });
    } finally {
      await db.execute(sql.raw(`drop trigger ${fn} on ledger_entries; drop function ${fn}()`));
      await app.close();
    }
  });
});

describe('a chat hold of an API process killed with -9', () => {
  it('is released by the next API process, and GET /v1/usage shows nothing held', { timeout: 120_000 }, async () => {
    // An upstream that starts streaming and never finishes: the chat is in flight, its hold open.
    const upstream = await fakeUpstream((_body, _req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { role: 'assistant', content: 'Working' } }] })}\n\n`);
    });
    const db = database.db;
    const t = await newTenant(db, 0);
    await grantCredits(db, { tenantId: t.tenantId, amount: 5_000, entryKey: id('grant') });
    await setRoute(db, t.tenantId, 'svc-workspace', 'upstream');
    const children: ReturnType<typeof spawn>[] = [];
    const startApi = async (extra: Record<string, string>) => {
      const port = await freePort();
      const child = spawn(process.execPath, ['--import', 'tsx', 'bin/api.ts'], {
        env: serviceProcessEnv({
          PORT: String(port),
          DATABASE_URL: inject('databaseUrl'),
          TEMPORAL_ADDRESS: inject('temporalAddress'),
          UPSTREAM_BASE_URL: upstream.url,
          ...extra,
        }),
        stdio: 'ignore',
      });
      children.push(child);
      const url = `http://127.0.0.1:${port}`;
      await untilStarted(url);
      return { child, url };
    };
    const held = async (url: string) => {
      const r = await fetch(`${url}/v1/usage`, { headers: { authorization: `Bearer ${t.key}` } });
      return ((await r.json()) as { held: number }).held;
    };
    try {
      const first = await startApi({ INSTANCE_LEASE_MS: '3000' });
      const chat = fetch(`${first.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'svc-workspace', stream: true, messages: [{ role: 'user', content: 'Write a long answer.' }] }),
      }).catch((err: Error) => err);
      await until(async () => (await held(first.url)) > 0, 'the chat hold');
      first.child.kill('SIGKILL');
      await chat;
      // The dead process's lease (30 s by default) lapses; the new process sweeps at start and every interval.
      const second = await startApi({ INSTANCE_LEASE_MS: '2000', HOLD_SWEEP_INTERVAL_MS: '500' });
      await until(async () => (await held(second.url)) === 0, 'held back to 0', { withinMs: 60_000 });
      const [hold] = await db
        .select()
        .from(ledgerHolds)
        .where(and(eq(ledgerHolds.tenantId, t.tenantId), eq(ledgerHolds.step, CHAT_HOLD_STEP)));
      expect(hold).toMatchObject({ status: 'released', closedBy: 'sweeper', chargedAmount: 0 });
      expect(await balanceOf(db, t.tenantId)).toEqual({ balance: 5_000, held: 0, available: 5_000 });
    } finally {
      for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
      await upstream.close();
    }
  });
});
