// Unit tests: the exact analysis tools (count_list_items, find_contact_details). What they read in a
// text, when a small model is offered them, and that verification derives their answers again.
import { admitsBuiltin } from '../activities/embedded/admits-builtin.ts';
import { describe, expect, it } from 'vitest';
import { actionOptions } from '../domain/agent/plan-options.ts';
import { digestOf } from '../domain/digest.ts';
import type { Plan, PlanStep } from '../domain/planning/plan.ts';
import { requestedActions } from '../domain/planning/requested-actions.ts';
import type { StepResult } from '../domain/runs/run-types.ts';
import { contactDetailsOutput, listCountOutput } from '../domain/runs/tool-outputs.ts';
import { verifyRun } from '../domain/runs/verification.ts';
import { bareListItems, contactDetailsIn, listItemsIn } from '../domain/text/find-in-text.ts';
import type { ServerToolCatalog } from '../domain/tools.ts';

describe('what the exact tools read', () => {
  it('finds email addresses, web addresses and phone numbers, each once, and nothing else', () => {
    expect(contactDetailsIn('Write to anna@example.com or to sales@example.org, or anna@example.com again.')).toEqual({
      emails: ['anna@example.com', 'sales@example.org'],
      urls: [],
      phones: [],
    });
    expect(contactDetailsIn('Docs at https://docs.example.com/start. Call Maria on 555-0142 or +44 20 7946 0958.')).toEqual({
      emails: [],
      urls: ['https://docs.example.com/start'],
      phones: ['555-0142', '+44 20 7946 0958'],
    });
    // Dates, decimals, amounts and digits inside an address are no phone numbers.
    expect(contactDetailsIn('On 2026-11-26 pi was 3.1415926, 1,000 USD went to room101@example.com.').phones).toEqual([]);
  });

  it('counts the items of the list a request gives after its colon or in quotes, and none when it gives none', () => {
    expect(listItemsIn('How many items are in this list: apples, pears, plums, figs?')).toEqual(['apples', 'pears', 'plums', 'figs']);
    expect(listItemsIn('Count the names on this rota: Ann, Bob, Carl and Dee.')).toEqual(['Ann', 'Bob', 'Carl', 'Dee']);
    expect(listItemsIn("How many colours are in 'red, green, and blue'?")).toEqual(['red', 'green', 'blue']);
    expect(listItemsIn('How many items are on the list?')).toBeNull();
    // Apostrophes quote nothing: "Here's next week's rota" gives no list.
    expect(listItemsIn("Here's next week's rota - how many late shifts has Tariq got?")).toBeNull();
  });

  it('counts the bare list that follows a question about a list, and takes no sentence of prose for one', () => {
    const input = 'How many people are on this attendee list? Ana Ruiz, Ben Cho, Chidi Okafor, Dara Byrne and Eli Stone.';
    expect(requestedActions(input).map((a) => a.clause)).toEqual(['How many people are on this attendee list?']);
    expect(listCountOutput(input, 1)).toMatchObject({ count: 5, items: ['Ana Ruiz', 'Ben Cho', 'Chidi Okafor', 'Dara Byrne', 'Eli Stone'] });
    expect(bareListItems('The order has 3 blue mugs, 2 red mugs, 5 green plates and 1 blue plate.')).toBeNull();
    expect(bareListItems('pens, clips')).toBeNull();
    expect(bareListItems('Who is on it, and when?')).toBeNull();
  });

  it('answers the action its step covers, from that action’s sentence', () => {
    const input = 'Summarise the plan. Count the guests: Ann, Bob and Carl.';
    expect(listCountOutput(input, 2)).toEqual({ action: 2, count: 3, items: ['Ann', 'Bob', 'Carl'], answer: '3 items: Ann, Bob, Carl.' });
    expect(listCountOutput(input, 1)).toBeNull();
    // A colon that introduces the request itself gives no list to count.
    const asked = 'Quick one: can you look at sales.csv and tell me the takings, and how many loaves we sold?';
    expect(listCountOutput(asked, requestedActions(asked).length)).toBeNull();
    expect(contactDetailsOutput('Find the address: mail bob@example.net.', 1).answer).toBe('Email addresses: bob@example.net.');
    expect(contactDetailsOutput('Find the address in: nothing here.', 1).answer).toMatch(/gives no email address/);
  });
});

describe('when a small model is offered them', () => {
  const files: ServerToolCatalog = Object.fromEntries(
    ['list_directory', 'search_files', 'read_text_file'].map((tool) => [
      `files__${tool}`,
      {
        server: 'files',
        tool,
        effect: 'read' as const,
        description: '',
        parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
      },
    ]),
  );
  // As the embedded adapter offers them, with its aid on which built-ins an action may use.
  const optionsOf = (input: string) => actionOptions(requestedActions(input), files, true, admitsBuiltin(input, requestedActions(input))).map((o) => o.options);

  it('offers each where its name fits the request, the best fit first among tools that fit a verb', () => {
    expect(optionsOf('How many items are in this list: apples, pears, plums, figs?')).toEqual([['answer', 'count_list_items', 'unresolved']]);
    // A file tool needs a path the request names: none is offered to work on text the request gives.
    expect(optionsOf('Extract the email addresses from this text: write to anna@example.com.')).toEqual([['answer', 'find_contact_details', 'unresolved']]);
    expect(optionsOf('Summarise: the office opens in May.')).toEqual([['answer', 'unresolved']]);
    expect(optionsOf('Post to the team channel: the guest list is final.')).toEqual([['webhook_delivery', 'unresolved']]);
    // Counting words is not counting the items of a list.
    expect(optionsOf('Count the words in this sentence: the quick brown fox jumps.')).toEqual([['answer', 'unresolved']]);
  });
});

describe('verification of an exact answer', () => {
  const input = 'How many items are in this list: apples, pears, plums, figs?';
  const step: PlanStep = { id: 'step_1', tool: 'count_list_items', effect: 'read', scope: 'result', arguments: {}, purpose: 'count', covers: [1] };
  const plan: Plan = { planner: 'model', steps: [step], answer: [], gaps: [] };
  const recorded = (output: unknown): StepResult => ({
    step_id: 'step_1',
    tool: 'count_list_items',
    status: 'done',
    detail: 'Counted.',
    output,
    scope: 'result',
    output_digest: digestOf(output),
    sources: ['input'],
  });
  const verify = (output: unknown) => verifyRun({ runId: 'run_unit', input, memory: false, plan, results: [recorded(output)], approval: null, answer: null });

  it('is performed and checked, so the run is verified', () => {
    const { receipt } = verify(listCountOutput(input, 1));
    expect(receipt.actions).toEqual([{ n: 1, kind: 'analysis', outcome: 'performed', by: ['step_1'], checked: true }]);
    expect(receipt.verification_class).toBe('verified');
  });

  it('is not checked when the recorded count is not the one the text gives', () => {
    const { receipt } = verify({ ...listCountOutput(input, 1)!, count: 14, answer: '14 items: apples, pears, plums, figs.' });
    expect(receipt.actions?.[0]).toMatchObject({ outcome: 'performed', checked: false });
    expect(receipt.unresolved).toEqual([expect.stringMatching(/did not match when recomputed/)]);
  });
});
