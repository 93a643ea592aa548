// Builds the run's result and completion receipt: verification class, action
// boundary, source coverage, digests and the unresolved remainder.
import { digestOf } from '../domain/digest.ts';
import type { Plan } from '../domain/planning/plan.ts';
import { type CompletionReceipt, coverageRatio } from '../domain/receipt.ts';
import { sentencesOf } from '../domain/text/analyze.ts';
import type { ApprovalRecord, StepResult } from './run-types.ts';

export interface VerifyInput {
  runId: string;
  input: string;
  memory: boolean;
  plan: Plan;
  results: StepResult[];
  approval: ApprovalRecord | null;
}

export interface RunResult {
  summary: string;
  key_phrases: string[];
  steps: StepResult[];
}

export function buildRunResult(v: VerifyInput): RunResult {
  const phrases = v.results
    .filter((r) => r.tool === 'text_analysis' && r.status === 'done')
    .flatMap((r) => (r.output as { key_phrases: string[] }).key_phrases);
  const unique = [...new Set(phrases)];
  const done = v.results.filter((r) => r.status === 'done').length;
  return {
    summary: `${done} of ${v.results.length} step(s) done${unique.length ? `; key phrases: ${unique.slice(0, 8).join(', ')}` : ''}.`,
    key_phrases: unique,
    steps: v.results,
  };
}

export function buildRunReceipt(v: VerifyInput, result: RunResult): CompletionReceipt {
  const unresolved = v.results
    .filter((r) => r.status !== 'done')
    .map((r) => `${r.step_id} (${r.tool}): ${r.status} - ${r.detail}`);
  const external = v.plan.steps.filter((s) => s.effect === 'external').map((s) => `${s.tool}:${s.id}`);
  const performed = v.results.filter((r) => r.status === 'done' && external.includes(`${r.tool}:${r.step_id}`)).map((r) => `${r.tool}:${r.step_id}`);
  const sentences = sentencesOf(v.input);
  const analysed = v.results.filter((r) => r.tool === 'text_analysis' && r.status === 'done').length;
  const analysedScopes = v.plan.steps.filter((s) => s.tool === 'text_analysis').slice(0, analysed).map((s) => s.scope);
  const usedSentences = sentences.filter((s) => analysedScopes.some((scope) => s.includes(scope.slice(0, 40)) || scope.includes(s)));
  const memorySources = v.results
    .filter((r) => r.tool === 'memory_recall' && r.status === 'done')
    .flatMap((r) => (r.output as { entries: { id: string; subject: string; content: string }[] }).entries)
    .map((e) => ({ source: `memory:${e.id}`, digest: digestOf(e.content), characters: e.content.length, units_total: 1, units_used: 1 }));
  const stepDigests = Object.fromEntries(v.results.map((r) => [`step:${r.step_id}`, digestOf(r.output)]));
  const resultDigest = digestOf(result);
  return {
    receipt_id: `rcpt_${resultDigest.slice(7, 31)}`,
    subject: { kind: 'run', id: v.runId },
    verification_class: unresolved.length === 0 ? 'verified' : 'partially_verified',
    action_boundary: {
      effects_requested: external,
      effects_approved: v.approval?.state === 'approved' ? external : [],
      effects_performed: performed,
    },
    source_coverage: {
      sources: [
        { source: 'input', digest: digestOf(v.input), characters: v.input.length, units_total: sentences.length, units_used: usedSentences.length },
        ...memorySources,
      ],
      coverage_ratio: coverageRatio(usedSentences.length, sentences.length),
    },
    digests: { algorithm: 'sha256', input: digestOf(v.input), plan: digestOf(v.plan), result: resultDigest, ...stepDigests },
    unresolved,
    persisted: true,
  };
}

export function verifyActivities() {
  return {
    async verifyRun(v: VerifyInput): Promise<{ result: RunResult; receipt: CompletionReceipt; summary: string }> {
      const result = buildRunResult(v);
      return { result, receipt: buildRunReceipt(v, result), summary: result.summary };
    },
  };
}
