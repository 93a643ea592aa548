// Verification of a tool-calling run (Plan.protocol 'tool_calls'): the receipt is computed from the
// calls that ran, the approvals and the model's report (domain/agent/report.ts), never asserted.
// A call's output counts as checked only when it is derived again from the call's own arguments and
// the evidence before it (the exact built-ins) or confirmed by its receiver (an approved effect that
// succeeded); the model's answers are never checked.
import { type Accounting, accountFor, type CallRecord, parseReport } from '../agent/report.ts';
import { digestOf } from '../digest.ts';
import { approvedBy, approversOfEffects } from './approval-votes.ts';
import type { Plan, PlanStep } from '../planning/plan.ts';
import { type ActionOutcome, type CompletionReceipt, coverageRatio, type VerificationClass } from '../receipt.ts';
import { evidenceOf, exactOutput } from './protocol-outputs.ts';
import type { ApprovalRecord, LoopStop, StepResult } from './run-types.ts';
import { type MemoryReference, memorySource } from './tool-outputs.ts';
import type { RunResult } from './verification.ts';

export interface ToolRunVerifyInput {
  runId: string;
  input: string;
  plan: Plan;
  results: StepResult[];
  /** The model's final content (its report), or null when it gave none. */
  report: string | null;
  stopped: LoopStop | null;
  /** Calls the service refused (unknown tool, invalid arguments, a limit), said as unresolved items. */
  refusals: string[];
  /**
   * A plan approved as a whole (the local provider's): its external steps carry no decision of their
   * own, and its report cites steps by their ids. Absent for tool-calling runs, whose rounds decide each call.
   */
  approval?: ApprovalRecord | null;
  /** Who wrote the report, for the summary: the model (the default) or a planner without one. */
  reporter?: string;
}

/** Whether a person approved the step: its own round's decision, or the approval of the plan it belongs to. */
const approvedStep = (step: PlanStep, approval: ApprovalRecord | null | undefined) =>
  step.decision !== undefined ? step.decision === 'approved' : approval?.state === 'approved';

/** Whether a done step's recorded output is what its arguments give again (exact built-ins), or is confirmed by its receiver (an approved effect). */
function isChecked(step: PlanStep, result: StepResult, before: StepResult[], input: string, approved: boolean): boolean {
  if (result.status !== 'done' || !result.output_digest || digestOf(result.output) !== result.output_digest) return false;
  if (step.effect === 'external') return approved;
  const again = exactOutput(step.tool, step.arguments ?? {}, evidenceOf(input, before));
  return again?.ok === true && digestOf(again.output) === result.output_digest;
}

/** Each call of the run by the model's call id (a plan approved as a whole: by step id), as the report's accounting sees it. */
export function callRecords(plan: Plan, results: StepResult[], input: string, approval?: ApprovalRecord | null): Map<string, CallRecord> {
  const records = new Map<string, CallRecord>();
  for (const step of plan.steps) {
    const id = step.call_id ?? (plan.protocol === 'tool_calls' ? null : step.id);
    if (!id) continue;
    const approved = approvedStep(step, approval);
    const at = results.findIndex((r) => r.step_id === step.id);
    const result = at >= 0 ? results[at] : undefined;
    const status: CallRecord['status'] = result ? result.status : step.decision === 'rejected' ? 'rejected' : 'not_run';
    records.set(id, {
      step_id: step.id,
      tool: step.tool,
      effect: step.effect,
      status,
      approved,
      checked: result ? isChecked(step, result, results.slice(0, at), input, approved) : false,
    });
  }
  return records;
}

function classOf(parts: ActionOutcome[], unresolved: string[]): VerificationClass {
  const checked = parts.filter((o) => o.outcome === 'performed' && o.checked).length;
  if (checked === 0) return 'unverified';
  return unresolved.length === 0 && checked === parts.length ? 'verified' : 'partially_verified';
}

function boundary(plan: Plan, results: StepResult[], approval: ApprovalRecord | null | undefined) {
  const statusOf = new Map(results.map((r) => [r.step_id, r.status]));
  const external = plan.steps.filter((s) => s.effect === 'external');
  const ref = (s: PlanStep) => `${s.tool}:${s.id}`;
  const status = (s: PlanStep) => statusOf.get(s.id);
  return {
    effects_requested: external.map(ref),
    effects_approved: external.filter((s) => approvedStep(s, approval)).map(ref),
    effects_performed: external.filter((s) => status(s) === 'done').map(ref),
    effects_not_performed: external.filter((s) => !['done', 'outcome_unknown'].includes(status(s) ?? '')).map(ref),
    effects_outcome_unknown: external.filter((s) => status(s) === 'outcome_unknown').map(ref),
    ...approvedBy(
      approversOfEffects(
        approval,
        external.filter((s) => approvedStep(s, approval)),
      ),
    ),
  };
}

const summaryOf = (a: Accounting, unresolved: number, reporter: string) =>
  `${a.parts.filter((p) => p.outcome === 'performed').length} of ${a.parts.length} part(s) of the request performed, by ${reporter} and the tool results` +
  (unresolved ? `; ${unresolved} item(s) unresolved, see receipt.unresolved.` : '.');

/** The tenant memory entries the run recalled, as sources: by reference (id, digest, length), never their text. */
const recalled = (results: StepResult[]) =>
  results
    .filter((r) => r.tool === 'memory_recall' && r.status === 'done')
    .flatMap((r) => (r.output as { entries?: (Partial<MemoryReference> & { id: string })[] } | null)?.entries ?? [])
    .map(memorySource);

/** The run's result and its receipt, with nothing claimed that was not done and checked. */
export function verifyToolRun(v: ToolRunVerifyInput): { result: RunResult; receipt: CompletionReceipt; outcome: string } {
  const records = callRecords(v.plan, v.results, v.input, v.approval);
  const report = v.stopped ? `the run stopped before the model reported (${v.stopped.code})` : parseReport(v.report);
  const accounting = accountFor(v.input, report, records);
  const unresolved = [...accounting.unresolved, ...v.refusals];
  if (v.stopped) unresolved.push(`${v.stopped.code}: ${v.stopped.message}`);
  const uniqueUnresolved = [...new Set(unresolved)];
  const actions: ActionOutcome[] = accounting.parts.map((p) => ({ n: p.n, kind: p.asks, quote: p.quote, outcome: p.outcome, by: p.by, checked: p.checked }));
  const outcome = summaryOf(accounting, uniqueUnresolved.length, v.reporter ?? "the model's report");
  // A catalog larger than a request carries is never cut silently: the summary names what the model was not shown.
  const notShown = v.plan.not_shown?.length
    ? ` The model was not shown ${v.plan.not_shown.length} tool(s) of the catalog: ${v.plan.not_shown.slice(0, 10).join(', ')}.`
    : '';
  const result: RunResult = { summary: `${outcome}${notShown}`, ...(v.report != null ? { answer: v.report } : {}), steps: v.results };
  const resultDigest = digestOf(result);
  const usedUnits = accounting.covered.length;
  const argDigests = Object.fromEntries(
    v.plan.steps
      .filter((s) => s.effect === 'external' && s.args_digest)
      .flatMap((s) => [[`args:${s.id}`, s.args_digest!], ...(s.proposed_digest ? [[`proposed_args:${s.id}`, s.proposed_digest]] : [])]),
  );
  const stepDigests = Object.fromEntries(v.results.filter((r) => r.status === 'done').map((r) => [`step:${r.step_id}`, digestOf(r.output)]));
  return {
    result,
    outcome,
    receipt: {
      receipt_id: `rcpt_${resultDigest.slice(7, 31)}`,
      subject: { kind: 'run', id: v.runId },
      verification_class: classOf(actions, uniqueUnresolved),
      action_boundary: boundary(v.plan, v.results, v.approval),
      source_coverage: {
        sources: [
          { source: 'input', digest: digestOf(v.input), characters: v.input.length, units_total: accounting.sentences, units_used: usedUnits },
          ...recalled(v.results),
        ],
        coverage_ratio: coverageRatio(usedUnits, accounting.sentences),
      },
      digests: {
        algorithm: 'sha256',
        input: digestOf(v.input),
        plan: digestOf(v.plan),
        result: resultDigest,
        ...(v.report != null ? { answer: digestOf(v.report) } : {}),
        ...stepDigests,
        ...argDigests,
      },
      unresolved: uniqueUnresolved,
      persisted: true,
      actions,
    },
  };
}
