// `gws runs list|get|export`: the run history (GET /v1/agent-runs, /v1/agent-runs/{run_id},
// /v1/agent-runs/export). --json prints the API's JSON as it is; export is NDJSON either way.
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type { RunStatus } from '../../client/index.ts';
import { type CommandContext, writeJson, writeLine } from './context.ts';
import { createDisplay } from './display.ts';
import { unwrap } from './errors.ts';
import { EXIT, exitCodeOfState } from './exit-codes.ts';
import { listLine, runLines } from './format.ts';
import { getRun, watchRun } from './watch.ts';

export interface ListOptions {
  status?: RunStatus;
  query?: string;
  limit?: number;
  cursor?: string;
  createdAfter?: string;
  createdBefore?: string;
}

const filters = (options: ListOptions) => ({
  ...(options.status ? { status: options.status } : {}),
  ...(options.query ? { q: options.query } : {}),
  ...(options.createdAfter ? { created_after: options.createdAfter } : {}),
  ...(options.createdBefore ? { created_before: options.createdBefore } : {}),
});

export async function listRuns(ctx: CommandContext, options: ListOptions): Promise<number> {
  const page = unwrap(
    await ctx.client.GET('/v1/agent-runs', {
      params: { query: { ...filters(options), ...(options.limit ? { limit: options.limit } : {}), ...(options.cursor ? { cursor: options.cursor } : {}) } },
    }),
  );
  if (ctx.mode === 'json') {
    writeJson(ctx.out, page);
    return EXIT.ok;
  }
  for (const run of page.data) writeLine(ctx.out, listLine(run));
  // The hint goes to stderr, so stdout stays one run per line.
  if (page.has_more && page.next_cursor) writeLine(ctx.err, `more: gws runs list --cursor ${page.next_cursor}`);
  return EXIT.ok;
}

export async function getRunCommand(ctx: CommandContext, runId: string, options: { watch?: boolean }): Promise<number> {
  if (options.watch) {
    const final = await watchRun(ctx.client, runId, createDisplay(ctx.mode, ctx.out, ctx.err), { signal: ctx.signal });
    return exitCodeOfState(final.status);
  }
  const run = await getRun(ctx.client, runId);
  if (ctx.mode === 'json') writeJson(ctx.out, run);
  else for (const line of runLines(run)) writeLine(ctx.out, line);
  return EXIT.ok;
}

export async function exportRuns(ctx: CommandContext, options: ListOptions): Promise<number> {
  const result = await ctx.client.GET('/v1/agent-runs/export', { params: { query: filters(options) }, parseAs: 'stream', signal: ctx.signal });
  const body = unwrap(result);
  if (body) await pipeline(Readable.fromWeb(body as WebReadableStream<Uint8Array>), ctx.out, { end: false });
  return EXIT.ok;
}
