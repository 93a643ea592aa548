// The embedded adapter's report (activities/embedded/report.ts), read by the same structural
// accounting as any model's (domain/agent/report.ts): its quotes stand verbatim and cover every
// sentence, an effect is claimed only through its external call, and what failed is unresolved.
import { describe, expect, it } from 'vitest';
import { audienceOf, callIdOf, copiesInstruction, protocolArguments } from '../activities/embedded/report.ts';
import { planReport, quotesOf, type ShownResult } from '../domain/planning/plan-report.ts';
import { accountFor, type CallRecord } from '../domain/agent/report.ts';
import type { Plan, PlanStep } from '../domain/planning/plan.ts';
import { asksOnlyInformation, requestedActions } from '../domain/planning/requested-actions.ts';

const delivery = (covers: number[]): PlanStep => ({
  id: 'step_1',
  tool: 'webhook_delivery',
  effect: 'external',
  purpose: 'send',
  scope: 'message',
  covers,
  arguments: { message: 'the outage is resolved' },
});

/** The report as the embedded adapter gives it: calls by its call ids. */
const reportOf = (
  input: string,
  plan: Plan,
  actions: ReturnType<typeof requestedActions>,
  parts: Parameters<typeof planReport>[3],
  results: Map<string, ShownResult>,
) => planReport(input, plan, actions, parts, results, callIdOf);

const record = (step: PlanStep, status: CallRecord['status'], approved = true): [string, CallRecord] => [
  callIdOf(step),
  { step_id: step.id, tool: step.tool, effect: step.effect, status, approved, checked: status === 'done' && approved },
];

describe('the embedded adapter report', () => {
  it('quotes each action from where its words begin, so the quotes are verbatim and cover every sentence, context included', () => {
    const input = 'The deploy went out at noon. Summarise these notes and tell the support team that the outage is resolved.';
    const actions = requestedActions(input);
    const quotes = quotesOf(input, actions);
    expect(quotes).toHaveLength(actions.length);
    for (const q of quotes) expect(input.includes(q)).toBe(true);
    const accounting = accountFor(
      input,
      { parts: quotes.map((quote) => ({ quote, asks: 'information', status: 'unresolved', calls: [], answer: '', reason: 'x' })) },
      new Map(),
    );
    expect(accounting.covered).toHaveLength(accounting.sentences);
  });

  it('names the audience a delivery is for, and the webhook when the request names none it can read', () => {
    expect(audienceOf('Tell the support team that the outage is resolved')).toBe('the support team');
    expect(audienceOf('Let Dana know the invoice was paid')).toBe('Dana');
    expect(audienceOf('Post the summary to the team channel')).toBe('the team channel');
    expect(audienceOf('Send it')).toBe("the tenant's webhook");
  });

  it('claims a delivery performed only through its call, and the accounting finds it performed and checked once approved', () => {
    const input = 'Tell the support team that the outage is resolved.';
    const actions = requestedActions(input);
    const step = delivery([1]);
    const plan: Plan = { planner: 'model', steps: [step] };
    const report = reportOf(input, plan, actions, [], new Map([[callIdOf(step), { status: 'done', detail: 'Delivered (HTTP 200).' }]]));
    expect(report.parts).toEqual([expect.objectContaining({ asks: 'effect', status: 'performed', calls: [callIdOf(step)] })]);
    const accounting = accountFor(input, report, new Map([record(step, 'done')]));
    expect(accounting.unresolved).toEqual([]);
    expect(accounting.parts[0]).toMatchObject({ outcome: 'performed', checked: true });
  });

  it('leaves a rejected or failed delivery unresolved, saying what its call answered', () => {
    const input = 'Tell the support team that the outage is resolved.';
    const step = delivery([1]);
    const plan: Plan = { planner: 'model', steps: [step] };
    const rejected = reportOf(
      input,
      plan,
      requestedActions(input),
      [],
      new Map([[callIdOf(step), { status: 'rejected', detail: 'A person rejected this call.' }]]),
    );
    expect(rejected.parts[0]).toMatchObject({ asks: 'effect', status: 'unresolved' });
    expect(rejected.parts[0]!.reason).toContain('rejected');
  });

  it('gives an answered action its answer, and a gap its reason, never an effect for information', () => {
    const input = 'What is the capital of France? Send the release notes to the team.';
    const actions = requestedActions(input);
    const plan: Plan = { planner: 'model', steps: [], answer: [1], gaps: [{ action: 2, reason: 'names "the release notes", which the run was not given' }] };
    const report = reportOf(input, plan, actions, [{ action: 1, status: 'performed', result: 'Paris' }], new Map());
    expect(report.parts[0]).toMatchObject({ asks: 'information', status: 'performed', answer: 'Paris' });
    expect(report.parts[1]).toMatchObject({ asks: 'effect', status: 'unresolved' });
    const accounting = accountFor(input, report, new Map());
    expect(accounting.parts.map((p) => p.outcome)).toEqual(['performed', 'not_performed']);
    expect(accounting.unresolved.join(' ')).toContain('the release notes');
  });
});

describe('the embedded adapter on what nobody tuned for (issue 63)', () => {
  it('never lets an answer perform an action that asks for a change a tool could make', () => {
    const input = 'Please remember in the knowledge graph that our dentist is closed on Wednesdays.';
    const actions = requestedActions(input);
    const plan: Plan = { planner: 'model', steps: [], answer: [1] };
    const parts = [{ action: 1, status: 'performed' as const, result: 'Noted: the dentist is closed on Wednesdays.' }];
    const changed = planReport(input, plan, actions, parts, new Map(), callIdOf, new Set([1]));
    expect(changed.parts[0]).toMatchObject({ asks: 'effect', status: 'unresolved' });
    expect(changed.parts[0]!.reason).toContain('POST /v1/routing-policies');
    // Without a tool that could make the change, the same answer is information.
    expect(planReport(input, plan, actions, parts, new Map(), callIdOf).parts[0]).toMatchObject({ asks: 'information', status: 'performed' });
  });

  it('knows a text argument that holds the instruction itself from the text to write', () => {
    const input = 'Save a packing list to /tmp/packing.txt, one item per line: passport, charger, umbrella';
    const actions = requestedActions(input);
    const step: PlanStep = { id: 'step_1', tool: 'files__write_file', effect: 'external', purpose: 'write', scope: 'files__write_file', covers: [1] };
    expect(copiesInstruction({ path: '/tmp/packing.txt', content: 'Save a packing list to /tmp/packing.txt' }, actions, step)).toBe(true);
    expect(copiesInstruction({ path: '/tmp/packing.txt', content: 'passport\ncharger\numbrella' }, actions, step)).toBe(false);
  });

  it('asks a question of reads only: asksOnlyInformation', () => {
    const [question] = requestedActions('What is the status of the repository at /tmp/repo?');
    const [write] = requestedActions('Write "hello" to /tmp/a.txt.');
    expect(asksOnlyInformation(question!)).toBe(true);
    expect(asksOnlyInformation(write!)).toBe(false);
  });
});

describe('the text an external step writes, on the embedded model', () => {
  const write = (covers: number[], content: string): PlanStep => ({
    id: 'step_1',
    tool: 'files__write_file',
    effect: 'external',
    purpose: 'write',
    scope: 'files__write_file',
    covers,
    arguments: { path: '/tmp/a.txt', content },
  });

  it('writes a quoted text verbatim, punctuation included, whatever span the model chose', () => {
    const input = 'Write "Parking lot B is closed on Saturday, 9-5" to /tmp/a.txt.';
    expect(protocolArguments(write([1], 'Parking lot B'), input, requestedActions(input))).toEqual({
      path: '/tmp/a.txt',
      content: 'Parking lot B is closed on Saturday, 9-5',
    });
  });

  it('runs nothing when the text after a colon is not what the model wrote', () => {
    const input = 'Please create /tmp/a.txt containing exactly: Network: Guest-5G, password on the fridge';
    const actions = requestedActions(input);
    expect(protocolArguments(write([1], 'Network Guest-5G'), input, actions)).toMatch(/needs a stronger model/);
    expect(protocolArguments(write([1], 'Network: Guest-5G, password on the fridge'), input, actions)).toMatchObject({
      content: 'Network: Guest-5G, password on the fridge',
    });
  });
});
