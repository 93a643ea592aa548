// The anchors each service measurement is compared with, each in its own process:
//   hello  Koa + @koa/router with the API's routes, GET /health answering a constant: the anchor of GET /health;
//   pg     the same, GET /v1/agent-runs/:run_id?tenant=… doing one raw `pg` query with the API's pool
//          size: the anchor of GET /v1/agent-runs/{id};
//   start  raw client.workflow.start at fixed concurrency for a fixed time, with the API's search
//          attributes, static summary/details and an argument of the API's shape, through the same
//          data converter and payload codec, on a task queue no worker polls: the anchor of
//          POST /v1/agent-runs. Prints one JSON line (LoadResult) and exits.
//   node --import tsx scripts/bench/anchors.ts hello|pg|start '<json>'
import { Client, Connection } from '@temporalio/client';
import Router, { type RouterMiddleware } from '@koa/router';
import Koa from 'koa';
import pg from 'pg';
import { allRoutes } from '../../api/routes/index.ts';
import { loadConfig } from '../../config/env.ts';
import { localTemporal } from '../../config/temporal-connection-settings.ts';
import { newId } from '../../domain/ids.ts';
import { serviceDataConverter } from '../../runtime/payload-codec.ts';
import { temporalConnectOptions } from '../../runtime/temporal-connection.ts';
import { payloadCodecFor, resolvePayloadKeyring } from '../../runtime/payload-keys.ts';
import { runSummary } from '../../services/run-workflow.ts';
import type { RunRow } from '../../services/runs.ts';
import type { AgentRunInput, agentRunWorkflow } from '../../workflows/agent-run.ts';
import { RUN_BEHAVIOUR } from '../../domain/runs/run-input.ts';
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

/**
 * The API's routes (method and Koa-style path), from its own declarative list. Only the list is
 * read and no handler ever runs, so the route factories get a stub for their dependencies.
 */
function apiRoutes(): { method: string; path: string }[] {
  // A stub that answers any property or call with itself.
  const stub: any = new Proxy(() => {}, { get: (_t, p) => (p === Symbol.toPrimitive ? () => '' : p === 'then' ? undefined : stub), apply: () => stub });
  return allRoutes(stub, () => ({})).map((r) => ({ method: r.method.toUpperCase(), path: r.path.replace(/\{([^}]+)\}/g, ':$1') }));
}

/**
 * A bare Koa app routed by @koa/router as the API is (the same options and every one of its 73
 * routes, each answering 204), so an anchor pays the same routing: `own` handlers take the place
 * of the routes they name (`GET /health`), and /ready answers the bench's readiness probe.
 */
function routedApp(own: Record<string, Koa.Middleware>): Koa {
  const router = new Router({ sensitive: true, strict: true, exclusive: 'specificity' });
  router.get('/ready', (ctx) => {
    ctx.body = { ok: true };
  });
  for (const r of apiRoutes()) {
    const handler: Koa.Middleware =
      own[`${r.method} ${r.path}`] ??
      ((ctx) => {
        ctx.status = 204;
      });
    router.register(r.path, [r.method], handler as unknown as RouterMiddleware);
  }
  return new Koa().use(router.routes() as unknown as Koa.Middleware);
}

/** GET /health answering a constant: the API's /health without its work. */
function hello(): Koa {
  return routedApp({
    'GET /health': (ctx) => {
      ctx.body = { ok: true };
    },
  });
}

/** GET /v1/agent-runs/:run_id doing one raw `pg` query with the API's pool size. */
function oneQuery(): Koa {
  const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.POOL_SIZE ?? 10) });
  return routedApp({
    'GET /v1/agent-runs/:run_id': async (ctx) => {
      const { rows } = await pool.query('select * from runs where id = $1 and tenant_id = $2', [ctx.params.run_id, ctx.query.tenant]);
      if (rows.length === 0) ctx.status = 404;
      else ctx.body = rows[0];
    },
  });
}

async function starts(a: StartAnchorArgs): Promise<LoadResult> {
  const config = loadConfig({ NODE_ENV: 'production', PAYLOAD_KEY: process.env.PAYLOAD_KEY });
  const codec = payloadCodecFor(resolvePayloadKeyring(config, { allowDataDirKey: false }));
  const connection = await Connection.connect(temporalConnectOptions(localTemporal(a.temporalAddress)));
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
      behaviour: RUN_BEHAVIOUR,
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
