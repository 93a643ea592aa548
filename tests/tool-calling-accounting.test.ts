// Unit tests of the tool-calling protocol's deterministic parts: the exact `calculate` tool, the
// accounting of a request by the model's report (verbatim quotes, sentence coverage, what may
// perform an effect), and the receipt of a tool-calling run. Pure functions: no database, no Temporal.
import { describe, expect, it } from 'vitest';
import { calculate, numbersIn } from '../domain/agent/calculate.ts';
import { accountFor, type CallRecord, parseReport, type ReportPart, sentenceSpans } from '../domain/agent/report.ts';
import { digestOf } from '../domain/digest.ts';
import type { Plan, PlanStep } from '../domain/planning/plan.ts';
import { evidenceOf, exactOutput } from '../domain/runs/protocol-outputs.ts';
import type { StepResult } from '../domain/runs/run-types.ts';
import { verifyToolRun } from '../domain/runs/tool-verification.ts';

describe('calculate', () => {
  const evidence = ['Sum these and tell payroll the result: 12, 30, 8. Revenue was 1,200 and costs 950.'];

  it('evaluates exactly in decimal arithmetic, with the numbers the evidence states', () => {
    expect(calculate('sum(12, 30, 8)', evidence)).toMatchObject({ ok: true, value: '50' });
    expect(calculate('(1200 - 950) / 1200 * 100', evidence)).toMatchObject({ ok: true, value: '20.83333333333333333333333333333333' });
    expect(calculate('round((1200 - 950) / 1200 * 100, 2)', evidence)).toMatchObject({ ok: true, value: '20.83' });
    // No binary float: 0.1 + 0.2 is 0.3.
    expect(calculate('0.1 + 0.2', ['0.1 and 0.2'])).toMatchObject({ ok: true, value: '0.3' });
  });

  it('refuses a number the evidence does not state, so a model cannot compute with numbers it made up', () => {
    expect(calculate('12 + 31', evidence)).toMatchObject({ ok: false });
    expect((calculate('12 + 31', evidence) as { problem: string }).problem).toContain('31');
  });

  it('runs no code: symbols, assignments, strings, matrices, units and other functions are refused', () => {
    for (const e of [
      'x + 1',
      'a = 12',
      'import({}, {})',
      'evaluate("12")',
      '"12"',
      '[12, 30]',
      '12 cm',
      'createUnit("foo")',
      'f(x) = x',
      'parse("1")',
      '12 ? 30 : 8',
    ]) {
      expect(calculate(e, evidence).ok, e).toBe(false);
    }
  });

  it('refuses a result that is not one finite number of a sensible size', () => {
    expect(calculate('sqrt(12 - 30)', evidence).ok).toBe(false);
    expect(calculate('12 / (30 - 30)', evidence).ok).toBe(false);
    // Written out in full, 100^(100^4) would be a string of 200 million digits.
    expect(calculate('100^(100*100*100*100)', evidence).ok).toBe(false);
    expect(calculate('1 / 100^100', evidence).ok).toBe(false);
  });

  it('reads numbers with thousands separators as the numbers they are', () => {
    expect([...numbersIn('1,200.50 and 8 and .5')]).toEqual(['1200.5', '8', '0.5']);
  });
});

describe('exact built-ins over evidence', () => {
  const read: StepResult = {
    step_id: 'call_1',
    tool: 'files__read_text_file',
    status: 'done',
    detail: '',
    output: { content: [{ type: 'text', text: 'Rent 700\nFood 250.50' }] },
    sources: [],
  };

  it('take their numbers and items from the request or from the strings of earlier results', () => {
    const evidence = evidenceOf('Add up the amounts in the file.', [read]);
    expect(exactOutput('calculate', { expression: '700 + 250.50' }, evidence)).toMatchObject({ ok: true, output: { value: '950.5' } });
    expect(exactOutput('count_list_items', { items: ['Rent 700', 'Food 250.50'] }, evidence)).toMatchObject({ ok: true, output: { count: 2 } });
    expect(exactOutput('count_list_items', { items: ['Rent 700', 'Car 90'] }, evidence)).toMatchObject({ ok: false });
    expect(exactOutput('find_contact_details', { text: 'write to ann@example.com' }, ['Please write to ann@example.com today.'])).toMatchObject({
      ok: true,
      output: { emails: ['ann@example.com'] },
    });
    expect(exactOutput('find_contact_details', { text: 'bob@example.com' }, ['no address here'])).toMatchObject({ ok: false });
  });
});

const part = (p: Partial<ReportPart>): ReportPart => ({ quote: '', asks: 'information', status: 'performed', calls: [], answer: '', reason: '', ...p });
const delivered: CallRecord = { step_id: 'step_1', tool: 'webhook_delivery', effect: 'external', status: 'done', approved: true, checked: true };

describe('accounting for a request with the report', () => {
  const input = 'Sum these and tell payroll the result: 12, 30, 8.';

  it('performs an effect part only with an approved external call that succeeded, never with an answer', () => {
    const calls = new Map([['c2', delivered]]);
    const ok = accountFor(input, { parts: [part({ quote: input, asks: 'effect', calls: ['c2'] })] }, calls);
    expect(ok.unresolved).toEqual([]);
    expect(ok.parts[0]).toMatchObject({ outcome: 'performed', by: ['step_1'], checked: true });

    const answered = accountFor(input, { parts: [part({ quote: input, asks: 'effect', answer: 'I told payroll: 50.' })] }, new Map());
    expect(answered.parts[0]!.outcome).toBe('not_performed');
    expect(answered.unresolved[0]).toContain('no approved external call that succeeded did it');

    const rejected = new Map([['c2', { ...delivered, status: 'rejected' as const, approved: false }]]);
    expect(accountFor(input, { parts: [part({ quote: input, asks: 'effect', calls: ['c2'] })] }, rejected).parts[0]!.outcome).toBe('not_performed');

    const unknown = new Map([['c2', { ...delivered, status: 'outcome_unknown' as const }]]);
    expect(accountFor(input, { parts: [part({ quote: input, asks: 'effect', calls: ['c2'] })] }, unknown).parts[0]!.outcome).toBe('outcome_unknown');
  });

  it('accepts a correct short answer: no minimum word count', () => {
    const a = accountFor(
      'Which two cities did I name? Paris and Lyon.',
      { parts: [part({ quote: 'Which two cities did I name? Paris and Lyon.', answer: 'Paris, Lyon' })] },
      new Map(),
    );
    expect(a.unresolved).toEqual([]);
    expect(a.parts[0]).toMatchObject({ outcome: 'performed', by: ['answer'], checked: false });
  });

  it('accounts for nothing with a quote that is not verbatim, punctuation included', () => {
    const a = accountFor(
      'Tell Dana the invoice was paid.',
      { parts: [part({ quote: 'Tell Dana that the invoice was paid', asks: 'effect', calls: ['c1'] })] },
      new Map([['c1', delivered]]),
    );
    expect(a.parts[0]!.outcome).toBe('not_performed');
    expect(a.unresolved.join(' ')).toContain('does not stand in the request');
    expect(a.unresolved.join(' ')).toContain('sentence 1');
  });

  it('lists every sentence no part quotes, found by Intl.Segmenter', () => {
    const text = 'Send the notes to Ann. Also, what is 2 + 2? Thanks.';
    expect(sentenceSpans(text).map(([s, e]) => text.slice(s, e).trim())).toEqual(['Send the notes to Ann.', 'Also, what is 2 + 2?', 'Thanks.']);
    const a = accountFor(text, { parts: [part({ quote: 'what is 2 + 2', answer: '4' })] }, new Map());
    expect(a.unresolved).toEqual([
      'sentence 1 "Send the notes to Ann.": no part of the report accounts for it.',
      'sentence 3 "Thanks.": no part of the report accounts for it.',
    ]);
  });

  it('says an effect that ran but no part of the request asks for it is unresolved', () => {
    const a = accountFor('What is 2 + 2?', { parts: [part({ quote: 'What is 2 + 2?', answer: '4' })] }, new Map([['c9', delivered]]));
    expect(a.unresolved).toContain('step_1 (webhook_delivery) was performed, and no part of the request that asks for an effect accounts for it.');
  });

  it('cites only calls of the run that succeeded', () => {
    const failed: CallRecord = { step_id: 'call_1', tool: 'files__read_text_file', effect: 'read', status: 'failed', approved: false, checked: false };
    const a = accountFor('Read a.txt.', { parts: [part({ quote: 'Read a.txt.', calls: ['c1', 'c7'] })] }, new Map([['c1', failed]]));
    expect(a.parts[0]!.outcome).toBe('not_performed');
    expect(a.unresolved[0]).toContain('"c7", which no tool call of this run has');
  });

  it('counts a sentence quoted only when most of it is: a quote of "the" or across two sentences accounts for none', () => {
    const text = 'What is the capital of France? Send the answer to Dana.';
    const trivial = accountFor(text, { parts: [part({ quote: 'the', answer: 'Paris' })] }, new Map());
    expect(trivial.covered).toEqual([]);
    const across = accountFor(text, { parts: [part({ quote: 'France? Send', answer: 'Paris' })] }, new Map());
    expect(across.covered).toEqual([]);
    // An instruction quoted without its connective, beside a clause of context, is quoted.
    const context = 'Our call is at 11:00 New York time; tell the Los Angeles team what time that is for them.';
    expect(
      accountFor(context, { parts: [part({ quote: 'tell the Los Angeles team what time that is for them.', answer: '8:00' })] }, new Map()).covered,
    ).toEqual([0]);
  });

  it('lets one approved effect perform one part only', () => {
    const text = 'Send it to Dana. Send it to support.';
    const a = accountFor(
      text,
      { parts: [part({ quote: 'Send it to Dana.', asks: 'effect', calls: ['c1'] }), part({ quote: 'Send it to support.', asks: 'effect', calls: ['c1'] })] },
      new Map([['c1', delivered]]),
    );
    expect(a.parts.map((p) => p.outcome)).toEqual(['performed', 'not_performed']);
    expect(a.unresolved[0]).toContain('step_1 already accounts for part 1');
  });

  it('says an effect of unknown outcome that no part accounts for is unresolved', () => {
    const unknown = { ...delivered, status: 'outcome_unknown' as const };
    const a = accountFor('What is 2 + 2?', { parts: [part({ quote: 'What is 2 + 2?', answer: '4' })] }, new Map([['c9', unknown]]));
    expect(a.unresolved).toEqual([expect.stringContaining('step_1 (webhook_delivery) may have been performed')]);
  });

  it('reads the report strictly: anything else accounts for nothing', () => {
    for (const content of [null, '', 'Done!', '{"parts": []}', '{"parts": [{"quote": 1}]}']) expect(typeof parseReport(content)).toBe('string');
    expect(parseReport('```json\n{"parts":[{"quote":"a","asks":"information","status":"performed","calls":[],"answer":"b","reason":""}]}\n```')).toMatchObject({
      parts: [{ quote: 'a', answer: 'b' }],
    });
    // A strict report whose answer holds a code block is read as the JSON it is.
    const withCode = JSON.stringify({ parts: [{ quote: 'a', asks: 'information', status: 'performed', calls: [], answer: 'Run:\n```\nls\n```', reason: '' }] });
    expect(parseReport(withCode)).toMatchObject({ parts: [{ answer: 'Run:\n```\nls\n```' }] });
  });
});

describe('the receipt of a tool-calling run', () => {
  const input = 'Sum these and tell payroll the result: 12, 30, 8.';
  const calc: PlanStep = {
    id: 'call_1',
    tool: 'calculate',
    effect: 'read',
    purpose: '',
    scope: 'result',
    arguments: { expression: '12 + 30 + 8' },
    call_id: 'c1',
  };
  const send: PlanStep = {
    id: 'step_1',
    tool: 'webhook_delivery',
    effect: 'external',
    purpose: '',
    scope: 'webhook_delivery',
    arguments: { to: 'payroll', message: 'The total is 50.' },
    args_digest: digestOf({ to: 'payroll', message: 'The total is 50.' }),
    call_id: 'c2',
    round: 1,
    decision: 'approved',
  };
  const plan: Plan = { planner: 'model', protocol: 'tool_calls', steps: [calc, send], serverTools: {} };
  const calcOutput = { expression: '12 + 30 + 8', value: '50' };
  const sendOutput = { delivered: true, status: 200, payload_digest: 'sha256:x' };
  const results: StepResult[] = [
    { step_id: 'call_1', tool: 'calculate', status: 'done', detail: '', output: calcOutput, output_digest: digestOf(calcOutput), sources: ['input'] },
    { step_id: 'step_1', tool: 'webhook_delivery', status: 'done', detail: '', output: sendOutput, output_digest: digestOf(sendOutput), sources: [] },
  ];
  const report = JSON.stringify({ parts: [{ quote: input, asks: 'effect', status: 'performed', calls: ['c1', 'c2'], answer: '', reason: '' }] });

  it('is verified when every part is performed by checked calls, and names the approved effect', () => {
    const { receipt } = verifyToolRun({ runId: 'run_1', input, plan, results, report, stopped: null, refusals: [] });
    expect(receipt.unresolved).toEqual([]);
    expect(receipt.verification_class).toBe('verified');
    expect(receipt.action_boundary).toMatchObject({ effects_approved: ['webhook_delivery:step_1'], effects_performed: ['webhook_delivery:step_1'] });
    expect(receipt.actions).toEqual([{ n: 1, kind: 'effect', quote: input, outcome: 'performed', by: ['call_1', 'step_1'], checked: true }]);
  });

  it('claims no effect whose call was never approved, whatever the report says', () => {
    const unapproved = { ...plan, steps: [calc, { ...send, decision: undefined }] };
    const { receipt } = verifyToolRun({ runId: 'run_1', input, plan: unapproved, results, report, stopped: null, refusals: [] });
    expect(receipt.actions![0]!.outcome).toBe('not_performed');
    expect(receipt.action_boundary.effects_approved).toEqual([]);
    expect(receipt.unresolved.length).toBeGreaterThan(0);
  });

  it('does not check a calculation whose recorded output is not what its arguments give', () => {
    const forged = [{ ...results[0]!, output: { ...calcOutput, value: '51' }, output_digest: digestOf({ ...calcOutput, value: '51' }) }, results[1]!];
    const info = JSON.stringify({ parts: [{ quote: input, asks: 'information', status: 'performed', calls: ['c1'], answer: '', reason: '' }] });
    const { receipt } = verifyToolRun({ runId: 'run_1', input, plan, results: forged, report: info, stopped: null, refusals: [] });
    expect(receipt.actions![0]).toMatchObject({ outcome: 'performed', checked: false });
    expect(receipt.verification_class).toBe('unverified');
  });
});
