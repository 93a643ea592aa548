// Verification of a tool-calling run (Plan.protocol 'tool_calls'): the receipt is computed from the
// calls that ran, the approvals and the model's report (domain/agent/report.ts), never asserted.
// A call's output counts as checked only when it is derived again from the call's own arguments and
// the evidence before it (the exact built-ins) or confirmed by its receiver (an approved effect that
// succeeded); the model's answers are never checked.
import { type Accounting, accountFor, type CallRecord, parseReport } from '../agent/report.ts';
import { digestOf } from '../digest.ts';
import type { Plan, PlanStep } from '../planning/plan.ts';
import { type ActionOutcome, type CompletionReceipt, coverageRatio, type VerificationClass } from '../receipt.ts';
import { evidenceOf, exactOutput } from './protocol-outputs.ts';
import type { LoopStop, StepResult } from './run-types.ts';
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
}

/** Whether a done step's recorded output is what its arguments give again (exact built-ins), or is confirmed by its receiver (an approved effect). */
function isChecked(step: PlanStep, result: StepResult, before: StepResult[], input: string): boolean {
  if (result.status !== 'done' || !result.output_digest || digestOf(result.output) !== result.output_digest) return false;
  if (step.effect === 'external') return step.decision === 'approved';
  const again = exactOutput(step.tool, step.arguments ?? {}, evidenceOf(input, before));
  return again?.ok === true && digestOf(again.output) === result.output_digest;
}

/** Each call of the run by the model's call id, as the report's accounting sees it. */
export function callRecords(plan: Plan, results: StepResult[], input: string): Map<string, CallRecord> {
  const records = new Map<string, CallRecord>();
  for (const step of plan.steps) {
    if (!step.call_id) continue;
    const at = results.findIndex((r) => r.step_id === step.id);
    const result = at >= 0 ? results[at] : undefined;
    const status: CallRecord['status'] = result ? result.status : step.decision === 'rejected' ? 'rejected' : 'not_run';
    records.set(step.call_id, {
      step_id: step.id,
      tool: step.tool,
      effect: step.effect,
      status,
      approved: step.decision === 'approved',
      checked: result ? isChecked(step, result, results.slice(0, at), input) : false,
    });
  }
  return records;
}

function classOf(parts: ActionOutcome[], unresolved: string[]): VerificationClass {
  const checked = parts.filter((o) => o.outcome === 'performed' && o.checked).length;
  if (checked === 0) return 'unverified';
  return unresolved.length === 0 && checked === parts.length ? 'verified' : 'partially_verified';
}

function boundary(plan: Plan, results: StepResult[]) {
  const statusOf = new Map(results.map((r) => [r.step_id, r.status]));
  const external = plan.steps.filter((s) => s.effect === 'external');
  const ref = (s: PlanStep) => `${s.tool}:${s.id}`;
  const status = (s: PlanStep) => statusOf.get(s.id);
  return {
    effects_requested: external.map(ref),
    effects_approved: external.filter((s) => s.decision === 'approved').map(ref),
    effects_performed: external.filter((s) => status(s) === 'done').map(ref),
    effects_not_performed: external.filter((s) => !['done', 'outcome_unknown'].includes(status(s) ?? '')).map(ref),
    effects_outcome_unknown: external.filter((s) => status(s) === 'outcome_unknown').map(ref),
  };
}

const summaryOf = (a: Accounting, unresolved: number) =>
  `${a.parts.filter((p) => p.outcome === 'performed').length} of ${a.parts.length} part(s) of the request performed, by the model's report and the tool results` +
  (unresolved ? `; ${unresolved} item(s) unresolved, see receipt.unresolved.` : '.');

/** The run's result and its receipt, with nothing claimed that was not done and checked. */
export function verifyToolRun(v: ToolRunVerifyInput): { result: RunResult; receipt: CompletionReceipt; outcome: string } {
  const records = callRecords(v.plan, v.results, v.input);
  const report = v.stopped ? `the run stopped before the model reported (${v.stopped.code})` : parseReport(v.report);
  const accounting = accountFor(v.input, report, records);
  const unresolved = [...accounting.unresolved, ...v.refusals];
  if (v.stopped) unresolved.push(`${v.stopped.code}: ${v.stopped.message}`);
  const uniqueUnresolved = [...new Set(unresolved)];
  const actions: ActionOutcome[] = accounting.parts.map((p) => ({ n: p.n, kind: p.asks, quote: p.quote, outcome: p.outcome, by: p.by, checked: p.checked }));
  const outcome = summaryOf(accounting, uniqueUnresolved.length);
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
      action_boundary: boundary(v.plan, v.results),
      source_coverage: {
        sources: [{ source: 'input', digest: digestOf(v.input), characters: v.input.length, units_total: accounting.sentences, units_used: usedUnits }],
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
