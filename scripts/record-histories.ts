// Records workflow histories for the replay test (tests/replay.test.ts):
//   node --import tsx scripts/record-histories.ts [NAME ...]
// With names, only those fixtures are (re)recorded, so histories recorded by
// older code stay as they are and keep proving that runs in flight replay.
// Run it after an intentional workflow change and commit the new fixtures. The
// replay test then fails whenever code changes break determinism for runs
// already in flight. The upstream run talks to a scripted OpenAI-compatible
// server on loopback.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import { pino } from 'pino';
import { loadConfig } from '../config/env.ts';
import { openPglite } from '../db/client.ts';
import { activityDeps } from '../runtime/compose-activities.ts';
import { projectRoot } from '../runtime/paths.ts';
import { resolveTemporalCli, startDevServer } from '../runtime/temporal-dev-server.ts';
import { startWorker } from '../runtime/worker.ts';
import { createKey } from '../services/keys.ts';
import { grantCredits } from '../services/ledger.ts';
import { rememberEntry } from '../services/memory.ts';
import { runControl } from '../services/run-control.ts';
import { approvalUpdate } from '../workflows/messages.ts';
import { scriptedUpstream } from '../tests/support/fake-servers.ts';
import type { ModelId } from '../domain/models.ts';
import { setRoute } from '../services/routing.ts';

const only = new Set(process.argv.slice(2));
const logger = pino({ level: 'warn' });
const upstream = await scriptedUpstream();
const config = loadConfig({ TASK_QUEUE: 'record-histories', UPSTREAM_BASE_URL: upstream.url });
const server = await startDevServer({ cliPath: await resolveTemporalCli(), port: 27_399, uiPort: 27_400, namespace: 'default', logger });
const database = openPglite('memory');
await database.migrate();
const connection = await Connection.connect({ address: server.address });
const client = new Client({ connection });
const worker = await startWorker({ address: server.address, namespace: 'default', taskQueue: config.temporal.taskQueue, activities: activityDeps(config, database.db), logger });
const control = runControl({ db: database.db, client, taskQueue: config.temporal.taskQueue, approvalTimeoutMs: 60_000 });

try {
  const key = await createKey(database.db, { tenant: 'recorder', kind: 'core' });
  await grantCredits(database.db, { tenantId: key.tenantId, amount: 1_000, entryKey: 'recorder-grant' });
  await rememberEntry(database.db, { tenantId: key.tenantId, subject: 'release policy', content: 'Releases ship on Tuesdays.', source: 'seed', entryKey: 'seed' });

  async function record(name: string, input: string, memory: boolean, after: (runId: string) => Promise<void>, model: ModelId = 'svc-workspace') {
    if (only.size > 0 && !only.has(name)) return;
    const { run } = await control.create(key.tenantId, null, { input, memory, model });
    await after(run.id);
    const handle = client.workflow.getHandle(run.id);
    await handle.result();
    const history = await handle.fetchHistory();
    const file = path.join(projectRoot, 'tests', 'fixtures', `${name}.history.json`);
    writeFileSync(file, `${historyToJSON(history)}\n`);
    console.log(`recorded ${path.relative(projectRoot, file)} (${history.events?.length} events)`);
  }

  const awaitingApproval = async (runId: string) => {
    for (;;) {
      const state = await client.workflow.getHandle(runId).query<{ status: string }>('state');
      if (state.status === 'awaiting_approval') return;
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  await record('approved-with-memory', 'Check the release policy; then send the summary to the team.', true, async (runId) => {
    await awaitingApproval(runId);
    await client.workflow.getHandle(runId).executeUpdate(approvalUpdate, { args: [{ decision: 'approve', reason: 'fine' }] });
  });
  await record('cancelled', 'Draft the memo and publish it.', false, async (runId) => {
    await awaitingApproval(runId);
    await client.workflow.getHandle(runId).cancel();
  });
  await record('read-only', 'Review the vendor contracts; then list the renewal dates.', false, async () => {});

  // An upstream run: model plan, approval, two tool calls, the model's answer.
  await setRoute(database.db, key.tenantId, 'svc-workspace-quality', 'upstream');
  const plan = {
    steps: [
      { tool: 'text_analysis', arguments: { text: 'the incident timeline' }, purpose: 'Read the timeline', covers: [1] },
      { tool: 'webhook_delivery', arguments: {}, purpose: 'Send the summary', covers: [2] },
    ],
    unresolved: [],
  };
  upstream.load([
    { content: JSON.stringify(plan) },
    { tool_calls: [{ name: 'text_analysis', arguments: { text: 'Summarise the incident timeline.' } }] },
    { tool_calls: [{ name: 'webhook_delivery', arguments: {} }] },
    { content: 'The timeline is summarised; the webhook is not configured.' },
  ]);
  await record(
    'upstream-agent-loop',
    'Summarise the incident timeline and send it to the on-call channel.',
    false,
    async (runId) => {
      await awaitingApproval(runId);
      await client.workflow.getHandle(runId).executeUpdate(approvalUpdate, { args: [{ decision: 'approve' }] });
    },
    'svc-workspace-quality',
  );
} finally {
  await upstream.close();
  await worker.stop();
  await connection.close();
  await database.close();
  await server.stop();
}
