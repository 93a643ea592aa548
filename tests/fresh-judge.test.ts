// The fresh eval's judge (scripts/eval/fresh-judge.ts): what counts as a success, a false success (a
// run that ended completed with a wrong or missing result) and a nonsense proposal (an approval asked
// for a request that asked for no effect).
import { describe, expect, it } from 'vitest';
import { type FreshCase, type FreshObserved, judgeFresh } from '../scripts/eval/fresh-judge.ts';

const question: FreshCase = {
  id: 'q',
  half: 'tuning',
  catalog: 'fresh',
  input: 'What is 12 + 30?',
  asks: 'information',
  expect: { status: 'completed', approval: false, answer_facts: [['42', 'forty-two']] },
};

const send: FreshCase = {
  id: 's',
  half: 'tuning',
  catalog: 'fresh',
  input: 'Tell the team the total of 12 and 30.',
  asks: 'effect',
  expect: { status: 'completed', approval: true, deliveries: [{ to: 'the team' }], delivery_facts: [['42']] },
};

const impossible: FreshCase = { ...question, id: 'i', input: 'Pay the bill.', asks: 'impossible', expect: { status: 'needs_attention', approval: false } };

const observed = (o: Partial<FreshObserved>): FreshObserved => ({
  status: 'completed',
  rounds: 0,
  answers: '',
  deliveries: [],
  performed: [],
  file: () => null,
  isDirectory: () => false,
  commits: [],
  memoryText: '',
  ...o,
});

describe('the fresh eval judge', () => {
  it('counts a right answer a success, and a wrong one that ended completed a false success', () => {
    expect(judgeFresh(question, observed({ answers: 'It is 42.' }))).toMatchObject({ outcome: 'success', nonsenseProposal: false });
    expect(judgeFresh(question, observed({ answers: 'It is 41.' }))).toMatchObject({ outcome: 'false_success', why: 'the answer lacks 42' });
    expect(judgeFresh(question, observed({ status: 'needs_attention' }))).toMatchObject({ outcome: 'not_done' });
  });

  it('counts an approval asked for a question a nonsense proposal, whatever it ended as', () => {
    expect(judgeFresh(question, observed({ status: 'needs_attention', rounds: 1 }))).toMatchObject({ outcome: 'not_done', nonsenseProposal: true });
    expect(judgeFresh(impossible, observed({ status: 'needs_attention', rounds: 1 }))).toMatchObject({ nonsenseProposal: true });
    expect(judgeFresh(impossible, observed({ status: 'needs_attention' }))).toMatchObject({ outcome: 'success', nonsenseProposal: false });
  });

  it('counts a delivery a success only with what it had to carry', () => {
    const delivered = (message: string) => observed({ rounds: 1, deliveries: [{ to: 'the team', message }], performed: ['webhook_delivery'] });
    expect(judgeFresh(send, delivered('The total is 42.'))).toMatchObject({ outcome: 'success' });
    expect(judgeFresh(send, delivered('The total is 43.'))).toMatchObject({ outcome: 'false_success' });
    expect(judgeFresh(send, observed({ rounds: 1 }))).toMatchObject({ outcome: 'false_success', why: '0 deliveries, not 1' });
  });
});
