// `gws approve RUN [--reason …]` and `gws reject RUN [--reason …]`: the decision on the external effects
// a run waits for (POST /v1/agent-runs/{run_id}/approval), as the approver whose key is GWS_APPROVER_KEY.
// It carries an Idempotency-Key, so the retry of an unconfirmed decision (503) is applied once.
import { randomUUID } from 'node:crypto';
import { type CommandContext, writeJson, writeLine } from './context.ts';
import { unwrap } from './errors.ts';
import { EXIT } from './exit-codes.ts';
import { describeRun, gwsCommand } from './format.ts';
import { withRetries } from './retry.ts';

export async function decideCommand(ctx: CommandContext, decision: 'approve' | 'reject', runId: string, options: { reason?: string }): Promise<number> {
  const key = `gws-${randomUUID()}`;
  // An approval names the argument digests of what is awaiting it now, so it approves exactly those:
  // if another approver edits them first, it is refused as stale instead of counting on arguments unseen.
  const before = unwrap(await withRetries(() => ctx.client.GET('/v1/agent-runs/{run_id}', { params: { path: { run_id: runId } } })));
  const digests = decision === 'approve' ? (before.approval?.effects ?? []).flatMap((e) => (e.args_digest ? [e.args_digest] : [])) : [];
  const run = unwrap(
    await withRetries(
      () =>
        ctx.client.POST('/v1/agent-runs/{run_id}/approval', {
          params: { path: { run_id: runId }, header: { 'idempotency-key': key } },
          body: { decision, ...(options.reason !== undefined ? { reason: options.reason } : {}), ...(digests.length ? { digests } : {}) },
        }),
      { onRetry: (ms, why) => writeLine(ctx.err, `${why}; retrying in ${ms / 1_000} s`) },
    ),
  );
  if (ctx.mode === 'json') writeJson(ctx.out, run);
  else {
    writeLine(ctx.out, `${decision === 'approve' ? 'approved' : 'rejected'}: run ${run.run_id} is ${describeRun(run)}`);
    const needed = run.approval?.state === 'pending' ? (run.approval.approvals_needed ?? 0) : 0;
    if (needed > 0) {
      const by = [...new Set((run.approval?.approvals ?? []).filter((v) => v.decision === 'approve').map((v) => v.by.name))];
      writeLine(ctx.out, `approved by ${by.join(', ')}; ${needed} more approval${needed === 1 ? '' : 's'} needed from other approvers`);
    }
    writeLine(ctx.out, `follow: ${gwsCommand.follow(run.run_id)}`);
  }
  return EXIT.ok;
}
