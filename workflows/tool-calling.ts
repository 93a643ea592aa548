// The tool-calling protocol of an upstream model's run (docs/runs.md, "The tool-calling protocol"),
// inside the card's shape: plan, approval, execute, verify, settle. The model chooses tools from the
// whole catalog by their schemas; this code decides authorization only:
// - a read runs at once, as an activity, and its result goes back to the model;
// - an external call is proposed, never run: the calls of a turn are one approval round, and each
//   runs once, from the approval record, with exactly the approved (or edited) arguments;
// - a rejection goes back to the model as the call's result, with the reason;
// - a model that asks for further external calls after seeing results waits for another round,
//   up to MAX_APPROVAL_ROUNDS;
// - the model's report accounts for the request (domain/agent/report.ts), checked structurally.
// A run waiting for a round moves to a newer build by continue-as-new, carrying its loop (ToolLoop).
import { allHandlersFinished, condition } from '@temporalio/workflow';
import { scopeOf } from '../domain/agent/admission.ts';
import { protocolEffectOf } from '../domain/agent/protocol-tools.ts';
import type { ChatMessage } from '../domain/chat/types.ts';
import type { ModelId } from '../domain/models.ts';
import type { Plan, PlanStep } from '../domain/planning/plan.ts';
import type { LoopStop, StepResult } from '../domain/runs/run-types.ts';
import { type ModelContext, models, orStop } from './agent-loop.ts';
import { acts } from './run-activities.ts';
import type { RunContext, RunEnd } from './run-context.ts';
import { decisionOrUpgrade, effectToApprove, runTool, settlePhase, UPGRADE, withApprovers, withNeeded, withPolicy } from './run-phases.ts';
import type { ApprovalWait, Estimate, Reservation, ToolLoop } from './run-resume.ts';

/** Approval rounds a run may ask for; a model that proposes external calls after the last is told no. */
export const MAX_APPROVAL_ROUNDS = 3;

type Decided = { approved: PlanStep[] } | { rejected: string | null } | { expired: LoopStop };
type Continue = { continueWith: ApprovalWait };

const toolMessage = (id: string, content: unknown): ChatMessage => ({ role: 'tool', tool_call_id: id, content: JSON.stringify(content) });

/**
 * A result as the model is shown it, within what is left of the run's budget for tool results (so the
 * hold covers every call): a result that would pass it is shown cut to what is left, saying so.
 */
function shown(loop: ToolLoop, id: string, content: { status: string; detail: string; output: unknown }): ChatMessage {
  const full = JSON.stringify(content);
  if (full.length <= loop.shownLeft) {
    loop.shownLeft -= full.length;
    return { role: 'tool', tool_call_id: id, content: full };
  }
  const output = JSON.stringify(content.output ?? null);
  const excerpt = output.slice(0, Math.max(0, loop.shownLeft - content.detail.length - 200));
  loop.shownLeft = 0;
  const note = "The run's budget for tool results is used up: the output is cut to what was left of it.";
  return toolMessage(id, { status: content.status, detail: `${content.detail} ${note}`, output_excerpt: excerpt, output_chars: output.length });
}

/** What the model is told of a step's result: its status, detail and output (untrusted data, as the tool returned it). */
const resultContent = (r: StepResult, edited: boolean) => ({
  status: r.status,
  detail: edited ? `${r.detail} It ran with arguments a person edited at approval.` : r.detail,
  output: r.output,
});

/**
 * A tool-calling run from its plan step to its end, or, when `resumed`, from the approval wait an
 * earlier execution continued as new at. Returns how it ended, or the wait to continue on a newer build.
 */
export async function toolCallingRun(
  c: RunContext,
  reservation: Reservation,
  estimate: Estimate,
  model: ModelId,
  m: ModelContext,
  resumed?: ApprovalWait,
): Promise<RunEnd | Continue> {
  let plan: Plan;
  let loop: ToolLoop;
  if (resumed?.toolLoop) {
    ({ plan, toolLoop: loop } = resumed as ApprovalWait & { toolLoop: ToolLoop });
    c.live.stepsDone = loop.results.filter((r) => r.status !== 'refused').length;
  } else {
    await c.moveTo('advance', 'plan', { reservation });
    const { serverTools, notShown } = await acts.offeredServerTools({ tenantId: c.run.tenantId });
    plan = { planner: 'model', protocol: 'tool_calls', steps: [], serverTools, ...(notShown.length ? { not_shown: notShown } : {}) };
    // Runs estimated before the budget was recorded show results as they come.
    const shownLeft = (estimate.basis.tool_results_tokens_max ?? Number.MAX_SAFE_INTEGER / 8) * 4;
    loop = { transcript: [], results: [], round: 0, turn: 0, counts: { reads: 0, external: 0, refused: 0 }, shownLeft };
  }
  const serverTools = plan.serverTools ?? {};
  const maxTurns = estimate.basis.max_turns ?? 1;
  const maxToolCalls = estimate.basis.max_tool_calls ?? 0;
  const { transcript, results, counts } = loop;
  let report: string | null = null;
  let stopped: LoopStop | null = null;

  const run = async (step: PlanStep): Promise<StepResult> => {
    c.live.currentPlanStep = step.id;
    c.showDetails();
    const result = await runTool(c, step, results, undefined, undefined, 'tool_calls');
    c.live.stepsDone += 1;
    c.live.currentPlanStep = null;
    results.push(result);
    await c.moveTo('advance', c.live.step, { stepResults: [...results] }, 'run.step_finished');
    return result;
  };

  /**
   * The round's decision, applied: the approved calls run, a rejection is told to the model. An expired
   * round stops the loop: what was done before it is verified and charged, and nothing proposed runs.
   */
  const decide = async (proposed: PlanStep[], waitMs: number): Promise<LoopStop | Continue | null> => {
    const decided = await awaitRound(c, plan, proposed, waitMs);
    if (decided === UPGRADE) {
      const carried = { estimate, model, reservation, plan, approval: c.approval!, pending: c.pending, ...c.counters() };
      return { continueWith: { ...carried, toolLoop: loop } };
    }
    if ('expired' in decided) return decided.expired;
    await c.moveTo('execute', 'execute', { plan, approval: c.approval });
    if ('rejected' in decided) {
      for (const step of proposed) {
        step.decision = 'rejected';
        const detail = `A person rejected this call${decided.rejected ? `: ${decided.rejected}` : ''}. Nothing was run.`;
        transcript.push(toolMessage(step.call_id!, { status: 'rejected', detail }));
      }
      return null;
    }
    const approvedBy = new Map(c.approval!.effects.map((e) => [e.step_id, e.approved_by]));
    for (const step of decided.approved) {
      step.decision = 'approved';
      const by = approvedBy.get(step.id);
      if (by) step.approved_by = by;
      transcript.push(shown(loop, step.call_id!, resultContent(await run(step), step.proposed_digest !== undefined)));
    }
    return null;
  };

  if (resumed?.toolLoop) {
    // The same deadline as before the move; one already past expires at once (a timer needs a positive duration).
    const ended = await decide(
      plan.steps.filter((s) => s.round === loop.round && !s.decision),
      Math.max(1, Date.parse(resumed.approval.deadline) - Date.now()),
    );
    if (ended && 'continueWith' in ended) return ended;
    if (ended) stopped = ended;
  }
  while (!stopped) {
    if (loop.turn >= maxTurns) {
      stopped = { code: 'turn_limit', message: `The model gave no report within ${maxTurns} turns.` };
      break;
    }
    loop.turn += 1;
    const toolsRun = results.filter((r) => r.status === 'done').map((r) => r.tool);
    const outcome = await orStop(() => models.toolTurn({ ...m, serverTools, transcript, turn: loop.turn, toolsRun }), `turn ${loop.turn}`);
    if (outcome.kind === 'stopped') {
      stopped = outcome.stop;
      break;
    }
    // The embedded adapter's first turn says what it narrowed before its model chose, so a reader sees it.
    if ((outcome.kind === 'tool_calls' || outcome.kind === 'report') && outcome.hints) Object.assign(plan, { choice: 'ranked', hints: outcome.hints });
    if (outcome.kind === 'draft') {
      // A server that takes no report format beside tools: the report is asked for in a call of its own.
      const asked = await orStop(() => models.reportTurn({ ...m, transcript, turn: loop.turn, toolsRun, draft: outcome.content }), 'the report');
      if (asked.kind === 'stopped') stopped = asked.stop;
      else report = asked.content;
      break;
    }
    if (outcome.kind === 'report') {
      report = outcome.content;
      break;
    }
    uniqueCallIds(outcome, transcript, loop.turn);
    transcript.push(outcome.assistant);
    const proposed: PlanStep[] = [];
    for (const call of outcome.calls) {
      const effect = protocolEffectOf(call.name, serverTools);
      const refuse = (detail: string) => {
        results.push({ step_id: `refused_${++counts.refused}`, tool: call.name.slice(0, 128), status: 'refused', detail, output: null, sources: [] });
        transcript.push(toolMessage(call.id, { status: 'refused', detail }));
      };
      if (effect === null) refuse(`"${call.name.slice(0, 64)}" is not a tool of this run's catalog; nothing was run.`);
      else if (!call.arguments) refuse(`Invalid arguments for ${call.name}: ${call.problem ?? 'missing'}; nothing was run.`);
      else if (plan.steps.length >= maxToolCalls) refuse(`The run reached its limit of ${maxToolCalls} tool calls; nothing was run.`);
      else if (effect === 'read') {
        const step: PlanStep = {
          id: `call_${++counts.reads}`,
          tool: call.name,
          effect,
          purpose: 'A read the model asked for',
          scope: scopeOf(call.name, call.arguments),
          arguments: call.arguments,
          call_id: call.id,
        };
        plan.steps.push(step);
        c.live.stepsTotal = plan.steps.length;
        transcript.push(shown(loop, call.id, resultContent(await run(step), false)));
      } else if (loop.round >= MAX_APPROVAL_ROUNDS) {
        refuse(`The run has had its ${MAX_APPROVAL_ROUNDS} approval rounds; this external call was not proposed and nothing was run.`);
      } else {
        const step: PlanStep = {
          id: `step_${++counts.external}`,
          tool: call.name,
          effect,
          purpose: `An external call the model proposed (approval round ${loop.round + 1})`,
          scope: call.name,
          arguments: call.arguments,
          args_digest: call.digest!,
          call_id: call.id,
          round: loop.round + 1,
        };
        plan.steps.push(step);
        proposed.push(step);
      }
    }
    c.live.stepsTotal = plan.steps.length;
    if (proposed.length === 0) continue;
    loop.round += 1;
    await askRound(c, plan, proposed, loop.round);
    const ended = await decide(proposed, c.run.approvalTimeoutMs);
    if (ended && 'continueWith' in ended) return ended;
    if (ended) stopped = ended;
  }
  c.live.currentPlanStep = null;
  // From planning (no round was asked) or an expired round, the run passes through executing to verification.
  if (c.live.status !== 'executing') await c.moveTo('execute', 'execute', { plan, approval: c.approval });
  // The plan as it ended: every call the model made (an approval round also recorded it as it was then).
  await c.moveTo('verify', 'verify', { plan, approval: c.approval });
  const { runId, tenantId, input, memory } = c.run;
  const verified = await acts.verifyToolRun({ runId, input, plan, results, report, stopped, refusals: [] });
  if (memory) await acts.rememberRun({ runId, tenantId, input, summary: verified.summary });
  return await settlePhase(c, verified, { results, answer: report, stopped, refusals: [] }, reservation, estimate, model);
}

/**
 * Gives a call whose id is empty or one an earlier call of the run already has an id of its own, in the
 * assistant message and for its result alike, so a report's citation names one call and no record
 * hides another. Ids are the model's otherwise: its report cites them.
 */
function uniqueCallIds(outcome: { assistant: ChatMessage; calls: { id: string }[] }, transcript: ChatMessage[], turn: number): void {
  const used = new Set(transcript.flatMap((m) => (m.tool_calls ?? []).map((c) => c.id)));
  outcome.calls.forEach((call, k) => {
    if (call.id && !used.has(call.id)) {
      used.add(call.id);
      return;
    }
    let id = `call_t${turn}_${k + 1}`;
    while (used.has(id)) id = `${id}_`;
    used.add(id);
    const wire = outcome.assistant.tool_calls?.[k];
    if (wire) outcome.assistant = { ...outcome.assistant, tool_calls: outcome.assistant.tool_calls!.map((c, i) => (i === k ? { ...c, id } : c)) };
    call.id = id;
  });
}

/** Asks for one approval round: exactly `proposed`, shown with their arguments and digests, until the deadline. */
async function askRound(c: RunContext, plan: Plan, proposed: PlanStep[], round: number): Promise<void> {
  c.nextRound();
  c.approval = withNeeded({
    state: 'pending',
    effects: proposed.map((s) => withPolicy(effectToApprove(s, plan), c.run.approvalPolicies)),
    reason: `The model asks for ${proposed.length} external call(s); a person must approve each exact call. Possession of a key never approves anything.`,
    deadline: new Date(Date.now() + c.run.approvalTimeoutMs).toISOString(),
    round,
    decided_at: null,
    decision_reason: null,
  });
  c.live.approval = 'pending';
  c.pending = proposed.map((s) => ({ step_id: s.id, tool: s.tool }));
  await c.moveTo('needs_approval', 'approval', { plan, approval: c.approval });
  c.announce('run.awaiting_approval', round);
}

/**
 * The wait for the round's decision, up to `waitMs`. Edited arguments (checked by the API against the
 * tool's schema) replace the proposed ones; both digests are kept. A deploy's nudge that finds a newer
 * target build ends the wait with UPGRADE, once no handler is mid-decision and the notification started.
 */
async function awaitRound(c: RunContext, plan: Plan, proposed: PlanStep[], waitMs: number): Promise<Decided | typeof UPGRADE> {
  const waited = await decisionOrUpgrade(c, waitMs);
  if (waited === UPGRADE) return UPGRADE;
  const approval = c.approval!;
  const decidedAt = new Date(Date.now()).toISOString();
  c.pending = [];
  if (waited === 'expired') {
    c.approval = { ...approval, state: 'expired', decided_at: decidedAt };
    c.live.approval = 'expired';
    return {
      expired: {
        code: 'approval_expired',
        message: `No approval decision before ${approval.deadline}; the calls proposed in round ${approval.round} were not run.`,
      },
    };
  }
  // The decision is audited before anything it allows happens (its handler's audit activity finishes first).
  await condition(allHandlersFinished);
  const decision = c.decision()!;
  if (decision.decision === 'reject') {
    c.approval = { ...c.approval!, state: 'rejected', decided_at: decidedAt, decision_reason: decision.reason ?? null };
    c.live.approval = 'rejected';
    return { rejected: decision.reason ?? null };
  }
  for (const edit of decision.edits ?? []) {
    const step = proposed.find((s) => s.id === edit.step_id);
    if (!step || edit.args_digest === step.args_digest) continue;
    step.proposed_digest = step.args_digest;
    step.arguments = edit.arguments;
    step.args_digest = edit.args_digest;
  }
  // The decision is audited, and its votes counted, once every handler finished.
  c.approval = {
    ...c.approval!,
    effects: withApprovers(
      proposed.map((s) => effectToApprove(s, plan)),
      c.approval!.effects,
    ),
    state: 'approved',
    decided_at: decidedAt,
    decision_reason: decision.reason ?? null,
  };
  c.live.approval = 'approved';
  return { approved: proposed };
}
