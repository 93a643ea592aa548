// Unit tests: how a model's plan is checked before anything runs. An empty
// plan, or one that leaves a requested action unaccounted for, is shown its
// problems and asked again once; on the last attempt a plan that does something
// runs with the rest unresolved, and one that still does nothing ends the run.
import { describe, expect, it } from 'vitest';
import { assessPlan, proposalOf } from '../domain/agent/plan-check.ts';
import { requestedActions } from '../domain/planning/requested-actions.ts';

const INPUT = 'Summarise the renewal dates in our vendor contracts and flag any auto-renewal clauses.';
const actions = requestedActions(INPUT);
const plan = (p: object) => JSON.stringify({ steps: [], answer: [], unresolved: [], ...p });

describe('assessPlan and proposalOf', () => {
  it('sees the two actions of the input', () => {
    expect(actions.map((a) => [a.n, a.kind])).toEqual([
      [1, 'analysis'],
      [2, 'analysis'],
    ]);
  });

  it('shows an empty plan its problems first, and ends the run on the last attempt naming each uncovered action', () => {
    const assessed = assessPlan(plan({}), actions);
    expect(assessed.empty).toBe(true);
    expect(assessed.problems[0]).toMatch(/^The plan is empty/);
    expect(assessed.problems.slice(1)).toEqual([
      'Action 1 ("Summarise the renewal dates in our vendor contracts") is in no step\'s covers, not in answer and not in unresolved.',
      'Action 2 ("flag any auto-renewal clauses") is in no step\'s covers, not in answer and not in unresolved.',
    ]);
    expect(proposalOf(assessed, false)).toEqual({ kind: 'invalid', problems: assessed.problems });
    const last = proposalOf(assessed, true);
    expect(last).toMatchObject({ kind: 'stopped', stop: { code: 'plan_empty' } });
    expect(last.kind === 'stopped' && last.stop.message).toContain(
      'action 1 "Summarise the renewal dates in our vendor contracts"; action 2 "flag any auto-renewal clauses"',
    );
  });

  it('treats a plan without `answer` (the older shape) as answering nothing', () => {
    const assessed = assessPlan(JSON.stringify({ steps: [], unresolved: [] }), actions);
    expect(assessed.empty).toBe(true);
  });

  it('accepts a plan that accounts for every action, by answer or as unresolved', () => {
    const proposal = proposalOf(assessPlan(plan({ answer: [1], unresolved: [{ action: 2, reason: 'The contracts were not given.' }] }), actions), false);
    expect(proposal).toEqual({
      kind: 'planned',
      plan: { planner: 'model', steps: [], answer: [1], gaps: [{ action: 2, reason: 'The contracts were not given.' }] },
    });
  });

  it('accepts a plan that lists every action unresolved, with its reason: nothing can be done, and it says so', () => {
    const proposal = proposalOf(
      assessPlan(
        plan({
          unresolved: [
            { action: 1, reason: 'No tool reads contracts.' },
            { action: 2, reason: 'No tool reads contracts.' },
          ],
        }),
        actions,
      ),
      false,
    );
    expect(proposal).toMatchObject({ kind: 'planned', plan: { steps: [], answer: [], gaps: [{ action: 1 }, { action: 2 }] } });
  });

  it('reads a plan in the per-request form against the options each action was offered', () => {
    const options = [
      { action: 1, options: ['answer', 'unresolved'], narrowed: null },
      { action: 2, options: ['webhook_delivery', 'unresolved'], narrowed: null },
    ];
    const form = (a2: object) => JSON.stringify({ action_1: { do: 'answer' }, action_2: a2 });
    expect(proposalOf(assessPlan(form({ do: 'unresolved', reason: 'no tool' }), actions, {}, options), false)).toMatchObject({
      kind: 'planned',
      plan: { steps: [], answer: [1], gaps: [{ action: 2, reason: 'no tool' }] },
    });
    // A choice the action was not offered, or a missing entry, is a problem, never a plan.
    expect(assessPlan(form({ do: 'text_analysis', arguments: { text: 'x' }, purpose: 'x' }), actions, {}, options).problems).toEqual([
      'action_2.do: "text_analysis" is not a choice offered for this action.',
    ]);
    expect(assessPlan(JSON.stringify({ action_1: { do: 'answer' } }), actions, {}, options).problems).toEqual([
      'action_2: missing; every action needs an entry.',
    ]);
  });

  it('on the last attempt, runs a plan that does something and leaves what it left out unresolved', () => {
    const assessed = assessPlan(plan({ answer: [1] }), actions);
    expect(assessed.uncovered.map((a) => a.n)).toEqual([2]);
    expect(proposalOf(assessed, false).kind).toBe('invalid');
    const last = proposalOf(assessed, true);
    expect(last.kind === 'planned' && last.plan.gaps).toEqual([{ action: 2, reason: expect.stringMatching(/^the model's plan left it out/) }]);
  });

  it('refuses a step that covers no requested action', () => {
    const assessed = assessPlan(
      plan({ steps: [{ tool: 'text_analysis', arguments: { text: 'renewal dates' }, purpose: 'Look', covers: [] }], answer: [1, 2] }),
      actions,
    );
    expect(assessed.plan).toBeUndefined();
    expect(assessed.problems.join(' ')).toMatch(/covers/);
  });

  it('refuses an answer that claims an effect, and numbers that do not exist', () => {
    const effect = requestedActions('Summarise the notes and delete the drafts.');
    const assessed = assessPlan(plan({ answer: [1, 2, 7] }), effect);
    expect(assessed.plan).toBeUndefined();
    expect(assessed.problems).toEqual([
      'answer: action 2 asks to delete, which an answer cannot do; give it a step or put it in unresolved.',
      'answer: there is no action 7.',
    ]);
  });

  it('refuses what is not JSON, or not the schema, before anything else', () => {
    expect(assessPlan('Done.', actions).problems).toEqual(['The answer is not JSON.']);
    expect(assessPlan(plan({ steps: [{ tool: 'shell', arguments: {}, purpose: 'x', covers: [1] }] }), actions).problems[0]).toMatch(
      /is not a tool of the catalog/,
    );
  });
});
