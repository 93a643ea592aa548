// `gws run "…" [--memory] [--model M] [--watch]`: creates a durable run (POST /v1/agent-runs, with an
// Idempotency-Key so a retried 503 creates it once) and, with --watch, follows it to its end.
import { randomUUID } from 'node:crypto';
import type { AgentRun } from '../../client/index.ts';
import { type CommandContext, writeJson, writeLine } from './context.ts';
import { createDisplay } from './display.ts';
import { unwrap } from './errors.ts';
import { EXIT, exitCodeOfState } from './exit-codes.ts';
import { describeRun, gwsCommand } from './format.ts';
import { withRetries } from './retry.ts';
import { watchRun } from './watch.ts';

export interface RunOptions {
  memory?: boolean;
  model?: string;
  watch?: boolean;
  idempotencyKey?: string;
}

export async function runCommand(ctx: CommandContext, input: string, options: RunOptions): Promise<number> {
  const key = options.idempotencyKey ?? `gws-${randomUUID()}`;
  const run: AgentRun = unwrap(
    await withRetries(
      () =>
        ctx.client.POST('/v1/agent-runs', {
          params: { header: { 'idempotency-key': key } },
          body: { input, memory: options.memory ?? false, ...(options.model ? { model: options.model } : {}) },
        }),
      { onRetry: (ms, why) => writeLine(ctx.err, `${why}; retrying in ${ms / 1_000} s`) },
    ),
  );
  if (options.watch) {
    const final = await watchRun(ctx.client, run.run_id, createDisplay(ctx.mode, ctx.out, ctx.err), { signal: ctx.signal }, run);
    return exitCodeOfState(final.status);
  }
  if (ctx.mode === 'json') writeJson(ctx.out, run);
  else {
    writeLine(ctx.out, `run ${run.run_id}: ${describeRun(run)}`);
    writeLine(ctx.out, `follow: ${gwsCommand.follow(run.run_id)}`);
  }
  return EXIT.ok;
}
