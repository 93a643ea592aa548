// Forgetting leaves no copies (issue 11, item 5). A vault entry recalled by
// `memory: true` runs (one planned locally, one on an upstream model that reads
// the recalled text) is forgotten; then every table, every answer the tenant can
// read and the runs' workflow histories, decoded with the service's codec, are
// searched for its text: none may hold it. The raw histories (read without the
// codec) hold no plaintext at all: what Temporal stores is encrypted.
import { randomBytes } from 'node:crypto';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import type { Payload } from '@temporalio/common';
import { Worker } from '@temporalio/worker';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { withRecalledText } from '../activities/agent.ts';
import type { ChatMessage } from '../domain/chat/types.ts';
import { memoryRecallOutput } from '../domain/runs/tool-outputs.ts';
import { ENCRYPTED_ENCODING, METADATA_ENCRYPTION_KEY_ID } from '../runtime/payload-codec.ts';
import { createKey } from '../services/keys.ts';
import { grantCredits } from '../services/ledger.ts';
import { setRoute } from '../services/routing.ts';
import { reportReply, scriptedUpstream } from './support/fake-servers.ts';
import { TEST_PAYLOAD_KEY_ID, testCodec, testDataConverter } from './support/payload-codec.ts';
import { isTerminal, type RunStack, startRunStack, waitForRun } from './support/run-stack.ts';

let stack: RunStack;
let upstream: Awaited<ReturnType<typeof scriptedUpstream>>;
let connection: Connection;
let decoding: Client;
let raw: Client;

beforeAll(async () => {
  upstream = await scriptedUpstream();
  stack = await startRunStack({ UPSTREAM_BASE_URL: upstream.url, UPSTREAM_MODEL_MAP: '{"svc-workspace-quality":"scripted-model"}' });
  connection = await Connection.connect({ address: inject('temporalAddress') });
  decoding = new Client({ connection, dataConverter: testDataConverter() });
  raw = new Client({ connection });
});
afterAll(async () => {
  await connection?.close();
  await stack?.close();
  await upstream?.close();
});

const db = () => stack.app.database.db;
const utf8 = new TextDecoder();

async function workspace() {
  const name = `f-${randomBytes(5).toString('hex')}`;
  const core = await createKey(db(), { tenant: name, kind: 'core' });
  const ws = await createKey(db(), { tenant: name, kind: 'workspace' });
  await grantCredits(db(), { tenantId: core.tenantId, amount: 1_000, entryKey: `g-${name}` });
  return { tenantId: core.tenantId, core: core.secret, ws: ws.secret };
}

/** Every Payload of a history (or any proto message), and every string outside them. */
function walk(node: unknown, out: { payloads: Payload[]; strings: string[] } = { payloads: [], strings: [] }) {
  if (typeof node === 'string') out.strings.push(node);
  else if (node instanceof Uint8Array || node === null || typeof node !== 'object') return out;
  else if (Array.isArray(node)) for (const x of node) walk(x, out);
  else {
    const o = node as Record<string, unknown>;
    const metadata = o.metadata as Record<string, unknown> | undefined;
    const isPayload =
      metadata &&
      typeof metadata === 'object' &&
      Object.values(metadata).every((v) => v instanceof Uint8Array) &&
      (o.data === undefined || o.data === null || o.data instanceof Uint8Array);
    if (isPayload) out.payloads.push(o as Payload);
    else for (const v of Object.values(o)) walk(v, out);
  }
  return out;
}

const payloadText = (p: Payload) =>
  [...Object.values(p.metadata ?? {}).map((v) => utf8.decode(v ?? new Uint8Array())), utf8.decode(p.data ?? new Uint8Array())].join('\n');

/** The history's text as stored: payload bytes read as UTF-8 without the codec, plus every other string. */
async function rawHistory(handle: WorkflowHandle) {
  const history = await handle.fetchHistory();
  const { payloads, strings } = walk(history);
  return { history, payloads, text: [...payloads.map(payloadText), ...strings].join('\n') };
}

/** The history's text as an operator reads it through the codec (the UI, the CLI with --codec-endpoint). */
async function decodedHistory(handle: WorkflowHandle) {
  const history = await handle.fetchHistory();
  const { payloads, strings } = walk(history);
  const decoded = await testCodec().decode(payloads);
  return { history, text: [...decoded.map(payloadText), ...strings].join('\n') };
}

/** The payloads the SDK wrote for the service: workflow input and result, activity inputs and results. */
function servicePayloads(history: Awaited<ReturnType<WorkflowHandle['fetchHistory']>>): Payload[] {
  return (history.events ?? []).flatMap((e) =>
    [
      e.workflowExecutionStartedEventAttributes?.input,
      e.workflowExecutionCompletedEventAttributes?.result,
      e.activityTaskScheduledEventAttributes?.input,
      e.activityTaskCompletedEventAttributes?.result,
    ].flatMap((x) => (x?.payloads ?? []) as Payload[]),
  );
}

/** Tables whose rows (any column, as text) contain `needle`. */
async function tablesHolding(needle: string): Promise<string[]> {
  const rows = async <T>(query: ReturnType<typeof sql>) => ((await db().execute(query)) as unknown as { rows: T[] }).rows;
  const tables = (
    await rows<{ table_name: string }>(sql`select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'`)
  ).map((t) => t.table_name);
  expect(tables).toEqual(expect.arrayContaining(['runs', 'memory_entries', 'memory_entry_versions', 'journey_events', 'run_model_calls']));
  const holding: string[] = [];
  for (const table of tables) {
    const [{ n }] = (await rows<{ n: number }>(sql`select count(*)::int as n from ${sql.identifier(table)} t where t::text like ${`%${needle}%`}`)) as [
      { n: number },
    ];
    if (n > 0) holding.push(table);
  }
  return holding;
}

describe('forgetting a recalled vault entry', () => {
  it('leaves its text in no table, no API answer and no workflow payload', async () => {
    const w = await workspace();
    const marker = `FORGET-ME-${randomBytes(6).toString('hex')}`;
    const secret = `Quokka escalation rota: page ${marker} first, then the platform lead.`;
    const created = await stack.api.post('/v1/vault/entries', { subject: 'Quokka escalation rota', content: secret, tags: ['ops'] }, { key: w.ws });
    expect(created.status).toBe(201);
    const entryId = created.json.id as string;

    // A locally planned run recalls it.
    const localInput = 'Explain our quokka escalation rota.';
    const local = await stack.api.post('/v1/agent-runs', { input: localInput, memory: true }, { key: w.core });
    expect(local.status).toBe(201);
    const localRun = await waitForRun(stack.api, w.core, local.json.run_id, isTerminal);
    expect(localRun.plan.steps[0].tool).toBe('memory_recall');
    expect(localRun.result.steps[0].output.entries.map((e: { id: string }) => e.id)).toContain(entryId);

    // An upstream run's model calls memory_recall and is given the text in its next turn.
    await setRoute(db(), w.tenantId, 'svc-workspace-quality', 'upstream');
    const modelInput = 'Explain the quokka escalation rota to the new hire.';
    upstream.load([
      { tool_calls: [{ name: 'memory_recall', arguments: { query: 'quokka escalation rota' }, id: 'c1' }] },
      reportReply({ quote: modelInput, calls: ['c1'], answer: 'The rota names who is paged first; see the tenant memory.' }),
    ]);
    const model = await stack.api.post('/v1/agent-runs', { input: modelInput, memory: true, model: 'svc-workspace-quality' }, { key: w.core });
    expect(model.status).toBe(201);
    const modelRun = await waitForRun(stack.api, w.core, model.json.run_id, isTerminal);
    expect(modelRun.result.steps.map((s: { tool: string; status: string }) => [s.tool, s.status])).toEqual([['memory_recall', 'done']]);
    const turn = upstream.seen[1]!.body.messages.at(-1);
    expect(turn.role).toBe('tool');
    expect(turn.content, 'the model reads the recalled text').toContain(marker);

    // Before forgetting, the scans do find it (in the vault, and only there).
    expect(await tablesHolding(marker)).toEqual(['memory_entries', 'memory_entry_versions']);
    const runIds = [localRun.run_id as string, modelRun.run_id as string];
    for (const id of runIds) {
      expect((await decodedHistory(decoding.workflow.getHandle(id))).text).not.toContain(marker);
    }

    const forgotten = await stack.api.request('DELETE', `/v1/vault/entries/${entryId}`, { key: w.ws });
    expect(forgotten.status).toBe(200);
    expect(forgotten.json).toMatchObject({ state: 'forgotten', content: null });

    // No table.
    expect(await tablesHolding(marker)).toEqual([]);

    // No answer the tenant can read, with either of its keys.
    const core = [
      ...runIds.map((id) => `/v1/agent-runs/${id}`),
      '/v1/agent-runs?limit=100',
      '/v1/agent-runs/export',
      '/v1/journey-events?limit=100',
      '/v1/audit-events',
      '/v1/usage',
    ];
    const workspaceRoutes = [
      '/v1/vault/entries?limit=100',
      `/v1/vault/entries/${entryId}`,
      `/v1/vault/entries/${entryId}/versions`,
      '/v1/vault/export',
      '/v1/vault/search?q=quokka%20escalation%20rota',
      '/v1/vault/account',
    ];
    for (const [key, paths] of [
      [w.core, core],
      [w.ws, workspaceRoutes],
    ] as const) {
      for (const p of paths) {
        const r = await stack.api.get(p, { key });
        expect(r.status, p).toBe(200);
        expect(r.text, `${p} still serves the forgotten text`).not.toContain(marker);
      }
    }
    // The runs still show what they did: the recall by reference.
    const after = (await stack.api.get(`/v1/agent-runs/${localRun.run_id}`, { key: w.core })).json;
    expect(after.receipt.source_coverage.sources.map((s: { source: string }) => s.source)).toContain(`memory:${entryId}`);

    for (const id of runIds) {
      const handle = decoding.workflow.getHandle(id);
      // No workflow payload, read back through the codec as an operator would.
      const decoded = await decodedHistory(handle);
      expect(decoded.text, 'the decoded history is readable').toContain(id === localRun.run_id ? localInput : modelInput);
      expect(decoded.text, `history of ${id} holds the forgotten text`).not.toContain(marker);

      // What Temporal stores is encrypted: the raw history holds no plaintext of the run's input.
      const stored = await rawHistory(raw.workflow.getHandle(id));
      expect(stored.text).not.toContain(id === localRun.run_id ? localInput : modelInput);
      expect(stored.text).not.toContain('quokka');
      const written = servicePayloads(stored.history);
      expect(written.length).toBeGreaterThan(5);
      for (const p of written) {
        expect(utf8.decode(p.metadata!.encoding!)).toBe(ENCRYPTED_ENCODING);
        expect(utf8.decode(p.metadata![METADATA_ENCRYPTION_KEY_ID]!)).toBe(TEST_PAYLOAD_KEY_ID);
      }

      // And an encrypted history still replays with the codec (the determinism check of tests/replay.test.ts).
      await expect(
        Worker.runReplayHistory(
          { workflowBundle: { codePath: inject('workflowBundlePath') }, dataConverter: testDataConverter() },
          decoded.history,
          `forget-${id}`,
        ),
      ).resolves.toBeUndefined();
    }
  });

  it("gives the model the entry's text only while the vault still has it", async () => {
    const w = await workspace();
    const content = `Door code ${randomBytes(4).toString('hex')} for the lab.`;
    const id = (await stack.api.post('/v1/vault/entries', { subject: 'Lab door', content }, { key: w.ws })).json.id as string;
    const transcript: ChatMessage[] = [
      {
        role: 'assistant',
        content: '',
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'memory_recall', arguments: '{"query":"lab door"}' } }],
      },
      {
        role: 'tool',
        tool_call_id: 'call_1',
        content: JSON.stringify({ status: 'done', detail: 'Recalled 1 memory entry.', output: memoryRecallOutput([{ id, version: 1, content }]) }),
      },
    ];
    const entriesSeen = async () => JSON.parse((await withRecalledText(db(), w.tenantId, transcript))[1]!.content).output.entries;
    expect(transcript[1]!.content).not.toContain(content); // what the workflow carries
    expect(await entriesSeen()).toEqual([{ id, subject: 'Lab door', content }]);

    await stack.api.post(`/v1/vault/entries/${id}/corrections`, { content: 'The lab door code changed.' }, { key: w.ws });
    expect(await entriesSeen()).toEqual([{ id, subject: 'Lab door', content: 'The lab door code changed.', note: expect.stringContaining('Corrected') }]);

    await stack.api.request('DELETE', `/v1/vault/entries/${id}`, { key: w.ws });
    const [gone] = await entriesSeen();
    expect(gone).toEqual({ id, unavailable: expect.stringContaining('no longer in the tenant memory') });
    // Another tenant's entry is never resolved, whatever id a transcript names.
    const other = await workspace();
    const theirs = (await stack.api.post('/v1/vault/entries', { subject: 'Theirs', content: 'Private to the other tenant.' }, { key: other.ws })).json
      .id as string;
    const forged: ChatMessage[] = [transcript[0]!, { ...transcript[1]!, content: JSON.stringify({ status: 'done', output: { entries: [{ id: theirs }] } }) }];
    expect(JSON.stringify(await withRecalledText(db(), w.tenantId, forged))).not.toContain('Private to the other tenant');
  });
});
