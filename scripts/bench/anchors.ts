// The anchors each service measurement is compared with, each in its own process:
//   hello  a Koa hello world (GET /hello), the anchor of GET /health;
//   pg     Koa doing one raw `pg` query per request (GET /runs/:id?tenant=…) with the API's pool size,
//          the anchor of GET /v1/agent-runs/{id};
//   start  raw client.workflow.start at fixed concurrency for a fixed time, with the API's search
//          attributes, static summary/details and an argument of the API's shape, through the same
//          data converter and payload codec, on a task queue no worker polls: the anchor of
//          POST /v1/agent-runs. Prints one JSON line (LoadResult) and exits.
//   node --import tsx scripts/bench/anchors.ts hello|pg|start '<json>'
import { Client, Connection } from '@temporalio/client';
import Koa from 'koa';
import pg from 'pg';
import { loadConfig } from '../../config/env.ts';
import { newId } from '../../domain/ids.ts';
import { serviceDataConverter } from '../../runtime/payload-codec.ts';
import { payloadCodecFor, resolvePayloadKeyring } from '../../runtime/payload-keys.ts';
import { runSummary } from '../../services/run-workflow.ts';
import type { RunRow } from '../../services/runs.ts';
import type { AgentRunInput, agentRunWorkflow } from '../../workflows/agent-run.ts';
import { RunStatusKey, TenantIdKey } from '../../domain/runs/search-attributes.ts';
import { summarize, type LoadResult } from './report.ts';

export interface StartAnchorArgs {
  temporalAddress: string;
  taskQueue: string;
  tenantId: string;
  tenantName: string;
  input: string;
  connections: number;
  warmupSeconds: number;
  seconds: number;
}

function hello(): Koa {
  const app = new Koa();
  app.use((ctx) => {
    ctx.body = { ok: true };
  });
  return app;
}

function oneQuery(): Koa {
  const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.POOL_SIZE ?? 10) });
  const app = new Koa();
  app.use(async (ctx) => {
    if (ctx.path === '/ready') {
      ctx.body = { ok: true };
      return;
    }
    const id = ctx.path.split('/').at(-1);
    const { rows } = await pool.query('select * from runs where id = $1 and tenant_id = $2', [id, ctx.query.tenant]);
    if (rows.length === 0) ctx.status = 404;
    else ctx.body = rows[0];
  });
  return app;
}

async function starts(a: StartAnchorArgs): Promise<LoadResult> {
  const config = loadConfig({ NODE_ENV: 'production', PAYLOAD_KEY: process.env.PAYLOAD_KEY });
  const codec = payloadCodecFor(resolvePayloadKeyring(config, { allowDataDirKey: false }));
  const connection = await Connection.connect({ address: a.temporalAddress });
  const client = new Client({ connection, dataConverter: serviceDataConverter(codec) });
  const startOne = async () => {
    const id = newId('run', 12);
    const args: AgentRunInput = {
      runId: id,
      tenantId: a.tenantId,
      input: a.input,
      memory: false,
      approvalTimeoutMs: config.runs.approvalTimeoutMs,
      model: 'svc-workspace',
    };
    await client.workflow.start<typeof agentRunWorkflow>('agentRunWorkflow', {
      taskQueue: a.taskQueue,
      workflowId: id,
      args: [args],
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      workflowIdConflictPolicy: 'USE_EXISTING',
      ...runSummary({ id, tenantId: a.tenantId, input: a.input, model: 'svc-workspace', memory: false } as RunRow, a.tenantName),
      typedSearchAttributes: [
        { key: TenantIdKey, value: a.tenantId },
        { key: RunStatusKey, value: 'accepted' },
      ],
    });
  };
  const phase = async (seconds: number) => {
    const latencies: number[] = [];
    let errors = 0;
    const end = performance.now() + seconds * 1000;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: a.connections }, async () => {
        while (performance.now() < end) {
          const s = performance.now();
          try {
            await startOne();
            latencies.push(performance.now() - s);
          } catch {
            errors++;
          }
        }
      }),
    );
    return summarize(latencies, (performance.now() - t0) / 1000, errors);
  };
  await phase(a.warmupSeconds);
  const result = await phase(a.seconds);
  await connection.close();
  return result;
}

const mode = process.argv[2];
if (mode === 'hello' || mode === 'pg') {
  const app = mode === 'hello' ? hello() : oneQuery();
  app.listen(Number(process.env.BENCH_PORT), '127.0.0.1');
  // An orderly exit on SIGTERM, so a CPU profile (BENCH_PROFILE_DIR) is written.
  process.once('SIGTERM', () => process.exit(0));
} else if (mode === 'start') {
  console.log(JSON.stringify(await starts(JSON.parse(process.argv[3]!) as StartAnchorArgs)));
  process.exit(0);
} else {
  console.error('usage: anchors.ts hello|pg|start <json>');
  process.exit(2);
}
