// Verification of a run: the receipt is computed from what was requested and
// what was performed, never asserted. Every requested action of the input is
// mapped to the steps that carried it out; every output is recomputed; every
// external effect is classed performed, not_performed or outcome_unknown; and
// whatever is not performed and checked is in `unresolved`.
import { digestOf } from '../digest.ts';
import { approvedBy, approversOfEffects } from './approval-votes.ts';
import { actionsOf, type Plan, type PlanStep } from '../planning/plan.ts';
import { type AnswerPart, answerParts, isSpecific } from '../agent/answer.ts';
import { missingMaterialReason, type RequestedAction, unsupportedReason } from '../planning/requested-actions.ts';
import { type ActionOutcome, type CompletionReceipt, coverageRatio, type VerificationClass } from '../receipt.ts';
import { sentencesOf, truncate } from '../text/analyze.ts';
import { effectOf, isToolId, TOOLS } from '../tools.ts';
import type { ApprovalRecord, LoopStop, StepResult } from './run-types.ts';
import { contactDetailsOutput, listCountOutput, type MemoryReference, memorySource, textAnalysisOutput } from './tool-outputs.ts';

export interface VerifyInput {
  runId: string;
  input: string;
  memory: boolean;
  plan: Plan;
  results: StepResult[];
  approval: ApprovalRecord | null;
  /** The model's final answer (upstream runs); an analysis action rests on it only where it has a specific part for that action. */
  answer?: string | null;
  /** Why a model-driven run stopped early, if it did. */
  stopped?: LoopStop | null;
  /** Tool calls of a model that named no tool of the catalog, refused. */
  refusals?: string[];
}

export interface RunResult {
  summary: string;
  key_phrases?: string[];
  answer?: string;
  steps: StepResult[];
}

/** Whether the recorded output is the one the tool produced: digest recomputed, deterministic tools derived again. */
export function outputChecks(result: StepResult, step: PlanStep | undefined, input: string, actions?: RequestedAction[]): boolean {
  if (result.status !== 'done' || !result.output_digest) return false;
  if (digestOf(result.output) !== result.output_digest) return false;
  const scope = result.scope ?? step?.scope;
  if (result.tool === 'text_analysis' && scope !== undefined) return digestOf(textAnalysisOutput(scope)) === result.output_digest;
  const action = step?.covers?.[0] ?? null;
  if (result.tool === 'count_list_items') return digestOf(listCountOutput(input, action, actions)) === result.output_digest;
  if (result.tool === 'find_contact_details') return digestOf(contactDetailsOutput(input, action)) === result.output_digest;
  return true;
}

/** Whether `step` carries out `action`; plans made before steps named their actions match by text (analysis) or kind (delivery). */
function covers(step: PlanStep, action: RequestedAction): boolean {
  // A server tool does what its step covers, whatever the action's verb: the plan maps actions to tools.
  if (!isToolId(step.tool)) return step.covers?.includes(action.n) ?? false;
  if (TOOLS[step.tool].capability !== action.kind) return false;
  if (step.covers) return step.covers.includes(action.n);
  return action.kind === 'delivery' || step.scope.includes(action.clause) || action.clause.includes(step.scope);
}

/** Whether a step of a server tool covers `a`: an action no built-in tool can do that an operator's tool may. */
const byServerTool = (plan: Plan, a: RequestedAction) => plan.steps.some((s) => !isToolId(s.tool) && (s.covers ?? []).includes(a.n));

/** Whether a tool is an external effect; a tool the plan does not know counts as one (fail closed). */
const isExternal = (tool: string, plan: Plan) => (effectOf(tool, plan.serverTools) ?? 'external') === 'external';

const quote = (a: RequestedAction) => `action ${a.n} "${truncate(a.clause, 120)}"`;

interface Assessment {
  outcomes: ActionOutcome[];
  unresolved: string[];
  /** Steps already accounted for by an action's unresolved item. */
  accounted: Set<string>;
}

const stepNote = (step: PlanStep, result: StepResult | undefined) =>
  result ? `${step.id} (${step.tool}) ${result.status}: ${result.detail}` : `${step.id} (${step.tool}) was never run`;

/** Why the answer does not perform `a`, or null when its part for `a` is specific work. */
function answerShortfall(part: AnswerPart | undefined): string | null {
  if (!part) return "the model's answer has no part for this action";
  if (part.status === 'unresolved') return `the model left it unresolved${part.reason.trim() ? `: ${truncate(part.reason.trim(), 200)}` : ''}`;
  return isSpecific(part.result) ? null : "the model's answer for this action is empty or says only that it was done";
}

/**
 * Maps each requested action to what carried it out: performed steps whose tool can do it (a delivery),
 * or, for analysis in a model-planned run, the model's answer, and only its specific part for that very
 * action. Preparation (key phrases) performs nothing; an action on material never given is never performed.
 */
function assessActions(v: VerifyInput, actions: RequestedAction[]): Assessment {
  const resultOf = new Map(v.results.map((r) => [r.step_id, r]));
  const modelPlanned = v.plan.planner !== 'local-deterministic';
  const gapOf = new Map((v.plan.gaps ?? []).map((g) => [g.action, g.reason]));
  const parts = answerParts(v.answer);
  const outcomes: ActionOutcome[] = [];
  const unresolved: string[] = [];
  const accounted = new Set<string>();
  const notDone = (a: RequestedAction, why: string) => {
    outcomes.push({ n: a.n, kind: a.kind, outcome: 'not_performed', by: [], checked: false });
    unresolved.push(`${quote(a)}: not done; ${why.replace(/\.$/, '')}.`);
  };
  for (const a of actions) {
    if (a.kind === 'unsupported' && !byServerTool(v.plan, a)) {
      outcomes.push({ n: a.n, kind: a.kind, outcome: 'not_performed', by: [], checked: false });
      unresolved.push(`${quote(a)}: ${unsupportedReason(a)}.`);
      continue;
    }
    const steps = v.plan.steps.filter((s) => covers(s, a));
    const results = steps.map((s) => ({ step: s, result: resultOf.get(s.id) }));
    for (const s of steps) accounted.add(s.id);
    const done = results.filter((x) => x.result?.status === 'done');
    const unknown = results.filter((x) => x.result?.status === 'outcome_unknown');
    if (a.missing) {
      notDone(a, gapOf.get(a.n) ?? missingMaterialReason(a));
    } else if (done.length > 0 && done.length === results.length) {
      const checked = done.every((x) => outputChecks(x.result!, x.step, v.input, actions));
      outcomes.push({ n: a.n, kind: a.kind, outcome: 'performed', by: done.map((x) => x.step.id), checked });
      if (!checked) unresolved.push(`${quote(a)}: performed, but its recorded output did not match when recomputed.`);
    } else if (unknown.length > 0) {
      outcomes.push({ n: a.n, kind: a.kind, outcome: 'outcome_unknown', by: unknown.map((x) => x.step.id), checked: false });
      unresolved.push(`${quote(a)}: the outcome is unknown (${unknown.map((x) => x.result!.detail).join(' ')}).`);
    } else if (steps.length === 0 && a.kind === 'analysis' && modelPlanned && !gapOf.has(a.n)) {
      const shortfall = v.answer == null ? 'the model gave no final answer' : answerShortfall(parts.get(a.n));
      // Performed by the model's own words: nothing the service can recompute checks them.
      if (shortfall === null) outcomes.push({ n: a.n, kind: a.kind, outcome: 'performed', by: ['answer'], checked: false });
      else notDone(a, shortfall);
    } else {
      notDone(
        a,
        gapOf.get(a.n) ??
          (steps.length === 0
            ? `no step of the plan ${a.kind === 'delivery' ? 'delivers it' : 'carries it out'}`
            : results
                .filter((x) => x.result?.status !== 'done')
                .map((x) => stepNote(x.step, x.result))
                .join('; ')),
      );
    }
  }
  return { outcomes, unresolved, accounted };
}

/** Each external effect's ref and what became of it. */
function effectBoundary(v: VerifyInput, actions: RequestedAction[]) {
  const resultOf = new Map(v.results.map((r) => [r.step_id, r]));
  const planned = v.plan.steps.filter((s) => s.effect === 'external');
  const ref = (s: { tool: string; id: string }) => `${s.tool}:${s.id}`;
  const unsupported = actions.filter((a) => a.kind === 'unsupported' && !byServerTool(v.plan, a)).map((a) => `action_${a.n}:${a.verb ?? 'act'}`);
  const refused = v.results.filter((r) => r.status === 'refused' && isExternal(r.tool, v.plan)).map((r) => `${r.tool}:${r.step_id}`);
  const statusOf = (s: PlanStep) => resultOf.get(s.id)?.status;
  return {
    effects_requested: [...planned.map(ref), ...refused, ...unsupported],
    effects_approved: v.approval?.state === 'approved' ? planned.map(ref) : [],
    effects_performed: planned.filter((s) => statusOf(s) === 'done').map(ref),
    effects_not_performed: [...planned.filter((s) => !['done', 'outcome_unknown'].includes(statusOf(s) ?? '')).map(ref), ...refused, ...unsupported],
    effects_outcome_unknown: planned.filter((s) => statusOf(s) === 'outcome_unknown').map(ref),
    ...approvedBy(v.approval?.state === 'approved' ? approversOfEffects(v.approval, planned) : []),
  };
}

function classOf(outcomes: ActionOutcome[], unresolved: string[]): VerificationClass {
  const checked = outcomes.filter((o) => o.outcome === 'performed' && o.checked).length;
  if (checked === 0) return 'unverified';
  return unresolved.length === 0 && checked === outcomes.length ? 'verified' : 'partially_verified';
}

export function buildRunResult(v: VerifyInput, outcomes: ActionOutcome[], unresolvedCount: number): RunResult {
  const phrases = [
    ...new Set(
      v.results
        .filter((r) => r.tool === 'text_analysis' && r.status === 'done')
        .flatMap((r) => (r.output as { key_phrases?: string[] } | null)?.key_phrases ?? []),
    ),
  ];
  const outcome = outcomeLine(v, outcomes, unresolvedCount);
  const summary = outcome.slice(0, -1) + (phrases.length ? `. Key phrases: ${phrases.slice(0, 8).join(', ')}.` : '.');
  return { summary, ...(v.answer != null ? { answer: v.answer } : { key_phrases: phrases }), steps: v.results };
}

/**
 * The summary's first sentence: counts and the basis only, no text of any step. What a
 * `memory: true` run remembers of itself, so the new vault entry never carries text a
 * tool or a model took from elsewhere (a recalled entry that is later forgotten).
 */
export function outcomeLine(v: Pick<VerifyInput, 'answer' | 'memory'>, outcomes: ActionOutcome[], unresolvedCount: number): string {
  const performed = outcomes.filter((o) => o.outcome === 'performed').length;
  // What was read, said exactly: a local run reads the input, and the tenant's memory only when asked to.
  const read = v.memory ? 'the input and the recalled memory entries were read' : 'only the input was read';
  const basis = v.answer != null ? "the model's answer and the tool results" : `the plan's tools without a model (${read})`;
  return (
    `${performed} of ${outcomes.length} requested action(s) performed, by ${basis}` +
    (unresolvedCount ? `; ${unresolvedCount} item(s) unresolved, see receipt.unresolved` : '') +
    '.'
  );
}

/** The run's result and its receipt, with nothing claimed that was not done and checked. */
export function verifyRun(v: VerifyInput): { result: RunResult; receipt: CompletionReceipt; outcome: string } {
  const actions = actionsOf(v.plan, v.input);
  const { outcomes, unresolved, accounted } = assessActions(v, actions);
  const stepOf = new Map(v.plan.steps.map((s) => [s.id, s]));
  for (const r of v.results) {
    if (accounted.has(r.step_id)) continue;
    if (r.status !== 'done') unresolved.push(`${r.step_id} (${r.tool}) ${r.status}: ${r.detail}`);
    else if (!outputChecks(r, stepOf.get(r.step_id), v.input, actions))
      unresolved.push(`${r.step_id} (${r.tool}): its recorded output did not match when recomputed.`);
  }
  const ran = new Set(v.results.map((r) => r.step_id));
  for (const s of v.plan.steps) if (!ran.has(s.id) && !accounted.has(s.id)) unresolved.push(`${stepNote(s, undefined)}.`);
  // The workflow sends nothing external before approval; the receipt checks that for itself.
  for (const r of v.results) {
    if (r.status === 'done' && isExternal(r.tool, v.plan) && v.approval?.state !== 'approved') {
      unresolved.push(`${r.step_id} (${r.tool}): performed without a recorded approval.`);
    }
  }
  unresolved.push(...(v.refusals ?? []));
  if (v.stopped) unresolved.push(`${v.stopped.code}: ${v.stopped.message}`);
  // A run ends completed only with nothing unresolved; an action not performed is never absent from it.
  for (const o of outcomes)
    if (o.outcome !== 'performed' && !unresolved.some((u) => u.startsWith(`action ${o.n} `))) unresolved.push(`action ${o.n}: not performed.`);
  const uniqueUnresolved = [...new Set(unresolved)];

  const result = buildRunResult(v, outcomes, uniqueUnresolved.length);
  const sentences = sentencesOf(v.input);
  const usedSentences = new Set(outcomes.filter((o) => o.outcome === 'performed' && o.checked).map((o) => actions[o.n - 1]!.sentence));
  // Recalled entries are recorded by reference (id, digest, length); the text is never in a run's output.
  const memorySources = v.results
    .filter((r) => r.tool === 'memory_recall' && r.status === 'done')
    .flatMap((r) => (r.output as { entries?: (Partial<MemoryReference> & { id: string; content?: string })[] } | null)?.entries ?? [])
    .map(memorySource);
  const stepDigests = Object.fromEntries(v.results.filter((r) => r.status === 'done').map((r) => [`step:${r.step_id}`, digestOf(r.output)]));
  // What each external step was approved to send, and, when a person edited it, what was proposed.
  const argDigests = Object.fromEntries(
    v.plan.steps
      .filter((s) => s.effect === 'external' && s.args_digest)
      .flatMap((s) => [[`args:${s.id}`, s.args_digest!], ...(s.proposed_digest ? [[`proposed_args:${s.id}`, s.proposed_digest]] : [])]),
  );
  const resultDigest = digestOf(result);
  return {
    result,
    outcome: outcomeLine(v, outcomes, uniqueUnresolved.length),
    receipt: {
      receipt_id: `rcpt_${resultDigest.slice(7, 31)}`,
      subject: { kind: 'run', id: v.runId },
      verification_class: classOf(outcomes, uniqueUnresolved),
      action_boundary: effectBoundary(v, actions),
      source_coverage: {
        sources: [
          { source: 'input', digest: digestOf(v.input), characters: v.input.length, units_total: sentences.length, units_used: usedSentences.size },
          ...memorySources,
        ],
        coverage_ratio: coverageRatio(usedSentences.size, sentences.length),
      },
      digests: {
        algorithm: 'sha256',
        input: digestOf(v.input),
        plan: digestOf(v.plan),
        result: resultDigest,
        ...(v.answer != null ? { answer: digestOf(v.answer) } : {}),
        ...stepDigests,
        ...argDigests,
      },
      unresolved: uniqueUnresolved,
      persisted: true,
      actions: outcomes,
    },
  };
}
