// The upstream model's part of a run, inside the workflow's steps: planning
// (asked once more when the plan is invalid) and the execute loop, where each
// model turn and each tool call is its own activity. Which tool call runs is
// decided here, deterministically (domain/agent/admission.ts): an external
// effect only as a step a person approved.
import { ActivityFailure, isCancellation, proxyActivities } from '@temporalio/workflow';
import type { createActivities } from '../activities/index.ts';
import type { PlanProposal } from '../activities/agent.ts';
import type { NumberedPart } from '../activities/embedded/answer-part.ts';
import { admitCall } from '../domain/agent/admission.ts';
import type { ChatMessage } from '../domain/chat/types.ts';
import type { ModelId } from '../domain/models.ts';
import type { ModelProvider } from '../domain/pricing.ts';
import type { Plan, PlanStep } from '../domain/planning/plan.ts';
import type { LoopStop, StepResult } from '../domain/runs/run-types.ts';

type Activities = ReturnType<typeof createActivities>;

// A failed model call charges nothing, so it is retried a few times; then the run stops needs_attention.
export const models = proxyActivities<Activities>({
  startToCloseTimeout: '3 minutes',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 5 },
});

export interface ModelContext {
  runId: string;
  tenantId: string;
  model: ModelId;
  provider: ModelProvider;
  input: string;
  /** The run recalls the tenant memory (material may come from there). Absent in runs started before it was passed. */
  memory?: boolean;
}

const unavailable = (what: string): LoopStop => ({ code: 'model_unavailable', message: `The model did not answer ${what} after retries.` });

/** Runs `call`; a model activity that kept failing becomes a stop, cancellation still propagates. */
export async function orStop<T>(call: () => Promise<T>, what: string): Promise<T | { kind: 'stopped'; stop: LoopStop }> {
  try {
    return await call();
  } catch (err) {
    if (!(err instanceof ActivityFailure) || isCancellation(err)) throw err;
    return { kind: 'stopped', stop: unavailable(what) };
  }
}

/** The model's plan, or why there is none: asked twice at most. */
export async function planWithModel(c: ModelContext): Promise<{ kind: 'planned'; plan: Plan } | { kind: 'stopped'; stop: LoopStop }> {
  let problems: string[] = [];
  for (let attempt = 1; attempt <= 2; attempt++) {
    const proposal: PlanProposal = await orStop(() => models.proposePlan({ ...c, attempt, problems }), 'the planning request');
    if (proposal.kind !== 'invalid') return proposal;
    problems = proposal.problems;
  }
  return { kind: 'stopped', stop: { code: 'plan_invalid', message: `The model's plan was invalid twice: ${problems.slice(0, 3).join(' ')}` } };
}

export interface LoopResult {
  results: StepResult[];
  answer: string | null;
  stopped: LoopStop | null;
  refusals: string[];
}

export interface LoopLimits {
  maxTurns: number;
  maxToolCalls: number;
}

/**
 * Model turns until the model answers, a limit is reached or the hold would
 * be passed. `runStep` runs one admitted tool call (and records progress).
 */
export async function executeWithModel(
  c: ModelContext,
  plan: Plan,
  limits: LoopLimits,
  runStep: (step: PlanStep, done: StepResult[]) => Promise<StepResult>,
): Promise<LoopResult> {
  const transcript: ChatMessage[] = [];
  const results: StepResult[] = [];
  const refusals: string[] = [];
  const used = new Set<string>();
  const stop = (s: LoopStop): LoopResult => ({ results, answer: null, stopped: s, refusals });
  for (let turn = 1; turn <= limits.maxTurns; turn++) {
    const toolsRun = results.filter((r) => r.status === 'done').map((r) => r.tool);
    const outcome = await orStop(() => models.modelTurn({ ...c, plan, transcript, turn, toolsRun }), `turn ${turn}`);
    if (outcome.kind === 'stopped') return stop(outcome.stop);
    if (outcome.kind === 'answer') return { results, answer: outcome.content, stopped: null, refusals };
    transcript.push(outcome.assistant);
    for (const [k, call] of outcome.calls.entries()) {
      const admission = admitCall(call, {
        plan: plan.steps,
        used,
        callsSoFar: used.size,
        maxToolCalls: limits.maxToolCalls,
        ref: `call_${turn}_${k + 1}`,
        serverTools: plan.serverTools,
      });
      let result: StepResult | null = null;
      if (admission.admitted) {
        used.add(admission.step.id);
        result = await runStep(admission.step, results);
      } else if (admission.tool) {
        result = { step_id: admission.stepId, tool: admission.tool, status: 'refused', detail: admission.reason, output: null, sources: [] };
      } else {
        refusals.push(`${admission.stepId}: ${admission.reason} Refused.`);
      }
      if (result) results.push(result);
      // The transcript is part of the workflow's history: memory_recall outputs in it are references
      // (id, digest), never text; the modelTurn activity reads the text from the vault for the model.
      const content = result
        ? { status: result.status, detail: result.detail, output: result.output }
        : { status: 'refused', detail: admission.admitted ? '' : admission.reason };
      transcript.push({ role: 'tool', tool_call_id: call.id, content: JSON.stringify(content) });
    }
  }
  return stop({ code: 'turn_limit', message: `The model gave no final answer within ${limits.maxTurns} turns.` });
}

/** Runs one planned step; `answers` are the model's answer parts written so far (a delivery carries them). */
export type RunPlannedStep = (step: PlanStep, done: StepResult[], answers?: NumberedPart[]) => Promise<StepResult>;

/** The read steps of a plan run step by step, and the model's answers: all of it but the external steps. */
export interface Prepared {
  results: StepResult[];
  parts: NumberedPart[];
  /** Why the answers stopped early (then no external step runs). */
  stopped: LoopStop | null;
}

/**
 * The reads and answers of a plan that fixes every step (Plan.execution 'steps', the embedded
 * model's): the service runs the read steps, then asks the model for its answer to each action it
 * answers or read for. Nothing external happens here, so it may run before the approval wait.
 */
export async function prepareByPlan(c: ModelContext, plan: Plan, runStep: RunPlannedStep): Promise<Prepared> {
  const results: StepResult[] = [];
  const reads = plan.steps.filter((s) => s.effect !== 'external');
  for (const step of reads) results.push(await runStep(step, results));
  // An action read for is answered only from a read that was done: a failed read leaves it unresolved, unasked.
  const readBy = new Map(reads.flatMap((s, i) => (results[i]?.status === 'done' ? (s.covers ?? []).map((n) => [n, s.id] as const) : [])));
  const answered = [...new Set([...(plan.answer ?? []), ...readBy.keys()])].sort((a, b) => a - b);
  const parts: NumberedPart[] = [];
  for (const action of answered) {
    const by = readBy.get(action);
    const ask = () => models.writeAnswerPart({ ...c, action, results, ...(plan.actions ? { actions: plan.actions } : {}), ...(by ? { readBy: by } : {}) });
    const outcome = await orStop(ask, `the answer to action ${action}`);
    if (outcome.kind === 'stopped') return { results, parts, stopped: outcome.stop };
    parts.push(outcome.part);
  }
  return { results, parts, stopped: null };
}

/**
 * A plan that fixes every step: its reads and answers (prepareByPlan, unless they were prepared before
 * the approval wait), then the approved external steps, which carry those answers. The model calls no
 * tool here.
 */
export async function executeByPlan(c: ModelContext, plan: Plan, runStep: RunPlannedStep, prepared?: Prepared): Promise<LoopResult> {
  const { results, parts, stopped } = prepared ?? (await prepareByPlan(c, plan, runStep));
  const done = [...results];
  const answer = parts.length ? JSON.stringify({ actions: parts }) : null;
  if (stopped) return { results: done, answer, stopped, refusals: [] };
  for (const step of plan.steps.filter((s) => s.effect === 'external')) done.push(await runStep(step, done, parts));
  return { results: done, answer, stopped: null, refusals: [] };
}
