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
    default:
      throw new Error(`no fake for ${step.tool}`);
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

const TWO_ANALYSES = 'Summarise the outage. List the risks and open questions.';
const NEEDS_MODEL =
  /^action \d+ "[^"]+": not done; needs a model to \w+, and this run's provider is local \(no model\)\. Key-phrase extraction \(step_\d\) prepared the text, but extracting key phrases does not \w+\. Route the model to a model provider/;

describe('verifyRun: key-phrase extraction prepares, it performs nothing', () => {
  it('leaves every analysis action of a local run unresolved, saying what would perform it; nothing is verified', () => {
    const { receipt, result } = verifyLocal(TWO_ANALYSES);
    expect(receipt.verification_class).toBe('unverified');
    expect(receipt.actions).toEqual([
      { n: 1, kind: 'analysis', outcome: 'not_performed', by: [], checked: false },
      { n: 2, kind: 'analysis', outcome: 'not_performed', by: [], checked: false },
    ]);
    expect(receipt.unresolved).toHaveLength(2);
    for (const line of receipt.unresolved) expect(line).toMatch(NEEDS_MODEL);
    expect(receipt.action_boundary).toEqual({
      effects_requested: [],
      effects_approved: [],
      effects_performed: [],
      effects_not_performed: [],
      effects_outcome_unknown: [],
    });
    // The preparation ran and is on the record, digests and all.
    expect(Object.keys(receipt.digests)).toEqual(['algorithm', 'input', 'plan', 'result', 'step:step_1', 'step:step_2']);
    expect(receipt.digests['step:step_1']).toBe(digestOf(textAnalysisOutput('Summarise the outage')));
    expect(receipt.receipt_id).toBe(`rcpt_${digestOf(result).slice(7, 31)}`);
    expect(result.summary).toMatch(
      /^0 of 2 requested action\(s\) performed, by the plan's tools without a model \(only the input was read\); 2 item\(s\) unresolved/,
    );
  });

  it.each([
    ['Review our Q3 vendor contracts: summarise the renewal dates and flag any auto-renewal clauses. Then email the summary to finance@example.com.'],
    ['Compare hiring two contractors against buying a CI service, and list the risks of each.'],
    ['Summarise the attached quarterly report and highlight the main risks.'],
  ])('performs nothing of "%s" by key phrases', (input) => {
    const { receipt } = verifyLocal(input);
    expect(receipt.actions!.filter((a) => a.outcome === 'performed')).toEqual([]);
    expect(receipt.unresolved.length).toBeGreaterThanOrEqual(receipt.actions!.length);
    expect(receipt.verification_class).toBe('unverified');
  });

  it('names the missing attachment', () => {
    const { receipt } = verifyLocal('Summarise the attached quarterly report.');
    expect(receipt.unresolved).toEqual([
      'action 1 "Summarise the attached quarterly report": not done; works on something attached, which the run was not given (a run holds only its input text, and the tenant memory when it recalls it); nothing was done for it. Put the text in the input.',
    ]);
  });

  const tamperings: [string, (r: StepResult) => StepResult][] = [
    ['changed after its digest was taken', (r) => ({ ...r, output: { ...(r.output as object), key_phrases: ['forged'] } })],
    [
      'replaced, digest and all, by an output the tool does not derive',
      (r) => {
        const output = { ...(r.output as object), key_phrases: ['forged'] };
        return { ...r, output, output_digest: digestOf(output) };
      },
    ],
  ];

  it.each(tamperings)('flags a preparation output %s', (_, tamper) => {
    const plan = planLocally(TWO_ANALYSES, false);
    const [first, second] = plan.steps.map((s) => perform(s));
    const { receipt } = verifyLocal(TWO_ANALYSES, { plan, results: [tamper(first!), second!] });
    expect(receipt.unresolved).toContain('step_1 (text_analysis): its recorded output did not match when recomputed.');
  });

  it('lists a preparation step that never ran as unresolved, once', () => {
    const { receipt } = verifyLocal(TWO_ANALYSES, { results: [perform(planLocally(TWO_ANALYSES, false).steps[0]!)] });
    expect(receipt.unresolved.filter((u) => u.includes('step_2 (text_analysis) was never run'))).toHaveLength(1);
  });
});

describe('verifyRun: external effects', () => {
  const DELIVERY = 'Summarise the incident timeline and tell the on-call channel that the incident is closed.';

  it('counts a confirmed webhook delivery as performed and checked; the analysis beside it stays unresolved', () => {
    const { receipt } = verifyLocal(DELIVERY, { webhook: 'done' });
    expect(receipt.verification_class).toBe('partially_verified');
    expect(receipt.actions).toEqual([
      { n: 1, kind: 'analysis', outcome: 'not_performed', by: [], checked: false },
      { n: 2, kind: 'delivery', outcome: 'performed', by: ['step_2'], checked: true },
    ]);
    expect(receipt.action_boundary).toEqual({
      effects_requested: ['webhook_delivery:step_2'],
      effects_approved: ['webhook_delivery:step_2'],
      effects_performed: ['webhook_delivery:step_2'],
      effects_not_performed: [],
      effects_outcome_unknown: [],
    });
  });

  it('verifies a run whose every action is a performed delivery', () => {
    const { receipt } = verifyLocal('Tell the team channel that the release notes are out.', { webhook: 'done' });
    expect(receipt.verification_class).toBe('verified');
    expect(receipt.unresolved).toEqual([]);
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
    expect(receipt.actions![1]).toEqual({ n: 2, kind: 'delivery', outcome: 'outcome_unknown', by: ['step_2'], checked: false });
    expect(receipt.unresolved).toContain(`action 2 "tell the on-call channel": the outcome is unknown (${UNKNOWN_DETAIL}).`);
    expect(receipt.verification_class).toBe('unverified');
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
    const { receipt } = verifyLocal('Deploy, then tell the team that the notes are ready.');
    expect(receipt.verification_class).toBe('partially_verified');
    expect(receipt.action_boundary.effects_not_performed).toEqual(['action_1:deploy']);
  });
});

describe('verifyRun: model-planned runs', () => {
  const INPUT = 'Summarise the outage. List the risks of the fix.';
  const PART_1 = 'The incident had three phases: detection, mitigation and recovery.';
  const PART_2 = 'The fix may slow deployments and leaves the old cache in place.';
  const structured = (parts: object[]) => JSON.stringify({ actions: parts });
  const BOTH = structured([
    { action: 1, status: 'performed', result: PART_1 },
    { action: 2, status: 'performed', result: PART_2 },
  ]);
  const modelPlan: Plan = { planner: 'model', steps: [], answer: [1, 2], gaps: [] };
  const verifyModel = (extra: Partial<VerifyInput>) => verifyLocal(INPUT, { plan: modelPlan, results: [], approval: null, ...extra });

  it('rests each analysis action on its own specific part of the answer, digests the answer, and does not call it checked', () => {
    const { receipt, result } = verifyModel({ answer: BOTH });
    expect(receipt.actions).toEqual([
      { n: 1, kind: 'analysis', outcome: 'performed', by: ['answer'], checked: false },
      { n: 2, kind: 'analysis', outcome: 'performed', by: ['answer'], checked: false },
    ]);
    expect(receipt.verification_class).toBe('unverified');
    expect(receipt.unresolved).toEqual([]);
    expect(receipt.digests.answer).toBe(digestOf(BOTH));
    expect(result.answer).toBe(BOTH);
  });

  it('reads an answer in "Action N:" sections as well, fenced JSON too', () => {
    const sections = `Action 1: ${PART_1}\n\n## Action 2\n${PART_2}`;
    expect(verifyModel({ answer: sections }).receipt.unresolved).toEqual([]);
    expect(verifyModel({ answer: `\`\`\`json\n${BOTH}\n\`\`\`` }).receipt.unresolved).toEqual([]);
  });

  it.each([
    ['"Done."', 'Done.'],
    ['an empty JSON list', structured([])],
    [
      'placeholders per action',
      structured([
        { action: 1, status: 'performed', result: 'Done.' },
        { action: 2, status: 'performed', result: 'completed' },
      ]),
    ],
  ])('performs nothing with an answer of %s', (_, answer) => {
    const { receipt } = verifyModel({ answer });
    expect(receipt.actions!.map((a) => a.outcome)).toEqual(['not_performed', 'not_performed']);
    expect(receipt.unresolved).toHaveLength(2);
  });

  it('leaves unresolved the action the answer has no part for, and the one the model itself marked unresolved', () => {
    const partial = verifyModel({ answer: structured([{ action: 1, status: 'performed', result: PART_1 }]) }).receipt;
    expect(partial.actions!.map((a) => a.outcome)).toEqual(['performed', 'not_performed']);
    expect(partial.unresolved).toEqual(['action 2 "List the risks of the fix": not done; the model\'s answer has no part for this action.']);
    const declined = verifyModel({
      answer: structured([
        { action: 1, status: 'performed', result: PART_1 },
        { action: 2, status: 'unresolved', reason: 'The fix is not described.' },
      ]),
    }).receipt;
    expect(declined.unresolved).toEqual(['action 2 "List the risks of the fix": not done; the model left it unresolved: The fix is not described.']);
  });

  it('never counts an answer about an attachment that a run cannot have had', () => {
    const { receipt } = verifyLocal('Summarise the attached quarterly report.', {
      plan: { planner: 'model', steps: [], answer: [1], gaps: [] },
      results: [],
      approval: null,
      answer: structured([{ action: 1, status: 'performed', result: 'Revenue grew 12% and margins held steady this quarter.' }]),
    });
    expect(receipt.actions![0]!.outcome).toBe('not_performed');
    expect(receipt.unresolved[0]).toContain('works on something attached');
  });

  it('does not let the answer stand in for an action the plan lists as a gap', () => {
    const { receipt } = verifyModel({ answer: BOTH, plan: { ...modelPlan, gaps: [{ action: 1, reason: 'The model declined it.' }] } });
    expect(receipt.actions![0]!.outcome).toBe('not_performed');
    expect(receipt.unresolved).toEqual(['action 1 "Summarise the outage": not done; The model declined it.']);
  });

  it('reports why the model stopped, with an answer and without one; neither is more than unverified', () => {
    const stopped = { code: 'turn_limit' as const, message: 'The model used all 8 turns without a final answer.' };
    const withAnswer = verifyModel({ answer: BOTH, stopped }).receipt;
    expect(withAnswer.unresolved).toEqual(['turn_limit: The model used all 8 turns without a final answer.']);
    expect(withAnswer.verification_class).toBe('unverified');

    const withoutAnswer = verifyModel({ answer: null, stopped }).receipt;
    expect(withoutAnswer.unresolved).toEqual([
      'action 1 "Summarise the outage": not done; the model gave no final answer.',
      'action 2 "List the risks of the fix": not done; the model gave no final answer.',
      'turn_limit: The model used all 8 turns without a final answer.',
    ]);
    expect(withoutAnswer.verification_class).toBe('unverified');
    expect(withoutAnswer.digests).not.toHaveProperty('answer');
  });
});

describe('verifyRun: source coverage', () => {
  const INPUT = 'Tell the team that the notes are ready. Delete the drafts. What are the risks?';

  it('counts only the sentences of performed and checked actions', () => {
    const { receipt } = verifyLocal(INPUT);
    expect(receipt.source_coverage).toEqual({
      sources: [{ source: 'input', digest: digestOf(INPUT), characters: INPUT.length, units_total: 3, units_used: 1 }],
      coverage_ratio: 0.333,
    });
  });

  it('does not count the sentence of an action whose step did not run', () => {
    const plan = planLocally(INPUT, false);
    const { receipt } = verifyLocal(INPUT, { results: plan.steps.filter((s) => s.tool !== 'webhook_delivery').map((s) => perform(s)) });
    expect(receipt.source_coverage.sources[0]).toMatchObject({ units_total: 3, units_used: 0 });
    expect(receipt.source_coverage.coverage_ratio).toBe(0);
  });

  it('adds each recalled memory entry as a source, and the recall covers no action', () => {
    const { receipt } = verifyLocal('Tell the team that the notes are ready.', { memory: true });
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
    const input = 'Tell the team that the notes are ready.';
    const plan = planLocally(input, true);
    const legacy = result(plan.steps[0]!, 'done', 'Recalled 1 memory entry.', {
      entries: [{ id: 'mem_1', subject: 'incidents', content: 'The last outage lasted 2 hours.' }],
    });
    const { receipt } = verifyLocal(input, { memory: true, plan, results: [legacy, ...plan.steps.slice(1).map((s) => perform(s))] });
    expect(receipt.source_coverage.sources[1]).toMatchObject({ source: 'memory:mem_1', digest: digestOf('The last outage lasted 2 hours.'), characters: 31 });
    expect(receipt.verification_class).toBe('verified');
  });

  it('remembers the run by its outcome line only: no key phrase or other step text', () => {
    const { result, outcome } = verifyLocal('Summarise the incident timeline.', { memory: true });
    expect(result.summary).toContain('Key phrases:');
    expect(outcome).toBe(`${result.summary.slice(0, result.summary.indexOf('. Key phrases:'))}.`);
    expect(outcome).not.toContain('incident');
  });
});

describe('verifyRun: self-checks', () => {
  it('flags an external effect performed without a recorded approval', () => {
    const { receipt } = verifyLocal('Tell the team that the notes are ready.', { approval: null });
    expect(receipt.unresolved).toEqual(['step_1 (webhook_delivery): performed without a recorded approval.']);
    expect(receipt.verification_class).toBe('partially_verified');
  });

  it('maps plans recorded before steps named their actions: a delivery by its kind, never an analysis by key phrases', () => {
    const input = 'Summarise the outage and tell the team that the outage is over.';
    const legacy = planLocally(input, false);
    const plan = { ...legacy, gaps: [], steps: legacy.steps.map(({ covers: _covers, ...step }) => step) };
    const { receipt } = verifyLocal(input, { plan });
    expect(receipt.actions!.map((a) => [a.n, a.outcome, a.by])).toEqual([
      [1, 'not_performed', []],
      [2, 'performed', ['step_2']],
    ]);
    expect(receipt.verification_class).toBe('partially_verified');
  });
});
