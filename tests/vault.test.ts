// The customer vault over the real API with workspace keys, checked against
// the database directly where the claim is about what is stored.
import { randomBytes } from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryEntries, memoryEntryVersions } from '../db/schema.ts';
import { createKey } from '../services/keys.ts';
import { grantCredits } from '../services/ledger.ts';
import { recallMemory } from '../services/memory.ts';
import { isTerminal, type RunStack, startRunStack, waitForRun } from './support/run-stack.ts';

let stack: RunStack;
let db: RunStack['app']['database']['db'];

beforeAll(async () => {
  stack = await startRunStack();
  db = stack.app.database.db;
});
afterAll(() => stack.close());

interface Workspace {
  tenantId: string;
  core: string;
  ws: string;
}

async function workspace(): Promise<Workspace> {
  const name = `v-${randomBytes(5).toString('hex')}`;
  const core = await createKey(db, { tenant: name, kind: 'core' });
  const ws = await createKey(db, { tenant: name, kind: 'workspace' });
  await grantCredits(db, { tenantId: core.tenantId, amount: 1_000, entryKey: `g-${name}` });
  return { tenantId: core.tenantId, core: core.secret, ws: ws.secret };
}

const api = () => stack.api;
const add = (w: Workspace, body: object) => api().post('/v1/vault/entries', body, { key: w.ws });
const search = (w: Workspace, q: string, extra = '') => api().get(`/v1/vault/search?q=${encodeURIComponent(q)}${extra}`, { key: w.ws });
const ids = (r: { json: { data: { entry: { id: string } }[] } }) => r.json.data.map((h) => h.entry.id);

describe('vault lifecycle', () => {
  it('creates, searches, corrects, quarantines, releases and forgets an entry', async () => {
    const w = await workspace();
    const created = await add(w, { subject: 'Escalation policy', content: 'Page the database on-call after 15 minutes.', tags: ['ops'] });
    expect(created.status).toBe(201);
    const id = created.json.id as string;
    expect(created.json).toMatchObject({ state: 'active', version: 1, tags: ['ops'], source: 'api' });
    expect((await api().get(`/v1/vault/entries/${id}`, { key: w.ws })).json.content).toBe('Page the database on-call after 15 minutes.');
    expect(ids(await search(w, 'database on-call'))).toEqual([id]);

    const corrected = await api().post(
      `/v1/vault/entries/${id}/corrections`,
      { content: 'Page the platform on-call after 10 minutes.', reason: 'team renamed' },
      { key: w.ws },
    );
    expect(corrected.status).toBe(200);
    expect(corrected.json.version).toBe(2);
    expect(corrected.json.digest).not.toBe(created.json.digest);
    expect(ids(await search(w, 'database'))).toEqual([]); // the old version is never searched again
    expect(ids(await search(w, 'platform'))).toEqual([id]);
    const versions = await api().get(`/v1/vault/entries/${id}/versions`, { key: w.ws });
    expect(versions.json.data.map((v: { version: number; current: boolean; reason: string | null }) => [v.version, v.current, v.reason])).toEqual([
      [1, false, null],
      [2, true, 'team renamed'],
    ]);
    expect(versions.json.data[0].content).toBe('Page the database on-call after 15 minutes.');

    const quarantined = await api().post(`/v1/vault/entries/${id}/quarantine`, { reason: 'under review' }, { key: w.ws });
    expect(quarantined.json).toMatchObject({ state: 'quarantined', quarantine_reason: 'under review' });
    expect(ids(await search(w, 'platform'))).toEqual([]);
    expect((await recallMemory(db, w.tenantId, 'platform on-call')).map((e) => e.id)).toEqual([]);
    const review = await api().get('/v1/vault/entries?state=quarantined', { key: w.ws });
    expect(review.json.data.map((e: { id: string }) => e.id)).toEqual([id]);

    const released = await api().post(`/v1/vault/entries/${id}/release`, undefined, { key: w.ws });
    expect(released.json.state).toBe('active');
    expect(ids(await search(w, 'platform'))).toEqual([id]);
    expect((await api().post(`/v1/vault/entries/${id}/release`, undefined, { key: w.ws })).json.error.code).toBe('vault_entry_not_quarantined');

    const tombstone = await api().request('DELETE', `/v1/vault/entries/${id}`, { key: w.ws });
    expect(tombstone.status).toBe(200);
    expect(tombstone.json).toMatchObject({ state: 'forgotten', subject: null, content: null, tags: [], digest: corrected.json.digest });
    expect(ids(await search(w, 'platform'))).toEqual([]);
    const correctForgotten = await api().post(`/v1/vault/entries/${id}/corrections`, { content: 'again' }, { key: w.ws });
    expect(correctForgotten.status).toBe(409);
    expect(correctForgotten.json.error.code).toBe('vault_entry_forgotten');
    expect((await api().request('DELETE', `/v1/vault/entries/${id}`, { key: w.ws })).status).toBe(200);

    const check = await api().post('/v1/vault/integrity-check', undefined, { key: w.ws });
    expect(check.json).toMatchObject({ ok: true, checked_entries: 1, changed: [], missing: [], unrecorded: [], chain: { length: 5, valid: true } });
  });

  it('validates bodies with 400 and a param', async () => {
    const w = await workspace();
    expect((await add(w, { subject: 's' })).json.error.param).toBe('content');
    expect((await add(w, { subject: 's', content: 'c', tags: ['x'.repeat(51)] })).json.error.param).toBe('tags[0]');
    expect((await add(w, { subject: 's', content: 'c', expires_at: '2001-01-01T00:00:00Z' })).json.error.param).toBe('expires_at');
    expect((await add(w, { subject: 's', content: 'c', owner: 'me' })).json.error.code).toBe('unsupported_parameter');
    expect((await api().get('/v1/vault/search', { key: w.ws })).json.error.param).toBe('q');
  });
});

describe('vault search', () => {
  it('ranks the most relevant entry first on a small corpus', async () => {
    const w = await workspace();
    const corpus = [
      ['Lunch menu', 'Soup and bread on Fridays.'],
      ['Backup retention', 'Postgres backups are kept for 35 days; the Postgres backup job runs nightly and retention is audited quarterly.'],
      ['Postgres upgrade', 'Upgrade Postgres to version 16 next spring.'],
      ['Retention of logs', 'Application logs are kept for 14 days.'],
    ];
    const made: string[] = [];
    for (const [subject, content] of corpus) made.push((await add(w, { subject, content })).json.id);
    const r = await search(w, 'postgres backup retention');
    expect(ids(r)[0]).toBe(made[1]);
    expect(ids(r)).not.toContain(made[0]);
    const scores = r.json.data.map((h: { score: number }) => h.score);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    expect(ids(await search(w, 'postgres', '&subject=upgrade'))).toEqual([made[2]]);
  });

  it('filters by tag and honours the limit', async () => {
    const w = await workspace();
    const a = (await add(w, { subject: 'Alpha invoice', content: 'Invoice terms are net 30.', tags: ['finance'] })).json.id;
    await add(w, { subject: 'Beta invoice', content: 'Invoice template lives in the wiki.', tags: ['docs'] });
    expect(ids(await search(w, 'invoice', '&tag=finance'))).toEqual([a]);
    expect(ids(await search(w, 'invoice', '&limit=1'))).toHaveLength(1);
  });
});

describe('expiry', () => {
  it('an expired entry is never searched or recalled, but is listed as expired', async () => {
    const w = await workspace();
    const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
    const id = (await add(w, { subject: 'Temporary door code', content: 'The door code is 4711 this week.', expires_at: expiresAt })).json.id;
    expect(ids(await search(w, 'door code'))).toEqual([id]);
    // The test moves the clock, not the machine: the stored expiry passes, with no real-time wait to flake on a loaded machine.
    await db
      .update(memoryEntries)
      .set({ expiresAt: new Date(Date.now() - 1_000) })
      .where(eq(memoryEntries.id, id));
    expect(ids(await search(w, 'door code'))).toEqual([]);
    expect(await recallMemory(db, w.tenantId, 'door code')).toEqual([]);
    expect((await api().get(`/v1/vault/entries/${id}`, { key: w.ws })).json.state).toBe('expired');
    expect((await api().get('/v1/vault/entries?state=expired', { key: w.ws })).json.data.map((e: { id: string }) => e.id)).toEqual([id]);
  });
});

describe('forgetting', () => {
  it('leaves no content in any table, only a content-free tombstone', async () => {
    const w = await workspace();
    const marker = `FORGET-ME-${randomBytes(6).toString('hex')}`;
    const id = (await add(w, { subject: `Subject ${marker}`, content: `Secret ${marker} content`, tags: [marker] })).json.id;
    await api().post(`/v1/vault/entries/${id}/corrections`, { content: `Corrected ${marker}` }, { key: w.ws });
    await api().request('DELETE', `/v1/vault/entries/${id}`, { key: w.ws });

    const rows = async <T>(query: ReturnType<typeof sql>) => ((await db.execute(query)) as unknown as { rows: T[] }).rows;
    const names = (
      await rows<{ table_name: string }>(sql`select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'`)
    ).map((t) => t.table_name);
    expect(names).toEqual(expect.arrayContaining(['memory_entries', 'memory_entry_versions', 'vault_chain', 'journey_events']));
    for (const table of names) {
      const [{ n }] = (await rows<{ n: number }>(sql`select count(*)::int as n from ${sql.identifier(table)} t where t::text like ${`%${marker}%`}`)) as [
        { n: number },
      ];
      expect(n, `${table} still holds the forgotten content`).toBe(0);
    }
    const [tombstone] = await db.select().from(memoryEntries).where(eq(memoryEntries.id, id));
    expect(tombstone).toMatchObject({ state: 'forgotten', subject: null, content: null, tags: [] });
    expect(tombstone!.digest).toMatch(/^sha256:/);
  });
});

describe('integrity check', () => {
  it('flags an entry edited directly in the database and a deleted row', async () => {
    const w = await workspace();
    const edited = (await add(w, { subject: 'Refund limit', content: 'Refunds up to 100 EUR need no approval.' })).json.id;
    const deleted = (await add(w, { subject: 'Office hours', content: 'Open 9 to 5.' })).json.id;
    const untouched = (await add(w, { subject: 'Wifi', content: 'Guest network is open.' })).json.id;
    expect((await api().post('/v1/vault/integrity-check', undefined, { key: w.ws })).json.ok).toBe(true);

    // Behind the service's back:
    await db.update(memoryEntries).set({ content: 'Refunds up to 10000 EUR need no approval.' }).where(eq(memoryEntries.id, edited));
    await db.delete(memoryEntryVersions).where(eq(memoryEntryVersions.entryId, deleted));
    await db.delete(memoryEntries).where(eq(memoryEntries.id, deleted));

    const report = (await api().post('/v1/vault/integrity-check', undefined, { key: w.ws })).json;
    expect(report.ok).toBe(false);
    expect(report.changed).toEqual([edited]);
    expect(report.missing).toEqual([deleted]);
    expect(report.changed).not.toContain(untouched);
    expect(report.chain.valid).toBe(true);
  });

  it('flags an edit that also rewrote the stored digest', async () => {
    const w = await workspace();
    const id = (await add(w, { subject: 'Approver', content: 'Alice approves budgets.' })).json.id;
    await db.update(memoryEntries).set({ content: 'Mallory approves budgets.', digest: 'sha256:forged' }).where(eq(memoryEntries.id, id));
    expect((await api().post('/v1/vault/integrity-check', undefined, { key: w.ws })).json.changed).toEqual([id]);
  });
});

describe('tenant isolation and key kinds', () => {
  it('another tenant gets 404 on every entry route and sees nothing in lists', async () => {
    const a = await workspace();
    const b = await workspace();
    const id = (await add(a, { subject: 'Private', content: 'Only tenant A may see this.' })).json.id;
    expect((await api().get(`/v1/vault/entries/${id}`, { key: b.ws })).status).toBe(404);
    expect((await api().get(`/v1/vault/entries/${id}/versions`, { key: b.ws })).status).toBe(404);
    expect((await api().post(`/v1/vault/entries/${id}/corrections`, { content: 'x' }, { key: b.ws })).status).toBe(404);
    expect((await api().post(`/v1/vault/entries/${id}/quarantine`, {}, { key: b.ws })).status).toBe(404);
    expect((await api().post(`/v1/vault/entries/${id}/release`, undefined, { key: b.ws })).status).toBe(404);
    expect((await api().request('DELETE', `/v1/vault/entries/${id}`, { key: b.ws })).status).toBe(404);
    expect(ids(await search(b, 'tenant'))).toEqual([]);
    expect((await api().get('/v1/vault/entries', { key: b.ws })).json.data).toEqual([]);
    expect((await api().get('/v1/vault/export', { key: b.ws })).text).toBe('');
    expect((await api().get(`/v1/vault/entries/${id}`, { key: a.ws })).status).toBe(200);
  });

  it('a core key is refused on vault routes and a workspace key on core routes', async () => {
    const w = await workspace();
    for (const r of [
      await api().get('/v1/vault/entries', { key: w.core }),
      await api().post('/v1/vault/entries', { subject: 's', content: 'c' }, { key: w.core }),
      await api().get('/v1/agent-runs', { key: w.ws }),
      await api().post('/v1/agent-runs', { input: 'x' }, { key: w.ws }),
      await api().get('/v1/models', { key: w.ws }),
    ]) {
      expect(r.status).toBe(401);
      expect(r.json.error.code).toBe('invalid_api_key');
    }
  });
});

describe('workspace keys and account', () => {
  it('creates, lists and revokes workspace keys, and reports account state', async () => {
    const w = await workspace();
    await add(w, { subject: 'One', content: 'First entry.' });
    const second = (await add(w, { subject: 'Two', content: 'Second entry.' })).json.id;
    await api().post(`/v1/vault/entries/${second}/quarantine`, {}, { key: w.ws });

    const created = await api().post('/v1/vault/keys', { label: 'ci' }, { key: w.ws });
    expect(created.status).toBe(201);
    expect(created.json.secret).toMatch(/^gws_ws_/);
    expect((await api().get('/v1/vault/entries', { key: created.json.secret })).status).toBe(200);
    expect((await api().get('/v1/models', { key: created.json.secret })).status).toBe(401);

    const listed = await api().get('/v1/vault/keys', { key: w.ws });
    expect(listed.text).not.toContain(created.json.secret);
    expect(listed.json.data).toHaveLength(2);
    expect(listed.json.data.filter((k: { current: boolean }) => k.current)).toHaveLength(1);

    const account = await api().get('/v1/vault/account', { key: w.ws });
    expect(account.json).toMatchObject({ entries: { active: 1, quarantined: 1, expired: 0, forgotten: 0 }, chain_length: 3 });
    expect(account.json.storage_bytes).toBe(Buffer.byteLength('OneFirst entry.TwoSecond entry.'));

    expect((await api().request('DELETE', `/v1/vault/keys/${created.json.id}`, { key: w.ws })).status).toBe(200);
    expect((await api().get('/v1/vault/entries', { key: created.json.secret })).status).toBe(401);
    expect((await api().request('DELETE', `/v1/vault/keys/${created.json.id}`, { key: w.ws })).status).toBe(404);
  });
});

describe('export and events', () => {
  it('exports live entries only as NDJSON, and records content-free journey events', async () => {
    const w = await workspace();
    const marker = `EXPORT-${randomBytes(4).toString('hex')}`;
    const live = (await add(w, { subject: 'Live', content: `Keep ${marker}` })).json.id;
    const quarantined = (await add(w, { subject: 'Held', content: `Hold ${marker}` })).json.id;
    const gone = (await add(w, { subject: 'Gone', content: `Drop ${marker}` })).json.id;
    await api().post(`/v1/vault/entries/${quarantined}/quarantine`, {}, { key: w.ws });
    await api().request('DELETE', `/v1/vault/entries/${gone}`, { key: w.ws });

    const exported = await api().get('/v1/vault/export', { key: w.ws });
    expect(exported.headers.get('content-type')).toContain('application/x-ndjson');
    expect(
      exported.text
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).id),
    ).toEqual([live]);

    const events = await api().get('/v1/journey-events', { key: w.core });
    expect(events.text).not.toContain(marker);
    expect(events.json.data.map((e: { kind: string }) => e.kind).reverse()).toEqual([
      'vault.created',
      'vault.created',
      'vault.created',
      'vault.quarantined',
      'vault.forgotten',
    ]);
  });
});

describe('runs recall from the vault', () => {
  it('a run with memory true recalls a vault entry and its receipt names it', async () => {
    const w = await workspace();
    const id = (await add(w, { subject: 'Travel policy', content: 'Economy class for flights under six hours.' })).json.id;
    const quarantined = (await add(w, { subject: 'Old travel policy', content: 'Business class for all flights.' })).json.id;
    await api().post(`/v1/vault/entries/${quarantined}/quarantine`, {}, { key: w.ws });
    const created = await api().post('/v1/agent-runs', { input: 'Summarise our travel policy for flights.', memory: true }, { key: w.core });
    const run = await waitForRun(api(), w.core, created.json.run_id, isTerminal);
    expect(run.status).toBe('needs_attention'); // recalled; summarising needs a model
    const sources = run.receipt.source_coverage.sources.map((s: { source: string }) => s.source);
    expect(sources).toContain(`memory:${id}`);
    expect(sources).not.toContain(`memory:${quarantined}`);
    // The run remembered itself through the vault: a new, chained entry.
    const listed = await api().get('/v1/vault/entries?state=active', { key: w.ws });
    expect(listed.json.data.map((e: { source: string }) => e.source)).toContain(`run:${run.run_id}`);
    expect((await api().post('/v1/vault/integrity-check', undefined, { key: w.ws })).json.ok).toBe(true);
  });
});
