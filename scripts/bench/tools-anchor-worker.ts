// Row 13's anchor worker: a bare SDK worker (default options and data converter, no interceptors) for
// scripts/bench/tools-workflow.ts. Its activities make what the service's run makes: each model turn
// one HTTP call to the scripted model with the same catalog, instructions and report format; each read
// the protocol's exact tool, computed the same way; the delivery one POST to the webhook.
//   node --import tsx scripts/bench/tools-anchor-worker.ts '<json ToolAnchorWorkerArgs>'
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import pg from 'pg';
import { PROTOCOL_INSTRUCTIONS } from '../../activities/tool-turn.ts';
import { protocolCatalog } from '../../domain/agent/protocol-tools.ts';
import { REPORT_FORMAT_NAME, REPORT_SCHEMA } from '../../domain/agent/report.ts';
import { exactOutput } from '../../domain/runs/protocol-outputs.ts';
import { anchorActivities, SCRATCH_TABLES } from './e2e-anchor-activities.ts';

export interface ToolAnchorWorkerArgs {
  temporalAddress: string;
  taskQueue: string;
  bundlePath: string;
  upstreamUrl: string;
  hookUrl: string;
  /** The shape anchor's writes (row 11's scratch tables), with the service's pool size. */
  databaseUrl: string;
  poolSize: number;
}

type Call = { id: string; name: string; arguments: Record<string, unknown> };

export function toolAnchorActivities(a: Pick<ToolAnchorWorkerArgs, 'upstreamUrl' | 'hookUrl'>) {
  return {
    async anchorTurn(t: { input: string; transcript: unknown[] }): Promise<{ assistant: unknown; calls: Call[] }> {
      const res = await fetch(`${a.upstreamUrl}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'bench',
          messages: [{ role: 'system', content: PROTOCOL_INSTRUCTIONS }, { role: 'user', content: t.input }, ...t.transcript],
          tools: protocolCatalog({}),
          response_format: { type: 'json_schema', json_schema: { name: REPORT_FORMAT_NAME, schema: REPORT_SCHEMA, strict: true } },
          max_tokens: 1024,
        }),
      });
      const message = ((await res.json()) as { choices: { message: { tool_calls?: { id: string; function: { name: string; arguments: string } }[] } }[] })
        .choices[0]!.message;
      const calls = (message.tool_calls ?? []).map((c) => ({
        id: c.id,
        name: c.function.name,
        arguments: JSON.parse(c.function.arguments) as Record<string, unknown>,
      }));
      return { assistant: message, calls };
    },
    async anchorRead(r: { input: string; tool: string; args: Record<string, unknown> }): Promise<unknown> {
      return exactOutput(r.tool, r.args, [r.input]);
    },
    async anchorDeliver(d: { args: Record<string, unknown> }): Promise<number> {
      const res = await fetch(a.hookUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(d.args) });
      return res.status;
    },
  };
}

if (process.argv[2]) {
  const a = JSON.parse(process.argv[2]) as ToolAnchorWorkerArgs;
  Runtime.install({ logger: new DefaultLogger('WARN'), shutdownSignals: [] });
  const pool = new pg.Pool({ connectionString: a.databaseUrl, max: a.poolSize });
  await pool.query(SCRATCH_TABLES);
  const worker = await Worker.create({
    connection: await NativeConnection.connect({ address: a.temporalAddress }),
    taskQueue: a.taskQueue,
    workflowBundle: { codePath: a.bundlePath },
    activities: { ...toolAnchorActivities(a), ...anchorActivities(pool) },
  });
  process.once('SIGTERM', () => worker.shutdown());
  console.log('anchor worker running');
  await worker.run();
  await pool.end();
  process.exit(0);
}
