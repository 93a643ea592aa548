// The run's state machine: every legal and every illegal move of the one table
// (domain/runs/states.ts) that the workflow moves by and the projection checks.
import { describe, expect, it } from 'vitest';
import { eventBetween, nextStatus, RUN_EVENTS, RUN_STATES, type RunStatus, statesLeadingTo, TERMINAL_STATES } from '../domain/runs/states.ts';

/** The moves the contract's states allow, written out by hand (from -> to): the table must have exactly these. */
const LEGAL: [RunStatus, RunStatus][] = [
  ['accepted', 'accepted'],
  ['accepted', 'planning'],
  ['accepted', 'failed'],
  ['planning', 'planning'],
  ['planning', 'awaiting_approval'],
  ['planning', 'executing'],
  ['planning', 'needs_attention'],
  ['planning', 'failed'],
  ['awaiting_approval', 'awaiting_approval'],
  ['awaiting_approval', 'executing'],
  ['awaiting_approval', 'needs_attention'],
  ['awaiting_approval', 'failed'],
  ['executing', 'executing'],
  // A tool-calling run whose model asks for further external calls after seeing results: another approval round.
  ['executing', 'awaiting_approval'],
  ['executing', 'verifying'],
  ['executing', 'failed'],
  ['verifying', 'verifying'],
  ['verifying', 'completed'],
  ['verifying', 'needs_attention'],
  ['verifying', 'failed'],
];
const isLegal = (from: RunStatus, to: RunStatus) => LEGAL.some(([f, t]) => f === from && t === to);

describe('the run state machine', () => {
  it.each(RUN_STATES.flatMap((from) => RUN_STATES.map((to) => [from, to] as const)))('%s -> %s is legal only if listed', (from, to) => {
    expect(eventBetween(from, to) !== null).toBe(isLegal(from, to));
  });

  it('every event from every state leads to a listed move or nowhere', () => {
    for (const from of RUN_STATES) {
      for (const event of RUN_EVENTS) {
        const to = nextStatus(from, event);
        if (to !== null) expect(isLegal(from, to), `${from} --${event}--> ${to}`).toBe(true);
      }
    }
  });

  it('a terminal state has no move at all, and failing is possible from every other state', () => {
    for (const state of TERMINAL_STATES) for (const event of RUN_EVENTS) expect(nextStatus(state, event)).toBeNull();
    for (const state of RUN_STATES.filter((s) => !TERMINAL_STATES.includes(s))) expect(nextStatus(state, 'fail')).toBe('failed');
  });

  it('the projection may write a state only over the states that lead to it', () => {
    expect(statesLeadingTo('completed')).toEqual(['verifying']);
    expect(statesLeadingTo('executing').sort()).toEqual(['awaiting_approval', 'executing', 'planning']);
    expect(statesLeadingTo('accepted')).toEqual(['accepted']);
  });
});
