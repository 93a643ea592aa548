// Unit tests: the completion receipt computed by verifyRun from a plan and the
// step results, built by hand exactly as the tools would record them.
// Pure functions only: no database, no Temporal, no HTTP.
import { describe, expect, it } from 'vitest';
import { digestOf } from '../domain/digest.ts';
import { planLocally } from '../domain/planning/local-planner.ts';
import type { Plan, PlanStep } from '../domain/planning/plan.ts';
import type { ApprovalRecord, StepResult } from '../domain/runs/run-types.ts';
import { memoryRecallOutput, textAnalysisOutput } from '../domain/runs/tool-outputs.ts';
import { type VerifyInput, verifyRun } from '../domain/runs/verification.ts';

const UNKNOWN_DETAIL = 'No answer from the webhook within 5000 ms after sending; the receiver may or may not have it.';

/** A step result as activities/tools.ts records it: output digest taken when the tool produced the output. */
function result(step: PlanStep, status: StepResult['status'], detail: string, output: unknown): StepResult {
  return {
    step_id: step.id,
    tool: step.tool,
    status,
    detail,
    output,
    scope: step.scope,
    output_digest: status === 'done' ? digestOf(output) : null,
    sources: step.tool === 'text_analysis' ? ['input'] : [],
  };
}

/** What each tool would record for `step`; `webhook` picks the delivery's fate. */
function perform(step: PlanStep, webhook: 'done' | 'outcome_unknown' = 'done'): StepResult {
  switch (step.tool) {
    case 'text_analysis': {
      const output = textAnalysisOutput(step.scope);
      return result(step, 'done', `Analysed ${output.sentences} sentence(s).`, output);
    }
    case 'memory_recall':
      return result(step, 'done', 'Recalled 1 memory entry.', memoryRecallOutput([{ id: 'mem_1', version: 1, content: 'The last outage lasted 2 hours.' }]));
    case 'webhook_delivery':
      return webhook === 'done'
        ? result(step, 'done', 'Delivered (HTTP 200).', { delivered: true, status: 200, payload_digest: digestOf('payload') })
        : result(step, 'outcome_unknown', UNKNOWN_DETAIL, null);
  }
}

const approved = (plan: Plan): ApprovalRecord => ({
  state: 'approved',
  effects: plan.steps.filter((s) => s.effect === 'external').map((s) => ({ step_id: s.id, tool: s.tool, why: s.purpose })),
  reason: 'The plan has an external effect.',
  deadline: '2030-01-01T00:00:00.000Z',
  decided_at: '2029-12-31T00:00:00.000Z',
  decision_reason: 'ok',
});

/** Verifies a locally planned run of `input` in which every step ran as `perform` says, unless `overrides` say otherwise. */
function verifyLocal(input: string, overrides: Partial<VerifyInput> & { webhook?: 'done' | 'outcome_unknown' } = {}) {
  const { webhook, ...rest } = overrides;
  const plan = rest.plan ?? planLocally(input, rest.memory ?? false);
  return verifyRun({
    runId: 'run_unit',
    input,
    memory: false,
    plan,
    results: plan.steps.map((s) => perform(s, webhook)),
    approval: approved(plan),
    ...rest,
  });
}

const TWO_ANALYSES = 'Summarise the incident timeline. List the risks and open questions.';

describe('verifyRun: analysis', () => {
  it('is verified when every analysis action was performed and its output recomputed', () => {
    const { receipt, result } = verifyLocal(TWO_ANALYSES);
    expect(receipt.verification_class).toBe('verified');
    expect(receipt.unresolved).toEqual([]);
    expect(receipt.actions).toEqual([
      { n: 1, kind: 'analysis', outcome: 'performed', by: ['step_1'], checked: true },
      { n: 2, kind: 'analysis', outcome: 'performed', by: ['step_2'], checked: true },
    ]);
    expect(receipt.action_boundary).toEqual({
      effects_requested: [],
      effects_approved: [],
      effects_performed: [],
      effects_not_performed: [],
      effects_outcome_unknown: [],
    });
    expect(Object.keys(receipt.digests)).toEqual(['algorithm', 'input', 'plan', 'result', 'step:step_1', 'step:step_2']);
    expect(receipt.digests.input).toBe(digestOf(TWO_ANALYSES));
    expect(receipt.digests['step:step_1']).toBe(digestOf(textAnalysisOutput('Summarise the incident timeline')));
    expect(receipt.receipt_id).toBe(`rcpt_${digestOf(result).slice(7, 31)}`);
    expect(result.summary).toMatch(/^2 of 2 requested action\(s\) performed, by analysis of the text given in the input/);
  });

  const tamperings: [string, (r: StepResult) => StepResult][] = [
    ['changed after its digest was taken', (r) => ({ ...r, output: { ...(r.output as object), key_phrases: ['forged'] } })],
    ['replaced, digest and all, by an output the tool does not derive', (r) => {
      const output = { ...(r.output as object), key_phrases: ['forged'] };
      return { ...r, output, output_digest: digestOf(output) };
    }],
  ];

  it.each(tamperings)('is not verified when an output was %s', (_, tamper) => {
    const plan = planLocally(TWO_ANALYSES, false);
    const [first, second] = plan.steps.map((s) => perform(s));
    const { receipt } = verifyLocal(TWO_ANALYSES, { plan, results: [tamper(first!), second!] });
    expect(receipt.verification_class).toBe('partially_verified');
    expect(receipt.unresolved).toEqual([
      'action 1 "Summarise the incident timeline": performed, but its recorded output did not match when recomputed.',
    ]);
    expect(receipt.actions!.map((a) => [a.n, a.outcome, a.checked])).toEqual([
      [1, 'performed', false],
      [2, 'performed', true],
    ]);
  });

  it('is unverified when the only analysis output does not check', () => {
    const input = 'Summarise the incident timeline.';
    const [step] = planLocally(input, false).steps;
    const recorded = perform(step!);
    const { receipt } = verifyLocal(input, { results: [{ ...recorded, output: { ...(recorded.output as object), sentences: 99 } }] });
    expect(receipt.verification_class).toBe('unverified');
    expect(receipt.unresolved).toHaveLength(1);
    expect(receipt.unresolved[0]).toContain('did not match when recomputed');
  });

  it('lists an analysis step that never ran as unresolved, once', () => {
    const { receipt } = verifyLocal(TWO_ANALYSES, { results: [perform(planLocally(TWO_ANALYSES, false).steps[0]!)] });
    expect(receipt.verification_class).toBe('partially_verified');
    expect(receipt.unresolved).toEqual(['action 2 "List the risks and open questions": not done; step_2 (text_analysis) was never run.']);
  });
});

describe('verifyRun: external effects', () => {
  const DELIVERY = 'Summarise the incident timeline and send it to the on-call channel.';

  it('counts a confirmed webhook delivery as performed', () => {
    const { receipt } = verifyLocal(DELIVERY, { webhook: 'done' });
    expect(receipt.verification_class).toBe('verified');
    expect(receipt.action_boundary).toEqual({
      effects_requested: ['webhook_delivery:step_2'],
      effects_approved: ['webhook_delivery:step_2'],
      effects_performed: ['webhook_delivery:step_2'],
      effects_not_performed: [],
      effects_outcome_unknown: [],
    });
  });

  it('keeps a delivery whose outcome is unknown out of effects_performed and in unresolved', () => {
    const { receipt } = verifyLocal(DELIVERY, { webhook: 'outcome_unknown' });
    expect(receipt.action_boundary).toEqual({
      effects_requested: ['webhook_delivery:step_2'],
      effects_approved: ['webhook_delivery:step_2'],
      effects_performed: [],
      effects_not_performed: [],
      effects_outcome_unknown: ['webhook_delivery:step_2'],
    });
    expect(receipt.actions).toEqual([
      { n: 1, kind: 'analysis', outcome: 'performed', by: ['step_1'], checked: true },
      { n: 2, kind: 'delivery', outcome: 'outcome_unknown', by: ['step_2'], checked: false },
    ]);
    expect(receipt.unresolved).toEqual([`action 2 "send it to the on-call channel": the outcome is unknown (${UNKNOWN_DETAIL}).`]);
    expect(receipt.verification_class).toBe('partially_verified');
    expect(receipt.digests).not.toHaveProperty('step:step_2');
  });

  it('is unverified when only unsupported actions were asked, each listed as not performed', () => {
    const { receipt } = verifyLocal('Delete the old S3 buckets and pay the vendor invoice.');
    expect(receipt.verification_class).toBe('unverified');
    expect(receipt.actions!.map((a) => [a.n, a.kind, a.outcome, a.checked])).toEqual([
      [1, 'unsupported', 'not_performed', false],
      [2, 'unsupported', 'not_performed', false],
    ]);
    expect(receipt.action_boundary).toEqual({
      effects_requested: ['action_1:delete', 'action_2:pay'],
      effects_approved: [],
      effects_performed: [],
      effects_not_performed: ['action_1:delete', 'action_2:pay'],
      effects_outcome_unknown: [],
    });
    expect(receipt.unresolved).toEqual([
      'action 1 "Delete the old S3 buckets": asks to delete, and no configured tool can do that; it was not done.',
      'action 2 "pay the vendor invoice": asks to pay, and no configured tool can do that; it was not done.',
    ]);
  });

  it('does not verify a run whose input asks for an effect in a single word', () => {
    const { receipt } = verifyLocal('Summarise the notes, then deploy.');
    expect(receipt.verification_class).toBe('partially_verified');
    expect(receipt.action_boundary.effects_not_performed).toEqual(['action_2:deploy']);
  });

  it('is partially verified when analysis was done but an unsupported action was also asked', () => {
    const { receipt } = verifyLocal('Summarise the notes and delete the drafts.');
    expect(receipt.verification_class).toBe('partially_verified');
    expect(receipt.action_boundary.effects_not_performed).toEqual(['action_2:delete']);
    expect(receipt.unresolved).toEqual(['action 2 "delete the drafts": asks to delete, and no configured tool can do that; it was not done.']);
  });
});

describe('verifyRun: model-planned runs', () => {
  const INPUT = 'Summarise the incident timeline.';
  const ANSWER = 'The incident had three phases: detection, mitigation and recovery.';
  const modelPlan: Plan = { planner: 'model', steps: [], gaps: [] };
  const verifyModel = (extra: Partial<VerifyInput>) => verifyLocal(INPUT, { plan: modelPlan, results: [], approval: null, ...extra });

  it('rests an analysis action no step covers on the answer, digests the answer, and does not call it checked', () => {
    const { receipt, result } = verifyModel({ answer: ANSWER });
    expect(receipt.actions).toEqual([{ n: 1, kind: 'analysis', outcome: 'performed', by: ['answer'], checked: false }]);
    expect(receipt.verification_class).toBe('unverified');
    expect(receipt.unresolved).toEqual([]);
    expect(receipt.digests.answer).toBe(digestOf(ANSWER));
    expect(result.answer).toBe(ANSWER);
  });

  it('does not let the answer stand in for an action the plan lists as a gap', () => {
    const { receipt } = verifyModel({ answer: ANSWER, plan: { ...modelPlan, gaps: [{ action: 1, reason: 'The model declined it.' }] } });
    expect(receipt.actions![0]!.outcome).toBe('not_performed');
    expect(receipt.unresolved).toEqual(['action 1 "Summarise the incident timeline": not done; The model declined it.']);
  });

  it('reports why the model stopped, with an answer and without one; neither is more than unverified', () => {
    const stopped = { code: 'turn_limit' as const, message: 'The model used all 8 turns without a final answer.' };
    const withAnswer = verifyModel({ answer: ANSWER, stopped }).receipt;
    expect(withAnswer.unresolved).toEqual(['turn_limit: The model used all 8 turns without a final answer.']);
    expect(withAnswer.verification_class).toBe('unverified');

    const withoutAnswer = verifyModel({ answer: null, stopped }).receipt;
    expect(withoutAnswer.unresolved).toEqual([
      'action 1 "Summarise the incident timeline": not done; no step of the plan carries it out.',
      'turn_limit: The model used all 8 turns without a final answer.',
    ]);
    expect(withoutAnswer.verification_class).toBe('unverified');
    expect(withoutAnswer.digests).not.toHaveProperty('answer');
  });
});

describe('verifyRun: source coverage', () => {
  const INPUT = 'Summarise the notes. Delete the drafts. What are the risks?';

  it('counts only the sentences of performed actions', () => {
    const { receipt } = verifyLocal(INPUT);
    expect(receipt.source_coverage).toEqual({
      sources: [{ source: 'input', digest: digestOf(INPUT), characters: INPUT.length, units_total: 3, units_used: 2 }],
      coverage_ratio: 0.667,
    });
  });

  it('does not count the sentence of an action whose step did not run', () => {
    const plan = planLocally(INPUT, false);
    const { receipt } = verifyLocal(INPUT, { results: [perform(plan.steps[0]!)] });
    expect(receipt.source_coverage.sources[0]).toMatchObject({ units_total: 3, units_used: 1 });
    expect(receipt.source_coverage.coverage_ratio).toBe(0.333);
  });

  it('adds each recalled memory entry as a source, and the recall covers no action', () => {
    const { receipt } = verifyLocal('Summarise the notes.', { memory: true });
    expect(receipt.verification_class).toBe('verified');
    expect(receipt.source_coverage.sources.map((s) => [s.source, s.units_total, s.units_used])).toEqual([
      ['input', 1, 1],
      ['memory:mem_1', 1, 1],
    ]);
    expect(receipt.source_coverage.sources[1]).toMatchObject({ digest: digestOf('The last outage lasted 2 hours.'), characters: 31 });
  });

  it('records a recalled entry by reference: id, version, digest and length, never its text', () => {
    const output = memoryRecallOutput([{ id: 'mem_1', version: 2, content: 'The last outage lasted 2 hours.' }]);
    expect(output).toEqual({ entries: [{ id: 'mem_1', version: 2, digest: digestOf('The last outage lasted 2 hours.'), characters: 31 }] });
    const { result } = verifyLocal('Summarise the notes.', { memory: true });
    expect(JSON.stringify(result)).not.toContain('outage');
  });

  it('still counts a recall recorded before references (with the text), by the same digest', () => {
    const plan = planLocally('Summarise the notes.', true);
    const legacy = result(plan.steps[0]!, 'done', 'Recalled 1 memory entry.', { entries: [{ id: 'mem_1', subject: 'incidents', content: 'The last outage lasted 2 hours.' }] });
    const { receipt } = verifyLocal('Summarise the notes.', { memory: true, plan, results: [legacy, ...plan.steps.slice(1).map((s) => perform(s))] });
    expect(receipt.source_coverage.sources[1]).toMatchObject({ source: 'memory:mem_1', digest: digestOf('The last outage lasted 2 hours.'), characters: 31 });
    expect(receipt.verification_class).toBe('verified');
  });

  it('remembers the run by its outcome line only: no key phrase or other step text', () => {
    const { result, outcome } = verifyLocal('Summarise the incident timeline.', { memory: true });
    expect(result.summary).toContain('Key phrases:');
    expect(outcome).toBe(result.summary.slice(0, result.summary.indexOf('. Key phrases:')) + '.');
    expect(outcome).not.toContain('incident');
  });
});

describe('verifyRun: self-checks', () => {
  it('flags an external effect performed without a recorded approval', () => {
    const { receipt } = verifyLocal('Summarise the notes and send them to the team.', { approval: null });
    expect(receipt.unresolved).toEqual(['step_2 (webhook_delivery): performed without a recorded approval.']);
    expect(receipt.verification_class).toBe('partially_verified');
  });

  it('maps plans recorded before steps named their actions by the text they analysed', () => {
    const input = 'Summarise the notes and send them to the team.';
    const legacy = planLocally(input, false);
    const plan = { ...legacy, steps: legacy.steps.map(({ covers: _covers, ...step }) => step) };
    const { receipt } = verifyLocal(input, { plan });
    expect(receipt.actions!.map((a) => [a.n, a.outcome, a.by])).toEqual([
      [1, 'performed', ['step_1']],
      [2, 'performed', ['step_2']],
    ]);
    expect(receipt.verification_class).toBe('verified');
  });
});
