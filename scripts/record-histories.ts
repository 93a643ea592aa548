// Records workflow histories for the replay test (tests/replay.test.ts):
//   node --import tsx scripts/record-histories.ts
// Histories are append-only: each is written as tests/fixtures/<VERSION>-<path>.history.json
// and an existing file is never overwritten, so the histories recorded by older code keep
// proving that runs started on it still replay on the new code. After a workflow change
// that alters its commands (guard it with patched(), see workflows/agent-run.ts), bump
// HISTORY_VERSION (tests/support/history-paths.ts) and run this once: it records every path
// for the new version. The
// upstream runs talk to a scripted OpenAI-compatible server on loopback.
import { existsSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import { pino } from 'pino';
import { loadConfig } from '../config/env.ts';
import { openPglite } from '../db/client.ts';
import { digestOf } from '../domain/digest.ts';
import type { ModelId } from '../domain/models.ts';
import { activityDeps } from '../runtime/compose-activities.ts';
import { projectRoot } from '../config/paths.ts';
import { localTemporal } from '../config/temporal-connection-settings.ts';
import { serviceDataConverter } from '../runtime/payload-codec.ts';
import { payloadCodecFor, resolvePayloadKeyring } from '../runtime/payload-keys.ts';
import { resolveTemporalCli, startDevServer } from '../runtime/temporal-dev-server.ts';
import { temporalConnectOptions } from '../runtime/temporal-connection.ts';
import { startWorker } from '../runtime/worker.ts';
import { upsertBudget } from '../services/budgets.ts';
import { createKey } from '../services/keys.ts';
import { grantCredits } from '../services/ledger.ts';
import { rememberEntry } from '../services/memory.ts';
import { setRoute } from '../services/routing.ts';
import { startRunWorkflow } from '../services/run-workflow.ts';
import { createRun } from '../services/runs.ts';
import { setWebhookUrl } from '../services/tenants.ts';
import { reportReply, scriptedUpstream } from '../tests/support/fake-servers.ts';
import { FIXTURE_PAYLOAD_KEY, HISTORY_VERSION as VERSION, type HistoryPath } from '../tests/support/history-paths.ts';
import { createWebhookEndpoint } from '../services/webhook-endpoints.ts';
import { NOTIFICATION_EVENTS } from '../domain/runs/progress.ts';
import { isTerminal } from '../domain/runs/states.ts';
import { type ApprovalMeta, approvalSignal, approvalUpdate } from '../workflows/messages.ts';
import http from 'node:http';

const logger = pino({ level: 'warn' });
const upstream = await scriptedUpstream();
// Recorded encrypted, as the service writes histories, with the fixtures' (public) key, so the replay test can read them.
const config = loadConfig({
  TASK_QUEUE: 'record-histories',
  UPSTREAM_BASE_URL: upstream.url,
  PAYLOAD_KEY: FIXTURE_PAYLOAD_KEY.base64,
  PAYLOAD_KEY_ID: FIXTURE_PAYLOAD_KEY.id,
});
const codec = payloadCodecFor(resolvePayloadKeyring(config, { allowDataDirKey: false }));
const server = await startDevServer({ cliPath: await resolveTemporalCli(), port: 27_399, uiPort: 27_400, namespace: 'default', logger });
const database = openPglite('memory');
await database.migrate();
const db = database.db;
const connection = await Connection.connect(temporalConnectOptions(localTemporal(server.address)));
const client = new Client({ connection, dataConverter: serviceDataConverter(codec) });
const worker = await startWorker({
  temporal: localTemporal(server.address),
  taskQueue: config.temporal.taskQueue,
  activities: activityDeps(config, db),
  payloadCodec: codec,
  logger,
});

/**
 * Each tenant's approver key, as the API names it in the decisions it sends (services/run-control.ts):
 * the paths decided through the API are decided by an approver, as only an approver key can.
 */
const approvers = new Map<string, ApprovalMeta>();

async function tenant(name: string, credits: number): Promise<string> {
  const key = await createKey(db, { tenant: name, kind: 'core' });
  const approver = await createKey(db, { tenantId: key.tenantId, kind: 'approver', name: 'Recorder Approver' });
  approvers.set(key.tenantId, { channel: 'api', key_id: approver.id, name: approver.name! });
  if (credits > 0) await grantCredits(db, { tenantId: key.tenantId, amount: credits, entryKey: `${name}-grant` });
  return key.tenantId;
}

/** A loopback port nothing listens on (connections are refused). */
async function closedPort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const { port } = probe.address() as net.AddressInfo;
  await new Promise((r) => probe.close(r));
  return port;
}

async function awaitingApproval(runId: string): Promise<void> {
  for (;;) {
    const state = await client.workflow.getHandle(runId).query<{ status: string }>('state');
    if (state.status === 'awaiting_approval') return;
    // A run that ends first would be waited on for ever: its input asks for no external effect any more.
    if (isTerminal(state.status)) throw new Error(`${runId} ended ${state.status} before approval: give this path an input that sends something.`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A tool-calling run waiting in its second approval round. */
async function roundTwo(runId: string): Promise<void> {
  for (;;) {
    const state = await client.workflow.getHandle(runId).query<{ status: string; approval: string }>('state');
    if (state.status === 'awaiting_approval' && state.approval === 'pending') {
      const history = await client.workflow.getHandle(runId).fetchHistory();
      const decided = (history.events ?? []).filter((e) => e.workflowExecutionUpdateCompletedEventAttributes).length;
      if (decided >= 1) return;
    }
    if (isTerminal(state.status)) throw new Error(`${runId} ended ${state.status} before its second round.`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The decision as the API sends it: the Update with the tenant's approver (`by`) as its metadata. */
const decide = (decision: 'approve' | 'reject') => async (runId: string, by: ApprovalMeta) => {
  await awaitingApproval(runId);
  await client.workflow.getHandle(runId).executeUpdate(approvalUpdate, { args: [{ decision }, by] });
};

interface Recording {
  tenantId: string;
  input: string;
  memory?: boolean;
  model?: ModelId;
  approvalTimeoutMs?: number;
  /** What happens once the run started; `by`: the tenant's approver. */
  after?: (runId: string, by: ApprovalMeta) => Promise<void>;
}

async function record(name: HistoryPath, r: Recording): Promise<void> {
  const file = path.join(projectRoot, 'tests', 'fixtures', `${VERSION}-${name}.history.json`);
  if (existsSync(file)) {
    console.log(`kept ${path.relative(projectRoot, file)} (histories are append-only)`);
    return;
  }
  const request = { input: r.input, memory: r.memory ?? false, model: r.model ?? 'svc-workspace' };
  const { run } = await createRun(db, { tenantId: r.tenantId, idempotencyKey: null, requestDigest: digestOf(request), ...request });
  await startRunWorkflow(client, { taskQueue: config.temporal.taskQueue, approvalTimeoutMs: r.approvalTimeoutMs ?? 60_000 }, run);
  await r.after?.(run.id, approvers.get(r.tenantId)!);
  const handle = client.workflow.getHandle(run.id);
  // A failed run ends its execution Failed (v3 on); its history is what is kept either way.
  await handle.result().catch(() => undefined);
  const history = await handle.fetchHistory();
  writeFileSync(file, `${historyToJSON(history)}\n`);
  console.log(`recorded ${path.relative(projectRoot, file)} (${history.events?.length} events)`);
}

try {
  const recorder = await tenant('recorder', 1_000);
  await rememberEntry(db, { tenantId: recorder, subject: 'release policy', content: 'Releases ship on Tuesdays.', source: 'seed', entryKey: 'seed' });
  await record('approved-with-memory', {
    tenantId: recorder,
    input: 'Check the release policy and tell the team channel that releases ship on Tuesdays.',
    memory: true,
    after: decide('approve'),
  });
  await record('rejected', { tenantId: recorder, input: 'Compile the release notes and tell the team that they are out.', after: decide('reject') });
  await record('expired', { tenantId: recorder, input: 'Prepare the summary and tell the team that it is out.', approvalTimeoutMs: 1_000 });
  await record('cancelled', {
    tenantId: recorder,
    input: 'Prepare the summary and tell the team that it is out.',
    after: async (runId) => {
      await awaitingApproval(runId);
      await client.workflow.getHandle(runId).cancel();
    },
  });
  await record('read-only', { tenantId: recorder, input: 'Review the vendor contracts; then list the renewal dates.' });
  await record('insufficient-credits', { tenantId: await tenant('broke', 0), input: 'Summarise the quarterly report.' });

  const budgeted = await tenant('budgeted', 1_000);
  await upsertBudget(db, budgeted, { name: 'runs', scope: 'runs', period: 'month', limitCredits: 1 });
  await record('over-budget', { tenantId: budgeted, input: 'Summarise the quarterly report.' });

  // A webhook nobody listens on: every delivery attempt fails before sending, so the step fails.
  const unreachable = await tenant('unreachable', 1_000);
  await setWebhookUrl(db, 'unreachable', `http://127.0.0.1:${await closedPort()}/hook`, { allowLoopback: true });
  await record('failing-tool', { tenantId: unreachable, input: 'Tell the on-call channel that the incident timeline is ready.', after: decide('approve') });

  // An upstream run by the tool-calling protocol: a read (calculate) at once, the delivery approved, the report.
  await setRoute(db, recorder, 'svc-workspace-quality', 'upstream');
  const payroll = 'Sum these and tell payroll the result: 12, 30, 8.';
  upstream.load([
    { tool_calls: [{ name: 'calculate', arguments: { expression: '12 + 30 + 8' }, id: 'c1' }] },
    { tool_calls: [{ name: 'webhook_delivery', arguments: { to: 'payroll', message: 'The total is 50.' }, id: 'c2' }] },
    reportReply({ quote: payroll, asks: 'effect', calls: ['c1', 'c2'] }),
  ]);
  await record('upstream-agent-loop', { tenantId: recorder, input: payroll, model: 'svc-workspace-quality', after: decide('approve') });

  // Two approval rounds: the first approved, the second (proposed after the first ran) rejected and reported unresolved.
  const rounds = 'Tell Dana the invoice was paid. Then tell finance that Dana knows.';
  upstream.load([
    { tool_calls: [{ name: 'webhook_delivery', arguments: { to: 'Dana', message: 'The invoice was paid.' }, id: 'c1' }] },
    { tool_calls: [{ name: 'webhook_delivery', arguments: { to: 'finance', message: 'Dana knows the invoice was paid.' }, id: 'c2' }] },
    reportReply(
      { quote: 'Tell Dana the invoice was paid.', asks: 'effect', calls: ['c1'] },
      { quote: 'Then tell finance that Dana knows.', asks: 'effect', status: 'unresolved', reason: 'The approver rejected it.' },
    ),
  ]);
  await record('upstream-rounds', {
    tenantId: recorder,
    input: rounds,
    model: 'svc-workspace-quality',
    after: async (runId, by) => {
      await decide('approve')(runId, by);
      await roundTwo(runId);
      await client.workflow.getHandle(runId).executeUpdate(approvalUpdate, { args: [{ decision: 'reject', reason: 'not finance' }, by] });
    },
  });

  // Operators decide through Temporal: a typo'd signal (refused, audited), then the validated Update
  // without API metadata; the tenant's endpoint is notified through child workflows.
  const receiver = http.createServer((_req, res) => res.writeHead(204).end());
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const operated = await tenant('operated', 1_000);
  await createWebhookEndpoint(
    db,
    { tenantId: operated, keyId: null },
    {
      url: `http://127.0.0.1:${(receiver.address() as net.AddressInfo).port}/hooks`,
      events: [...NOTIFICATION_EVENTS],
      description: null,
    },
  );
  await record('operator-decisions', {
    tenantId: operated,
    input: 'Compile the release notes and tell the team that they are out.',
    after: async (runId) => {
      await awaitingApproval(runId);
      const handle = client.workflow.getHandle(runId);
      await handle.signal(approvalSignal, { decision: 'approved' } as never);
      await handle.executeUpdate(approvalUpdate, { args: [{ decision: 'approve', reason: 'operator' }] });
    },
  });
  receiver.close();
} finally {
  await upstream.close();
  await worker.stop();
  await connection.close();
  await database.close();
  await server.stop();
}
