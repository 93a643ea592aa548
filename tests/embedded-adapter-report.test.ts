// The embedded adapter's report (activities/embedded/report.ts), read by the same structural
// accounting as any model's (domain/agent/report.ts): its quotes stand verbatim and cover every
// sentence, an effect is claimed only through its external call, and what failed is unresolved.
import { describe, expect, it } from 'vitest';
import { holdsOwnId, holdsOwnWord, resultLines, sharesTellingWord } from '../activities/embedded/answer-lines.ts';
import {
  addressedUnknownVerb,
  answerPart,
  asksToSee,
  asksYesOrNo,
  choiceOf,
  droppedFigures,
  droppedNames,
  givenSentences,
  lacksAskedContact,
  asksWholeText,
  repeatsASentence,
} from '../activities/embedded/answer-part.ts';
import { calculationsOf, namedCalculation, numbersOf, onlyNamedOver, plainList, writtenExpression } from '../activities/embedded/figure.ts';
import { alphabeticalAnswer } from '../activities/embedded/sort-list.ts';
import { statesSomething, withoutContextStatements } from '../activities/embedded/context-statements.ts';
import { repeatedValue } from '../activities/embedded/repeated-values.ts';
import { asksTimeNow, conversionOf, statedTimes, timeZonesNamedIn, withTimeZones } from '../activities/embedded/time-zones.ts';
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

  it("answers a question on what a tool read from that result's own lines: a JSON document's objects, or the text's lines", () => {
    const graph = {
      entities: [{ type: 'entity', name: 'Inês Carvalho', entityType: 'person', observations: ['Speaks Portuguese', 'Based in Porto'] }],
      relations: [],
    };
    const read = (text: string) => ({
      step_id: 's',
      tool: 't',
      status: 'done' as const,
      detail: '',
      sources: [],
      output: { content: [{ type: 'text', text }] },
    });
    expect(resultLines([read(JSON.stringify(graph))])).toEqual(['entity — Inês Carvalho — person — Speaks Portuguese — Based in Porto']);
    expect(resultLines([read('Carrier: Parcelway\n\nEstimated delivery: 12 June\n'), read('Carrier: Parcelway')])).toEqual([
      'Carrier: Parcelway',
      'Estimated delivery: 12 June',
    ]);
    expect(resultLines([{ ...read('x'), status: 'failed' as const }])).toEqual([]);
  });

  it("quotes no line of a result that holds no text: a file's bytes as a blob, an image, or a result cut short", () => {
    const shown = (output: unknown) => ({ step_id: 's', tool: 'files__read_media_file', status: 'done' as const, detail: '', sources: [], output });
    // What server-filesystem's read_media_file returns for a .txt file: its name holds the question's words, its bytes are base64.
    const blob = {
      content: [{ type: 'resource', resource: { uri: 'file:///srv/share/room-allocations.txt', mimeType: 'application/octet-stream', blob: 'TGFya3NwdXI=' } }],
    };
    expect(resultLines([shown(blob)])).toEqual([]);
    expect(resultLines([shown({ content: [{ type: 'image', data: 'iVBORw0=', mimeType: 'image/png' }] })])).toEqual([]);
    expect(resultLines([shown({ untrusted: 'x', truncated_from_chars: 20_000, excerpt: '{"content":[{"type":"text","text":"Juniper  Raj' })])).toEqual([]);
    // Structured content with no content items is still read, and so is a text resource.
    expect(resultLines([shown({ content: [], structuredContent: { room: 'Juniper' } })])).toEqual(['Juniper']);
    expect(resultLines([shown({ content: [{ type: 'resource', resource: { uri: 'file:///a.txt', text: 'Raj Patel: Juniper' } }] })])).toEqual([
      'Raj Patel: Juniper',
    ]);
    // A result cut short after its content (the server gave its text twice, as content and as structured content) is still read whole.
    const full = JSON.stringify({ content: [{ type: 'text', text: 'Sat 14 June\nJuniper  Raj Patel' }], structuredContent: { content: 'x'.repeat(100) } });
    expect(resultLines([shown({ untrusted: 'x', truncated_from_chars: full.length, excerpt: full.slice(0, 90) })])).toEqual([
      'Sat 14 June',
      'Juniper  Raj Patel',
    ]);
  });

  it('writes nothing from a read that returned no text to write from', async () => {
    const c = { runId: 'run_x', tenantId: 'ten_x', model: 'svc-workspace' as const, provider: 'embedded' as const, action: 1 };
    const blob = { content: [{ type: 'resource', resource: { uri: 'file:///srv/notes.txt', mimeType: 'application/octet-stream', blob: 'TGFya3NwdXI=' } }] };
    const read = { step_id: 'emb_step_1', tool: 'files__read_media_file', status: 'done' as const, detail: '', sources: [], output: blob };
    // No model is asked: there is nothing to summarise.
    const outcome = await answerPart({} as never, { ...c, input: 'Summarise /srv/notes.txt for me.', results: [read] });
    expect(outcome).toMatchObject({ kind: 'part', part: { status: 'unresolved', reason: expect.stringMatching(/no text to quote/) } });
  });

  it('takes no writing that says a sentence twice: the small model ran on', () => {
    expect(repeatsASentence("Hi Lucy,\n\nI'm so sorry about it. I'm really sorry about it.\n\nI'm really sorry about it.")).toBe(true);
    expect(repeatsASentence('Thanks. Thanks. The order ships on Monday. It ships from Leeds.')).toBe(false);
  });

  it("offers the calculations a request's numbers allow: a total or an average only of numbers that count the same thing", () => {
    const hours = numbersOf('timesheet: mon 7.5h, tue 8h, wed 6.25h, thu 8h, fri 4.75h. total for the week?');
    expect(hours.map((n) => n.value)).toEqual(['7.5', '8', '6.25', '8', '4.75']);
    expect(calculationsOf(hours).map((c) => c.expression)).toEqual([
      'sum(7.5, 8, 6.25, 8, 4.75)',
      'mean(7.5, 8, 6.25, 8, 4.75)',
      'max(7.5, 8, 6.25, 8, 4.75)',
      'min(7.5, 8, 6.25, 8, 4.75)',
    ]);
    expect(calculationsOf(numbersOf('Receipts: 1,249.50, 12.35 and 101.75.')).map((c) => c.expression)[0]).toBe('sum(1249.50, 12.35, 101.75)');
    // Blue and red mugs, green plates: no total of them all; nor of two numbers, or of a time's.
    expect(calculationsOf(numbersOf('3 blue mugs, 2 red mugs, 5 green plates and 1 blue plate'))).toEqual([]);
    expect(calculationsOf(numbersOf('80 sign-ups last week and 92 this week'))).toEqual([]);
    expect(numbersOf('If it is 15:00 in Singapore, 3 of us')).toEqual([{ value: '3', after: 'of' }]);
    // "and" after a number joins what follows; it counts nothing ("Joost 7.25 and I did 4").
    expect(calculationsOf(numbersOf('Piet did 6.5, Sanne 8, Joost 7.25 and I did 4.')).map((c) => c.expression)[0]).toBe('sum(6.5, 8, 7.25, 4)');
    expect(calculationsOf(numbersOf('one number: 42'))).toEqual([]);
    // A date's numbers are no quantities: two dates are not four numbers to add up.
    expect(numbersOf('notice by 31 March 2026 and the lease ends 30 June 2026. How many days is that?')).toEqual([]);
    expect(numbersOf('from 2026-03-31 to 04/05/2026, Sept 3rd, 2025')).toEqual([]);
    // Nor is an id's: order #5521 is not a quantity of the order.
    expect(numbersOf('order #5521: 2 mugs').map((n) => n.value)).toEqual(['2']);
    expect(numbersOf('On 3 March I spent 12, 15 and 20; may 5 people come?').map((n) => n.value)).toEqual(['12', '15', '20', '5']);
    // A month before a bare number is a name or a label, not a date: Jan's hours, January's revenue.
    expect(numbersOf('Hours this week: Piet 6.5, Jan 8, Sanne 7.25.').map((n) => n.value)).toEqual(['6.5', '8', '7.25']);
    expect(numbersOf('Revenue: Jan 1200, Feb 1350, Mar 980, Apr 870.').map((n) => n.value)).toEqual(['1200', '1350', '980', '870']);
    expect(numbersOf('Ben 7.5 Jan 3, and on March 31 we').map((n) => n.value)).toEqual(['7.5', '3']);
    // Dates divide and subtract nothing, and a list with a date in it is no list the words name whole.
    expect(writtenExpression('How many days from 31/03/2026 to 30/06/2026?')).toBeNull();
    expect(writtenExpression('1 March 2026 - 30 June 2026')).toBeNull();
    expect(onlyNamedOver('On 3 March I spent 12, 15 and 20. Add them up.', 'Add them up.', 0)).toBe(false);
    // A named calculation stands without the lead only over one plain list the question takes whole.
    expect(plainList('Add up my overtime hours, need it for my timesheet: 3.5, 2, 4.25, 1.75', 'Add up my overtime hours')).toBe(true);
    expect(plainList('What is the total bill? Room 12 £80, room 14 £95, room 15 £60.', 'What is the total bill?')).toBe(false);
    expect(plainList('Total hours Mon to Wed? Mon 7, Tue 8, Wed 6, Thu 5.', 'Total hours Mon to Wed?')).toBe(false);
    expect(plainList('Who worked the most hours? Ann 7, Bob 9, Cy 8', 'Who worked the most hours?')).toBe(false);
    // The calculation a question names in words is the only one its choice may be: total, average, largest, smallest.
    expect(['total for the week?', 'what do we spend on average?', 'which costs the most?', 'the cheapest one?'].map(namedCalculation)).toEqual([0, 1, 2, 3]);
    expect(['how much was it?', 'the total and the average?'].map(namedCalculation)).toEqual([null, null]);
    // The words alone decide it only for one enumeration of numbers, asked nothing but the calculation they name.
    const invoices =
      'Three invoices came in today: €240.00 from Brightline, €115.50 from Kettle & Co. and €89.99 from Oduya Print. Add them up and post the total.';
    expect(onlyNamedOver(invoices, 'Add them up', 0)).toBe(true);
    expect(onlyNamedOver('Mileage this month: 42, 17.5, 63 and 28.25 miles. Add them up.', 'Add them up', 0)).toBe(true);
    expect(
      [
        ["Response times were 212 ms, 187 ms and 240 ms, the target is 200 ms. What's the average?", "What's the average?", 1],
        ["Costs were 212, 187 and 240, the target is 200. What's the average?", "What's the average?", 1],
        ["Team A scored 3, 5 and 7; Team B scored 2 and 4. What's the total for Team A?", "What's the total for Team A?", 0],
        ['Add them up: 12, 15 and 9, then divide by 3.', 'Add them up', 0],
        ['How many numbers are on this list in total: 4, 8, 15, 16?', 'How many numbers are on this list in total', 0],
        ['Only the paid ones: 12, 15 and 9. Add them up.', 'Add them up', 0],
      ].map(([input, clause, named]) => onlyNamedOver(input as string, clause as string, named as number)),
    ).toEqual([false, false, false, false, false, false]);
    // The pronoun between the verb and its particle ("add them up") names the total all the same.
    expect(['Add them up and', 'can you add these all up?'].map(namedCalculation)).toEqual([0, 0]);
    // An expression the request writes out goes to calculate as written; a phone number or a date is none.
    expect(writtenExpression("what's 1,249.50 + 387.25 + 92.80?")).toBe('1249.50 + 387.25 + 92.80');
    expect(writtenExpression('Call 555-0142 on 2026-12-06 about the 3x4 grid')).toBeNull();
  });

  it('sorts the list a request gives alphabetically, case aside, when it asks for that order', () => {
    const [sort] = requestedActions('Sort these alphabetically and give them back as one line: pear, Apple, mango, banana');
    expect(alphabeticalAnswer('Sort these alphabetically and give them back as one line: pear, Apple, mango, banana', sort!)).toBe(
      'Apple, banana, mango, pear',
    );
    const [byPrice] = requestedActions('Sort these by price: lamp $34, arm $89');
    expect(alphabeticalAnswer('Sort these by price: lamp $34, arm $89', byPrice!)).toBeNull();
    const bySurname = 'Put these in alphabetical order by surname: Ana Ruiz, Ben Cho';
    expect(alphabeticalAnswer(bySurname, requestedActions(bySurname)[0]!)).toBeNull();
  });

  it('holds a time-zone argument to the zones the platform knows whose place the sentence names, and a conversion to the one the request states', () => {
    expect(timeZonesNamedIn('If it is 16:00 in Tokyo, what time is it in Dubai?')).toEqual(['Asia/Tokyo', 'Asia/Dubai']);
    expect(timeZonesNamedIn('Convert 18:00 UTC to India time')).toEqual(['UTC']);
    const convert = {
      type: 'object',
      required: ['source_timezone', 'time', 'target_timezone'],
      properties: { source_timezone: { enum: ['x'] }, time: { enum: ['16:00'] }, target_timezone: { enum: ['x'] } },
    };
    const conv = (input: string) => conversionOf(input, requestedActions(input).at(-1)!);
    const asked = 'If it is 4pm in Tokyo, what time is it in Dubai?';
    const held = withTimeZones(convert, asked, conv(asked))!.properties as Record<string, { enum: string[] }>;
    // From the place named nearest the time, to the other: never swapped, and the time in the tool's 24-hour form.
    expect([held.source_timezone!.enum, held.time!.enum, held.target_timezone!.enum]).toEqual([['Asia/Tokyo'], ['16:00'], ['Asia/Dubai']]);
    expect(conv('What time is it in Dubai when it is 09:30 in Tokyo?')).toEqual({ time: '09:30', source: 'Asia/Tokyo', target: 'Asia/Dubai' });
    // "from" names the source, wherever the time stands.
    expect(conv('Convert 10:00 to Tokyo time from London')).toEqual({ time: '10:00', source: 'Europe/London', target: 'Asia/Tokyo' });
    // The time in one sentence, the place asked in the next; an offset is no time of day.
    expect(conv('Our standup is 10:30 in Kolkata. What is that in UTC?')).toEqual({ time: '10:30', source: 'Asia/Kolkata', target: 'UTC' });
    // The source is named in the sentence that states the time, however near the next sentence's place stands.
    const cutOff = 'Our supplier in Karachi says the cut-off is 16:30 their time. Give me that in Jakarta time.';
    expect(conv(cutOff)).toEqual({ time: '16:30', source: 'Asia/Karachi', target: 'Asia/Jakarta' });
    expect(conv("if it's 12 noon in Yangon what time is it in Darwin")).toEqual({ time: '12:00', source: 'Asia/Yangon', target: 'Australia/Darwin' });
    // "from" in the question is where the asker is, not the source; the place the action points to ("there") is its sentence's.
    const travelling = "The Singapore distributor's call is at 16:00 Singapore time. I'm working from Dubai next week - what time is that for me there?";
    expect(conv(travelling)).toEqual({ time: '16:00', source: 'Asia/Singapore', target: 'Asia/Dubai' });
    // The tool converts a time of today: which day it is there is no answer of it where the request names the day.
    expect(conv("It's 21:00 on Tuesday in Bogota. Which day is it in Manila then?")).toBeNull();
    expect(conv("It's 21:00 in Bogota. What time is it in Manila?")).toEqual({ time: '21:00', source: 'America/Bogota', target: 'Asia/Manila' });
    // A place written with its accents is the zone written without them.
    expect(conv('The handover is at 01:30 in Dhaka. What time is that in São Paulo?')).toEqual({
      time: '01:30',
      source: 'Asia/Dhaka',
      target: 'America/Sao_Paulo',
    });
    expect(conv("I'm in London (GMT+1:00). What time is 9am London time in Tokyo?")).toEqual({ time: '09:00', source: 'Europe/London', target: 'Asia/Tokyo' });
    // No place the platform knows to convert to, two times stated, two places asked, or the time now: no conversion, and the tool is not run.
    expect(conv('Convert 18:00 UTC to India time')).toBeNull();
    expect(conv('Is 9:00 or 10:00 in Tokyo better for Dubai?')).toBeNull();
    expect(conv('Convert 18:20 Dubai time to Singapore time and to UTC')).toBeNull();
    expect(conv('The 3pm London meeting is done. What time is it in Tokyo right now?')).toBeNull();
    expect(withTimeZones(convert, 'Convert 18:00 UTC to India time')).toBeNull();
    // The time now answers only a question about now.
    const now = ['What time is it in Tokyo right now?', 'What time will it be in Singapore when the client call starts?'];
    expect(now.map(asksTimeNow)).toEqual([true, false]);
    const current = { type: 'object', required: ['timezone'], properties: { timezone: { enum: ['x'] } } };
    expect(withTimeZones(current, "What time is it in Singapore, and what's Singapore's UTC offset?")).toBeNull();
    expect(statedTimes('at 2 p.m. or 12am, not 3.5 or 2025, on 10/30')).toEqual([
      { time: '14:00', at: 3 },
      { time: '00:00', at: 13 },
    ]);
  });

  it("keeps a chosen line only when it holds one of the question's words that tell the lines apart", () => {
    const rota = ['# On-call rota', '| Day | On call | Backup |', '| Tuesday | Sara Lindqvist | Omar Haddad |', '| Saturday | Lucia Ferraro | Priya Raman |'];
    expect(sharesTellingWord("who's on call saturday?", rota[2]!, rota)).toBe(false);
    expect(sharesTellingWord("who's on call saturday?", rota[3]!, rota)).toBe(true);
    // No word of the question tells the lines apart: nothing shows the line answers it. A lone line is checked otherwise.
    expect(sharesTellingWord('and who is the backup that day?', rota[3]!, rota)).toBe(false);
    expect(sharesTellingWord('who is it?', rota[3]!, [rota[3]!])).toBe(true);
    // What a file says, wherever it is, is its whole text, not a line that must hold the question's words.
    expect(asksWholeText('What does notes.txt in /tmp/share say?')).toBe(true);
    expect(asksWholeText('What does /tmp/share/notes.txt say?')).toBe(true);
    expect(asksWholeText('What time does the shop open?')).toBe(false);
    // A lone line that holds none of the question's words (a search that found nothing) does not answer it.
    expect(sharesTellingWord("who's doing the church flowers on Sunday 22 June?", 'No matches found', ['No matches found'])).toBe(false);
    expect(sharesTellingWord('What is the wifi password?', 'Wifi password: Guest-5G', ['Wifi password: Guest-5G'])).toBe(true);
    // Another line holds more of the question: the chosen one is about something else.
    const graph = ['Gustavo Brandão — person — Site supervisor — Starts 6 January', 'Lena Fischer — person — Warehouse operative — Boot size: 39'];
    expect(sharesTellingWord('What size does Gustavo Brandão take?', graph[1]!, graph)).toBe(false);
    // Only the Saturday line holds "saturday": the text itself singles it out, so a narrower lead may stand.
    expect(holdsOwnWord("who's on call saturday?", rota[3]!, rota)).toBe(true);
    expect(holdsOwnWord("who's on call saturday?", rota[2]!, rota)).toBe(false);
    expect(holdsOwnWord('who is the backup?', rota[3]!, rota)).toBe(false);
    // An id the question names that one row holds picks that row out: the model's first choice stands on it.
    const phones = ['Name,Extension', 'Amara Oyelaran,4417', 'Ben Cho,4418', 'Cy Dee,4417-B'];
    expect(holdsOwnId('whose extension is 4417?', phones[1]!, phones)).toBe(true);
    expect(holdsOwnId('whose extension is 4418?', phones[1]!, phones)).toBe(false);
    expect(holdsOwnId('who has extension 44?', phones[1]!, phones)).toBe(false);
    // "backup" singles out the header, "saturday" the Saturday line: neither alone holds the question's words.
    expect(holdsOwnWord('who is the backup on saturday?', rota[1]!, rota)).toBe(false);
    expect(holdsOwnWord('who is the backup on saturday?', rota[3]!, rota)).toBe(false);
    expect(['Is it still daytime in London?', "what's the time in Tokyo?"].map((clause) => asksYesOrNo({ clause } as never))).toEqual([true, false]);
  });

  it('gives no lone line of a read that took nothing from the request as the answer to a question', async () => {
    const input = 'Which files in the shared folder end in .tmp?';
    const read = { step_id: 'emb_step_1', tool: 'files__list_allowed_directories', status: 'done' as const, detail: '', sources: [] };
    const c = { runId: 'run_x', tenantId: 'ten_x', model: 'svc-workspace' as const, provider: 'embedded' as const, input, action: 1, readBy: 'emb_step_1' };
    // No model is asked: the part is unresolved before any choice of line.
    const outcome = await answerPart({} as never, {
      ...c,
      results: [{ ...read, output: { content: [{ type: 'text', text: '/srv/share' }] } }],
      readTakesNothing: true,
    });
    expect(outcome).toMatchObject({ kind: 'part', part: { status: 'unresolved', reason: expect.stringMatching(/whatever was asked/) } });
  });

  it('gives no sentence of the text as the answer to a yes-or-no judgement of it', async () => {
    const c = { runId: 'run_x', tenantId: 'ten_x', model: 'svc-workspace' as const, provider: 'embedded' as const, action: 1, results: [] };
    for (const input of [
      "Is this urgent? 'The lift on floor 2 is stuck again.'",
      'Does the email sound rude? "Send it by Friday. Do not be late."',
      'Is she asking for a refund? "My order arrived broken. I would like my money back."',
    ]) {
      // No model is asked: the sentence quoted back says nothing of urgency.
      const outcome = await answerPart({} as never, { ...c, input });
      expect(outcome).toMatchObject({ kind: 'part', part: { status: 'unresolved', reason: expect.stringMatching(/yes-or-no judgement/) } });
    }
  });

  it('takes the one sentence the request gives as the answer as it stands only where it holds a word of the question', async () => {
    const c = { runId: 'run_x', tenantId: 'ten_x', model: 'svc-workspace' as const, provider: 'embedded' as const, results: [], action: 1 };
    const taken = await answerPart({} as never, { ...c, input: "Which city hosts the conference? 'The 2027 conference will be held in Oslo.'" });
    expect(taken).toMatchObject({ kind: 'part', part: { status: 'performed', result: 'The 2027 conference will be held in Oslo.' } });
    // Else the model ranks it against "None": there is no model here, so asking it fails.
    await expect(answerPart({} as never, { ...c, input: 'What is the deadline in this note: "Please reply to Sam soon."' })).rejects.toThrow();
  });

  it("gives no term quoted inside another part of the request (a search word, a commit message) as a question's answer", async () => {
    const c = { runId: 'run_x', tenantId: 'ten_x', model: 'svc-workspace' as const, provider: 'embedded' as const, results: [] };
    for (const input of [
      'about to run `git commit -am "wip"` in the repo before I go on lunch. whihc files would that actually include?',
      'Can you search the share for files whose names contain the word "invoice" and tell me which ones you find?',
    ]) {
      const actions = requestedActions(input);
      const question = actions.findIndex((a) => /\?$/.test(a.clause.trim())) + 1;
      expect(question).toBeGreaterThan(1);
      // No model is asked: nothing is left to answer from once the other part's term is set aside.
      const outcome = await answerPart({} as never, { ...c, input, actions, action: question });
      expect(outcome).toMatchObject({ kind: 'part', part: { status: 'unresolved', reason: expect.stringMatching(/no text to answer it from/) } });
    }
    // A short text the request gives as material, in no other part, is still the answer's to quote (the model ranks it).
    await expect(answerPart({} as never, { ...c, input: 'Her reply was "Tuesday works". Which day did she pick?', action: 1 })).rejects.toThrow();
  });

  it('answers no question that asks the reader to do what it does not know as asking for an answer', async () => {
    const c = { runId: 'run_x', tenantId: 'ten_x', model: 'svc-workspace' as const, provider: 'embedded' as const, action: 1 };
    const read = {
      step_id: 'emb_step_1',
      tool: 'files__read_text_file',
      status: 'done' as const,
      detail: '',
      sources: [],
      output: { content: [{ type: 'text', text: 'Tom 555-0101' }] },
    };
    // No model is asked: "pop" may ask for a change, which no line of contacts.txt carries out.
    const outcome = await answerPart({} as never, { ...c, input: "Could you pop Tom's number into contacts.txt?", results: [read] });
    expect(outcome).toMatchObject({ kind: 'part', part: { status: 'unresolved', reason: expect.stringMatching(/"pop"/) } });
    expect(addressedUnknownVerb(requestedActions('Can you look up Ana’s number in phones.txt?')[0]!)).toBeNull();
    expect(addressedUnknownVerb(requestedActions('Can you tick off item 3 in todo.txt?')[0]!)).toBe('tick');
    // Whatever the verb, something put into a file is a change; "let me know" asks for the answer.
    expect(addressedUnknownVerb(requestedActions("Could you get Tom's number into contacts.txt?")[0]!)).toBe('get');
    expect(addressedUnknownVerb(requestedActions('Any chance you could pop a summary of notes.txt into the top of log.txt?')[0]!)).toBe('pop');
    expect(addressedUnknownVerb(requestedActions('Can someone tidy up notes.txt?')[0]!)).toBe('tidy');
    expect(addressedUnknownVerb(requestedActions('Can you let me know what is in notes.txt?')[0]!)).toBeNull();
  });

  it('gives no summary that leaves out a figure of a short text it summarises, or every figure of a long one', () => {
    const text = 'The quarterly revenue grew 12% while costs fell 3%, driven by the new pricing.';
    expect(droppedFigures('Revenue grew 12% on new pricing.', text)).toEqual(['3']);
    expect(droppedFigures('Revenue grew 12% and costs fell 3%.', text)).toEqual([]);
    // A text with many figures is summarised without them all, but not without every one of them.
    expect(droppedFigures('Sales rose to 5.', 'Sales: 1, 2, 3, 4 and 5.')).toEqual([]);
    expect(droppedFigures('Sales rose.', 'Sales: 1, 2, 3, 4 and 5.')).toEqual(['every one of its 5 figures']);
  });

  it('gives no writing that leaves out a name of a short text it works from, or every name of a long one', () => {
    const report = 'Incident 2291: checkout was down for 47 min on Tuesday. Fixed by Dmitri from the platform team.';
    expect(droppedNames('A security incident occurred on March 11.', report)).toEqual(['Tuesday', 'Dmitri']);
    expect(droppedNames('Checkout was down 47 min on Tuesday; Dmitri fixed it.', report)).toEqual([]);
    // A name of several words is kept by any of them; words that open a sentence are no names.
    expect(droppedNames('Dear Lucy, we will replace the mug.', 'Hello, one mug is cracked. Can I get a replacement? Thanks, Lucy Fenwick')).toEqual([]);
    expect(droppedNames('Ben met them all.', 'Ana met Ben, Cy, Dee, Eve and Flo.')).toEqual([]);
    expect(droppedNames('They met.', 'Ana met Ben, Cy, Dee, Eve and Flo.')).toEqual(['every one of its 5 names']);
  });

  it('answers with what a read returned only an instruction that asks to see it', () => {
    expect(['Read a.txt', 'Can you show me what notes.txt contains', 'please list the files in /tmp/share/'].map(asksToSee)).toEqual([true, true, true]);
    const others = [
      'Password-protect payroll-nov.csv so only the directors can open it',
      'Print rota.txt for the noticeboard',
      'List the three biggest risks in a.txt',
    ];
    expect([...others, 'Look at a.txt and fix the typos'].map(asksToSee)).toEqual([false, false, false, false]);
  });

  it('gives no line as the answer to a question for contact details the line does not hold', () => {
    const line = 'Marco Bellini — person — Account manager at Bellini Coffee Roasters — Prefers phone calls after 2pm';
    expect(lacksAskedContact("What's Marco Bellini's email address?", line)).toMatch(/holds no email address, which the question asks for/);
    expect(lacksAskedContact("What's Marco's email?", `${line} — marco@bellini.example`)).toBeNull();
    expect(lacksAskedContact('Who manages the Bellini account?', line)).toBeNull();
  });

  it('knows arguments the small model wrote by repeating itself: one text in two fields, or twice in a list', () => {
    expect(repeatedValue({ source_timezone: 'UTC', target_timezone: 'UTC', time: '16:00' })).toBe('UTC');
    const entity = { name: 'Sofia Reyes', entityType: 'Sofia Reyes', observations: ['net 30'] };
    expect(repeatedValue({ entities: [entity] })).toBe('Sofia Reyes');
    expect(
      repeatedValue({
        entities: [
          { ...entity, entityType: 'client' },
          { ...entity, entityType: 'client' },
        ],
      }),
    ).not.toBeNull();
    expect(repeatedValue({ files: ['a.txt', 'a.txt'] })).toBe('a.txt');
    expect(
      repeatedValue({ entities: [{ name: 'Northgate Bakery', entityType: 'client', observations: ['Contact: Sofia Reyes', 'Pays on net 30 terms'] }] }),
    ).toBeNull();
    expect(repeatedValue({ path: 'a.txt', content: 'hello', dryRun: false, head: 3, tail: 3 })).toBeNull();
  });

  it('answers a question on the text a request gives from its sentences, each once, and knows a question that offers a choice', () => {
    expect(givenSentences('What is the deadline in this note: "The report is due on Friday at noon."?')).toEqual(['The report is due on Friday at noon.']);
    expect(givenSentences("What day is the launch in this note: 'We launch on Wednesday after the final review.'")).toEqual([
      'We launch on Wednesday after the final review.',
    ]);
    expect(givenSentences('Pull out the action items: "Call the landlord. Renew the permit."')).toEqual(['Call the landlord.', 'Renew the permit.']);
    expect(choiceOf('Is this message a complaint or a compliment?')).toEqual(['complaint', 'compliment']);
    expect(choiceOf('Who signed the contract?')).toBeNull();
  });

  it('asks a question of reads only: asksOnlyInformation', () => {
    const [question] = requestedActions('What is the status of the repository at /tmp/repo?');
    const [write] = requestedActions('Write "hello" to /tmp/a.txt.');
    expect(asksOnlyInformation(question!)).toBe(true);
    expect(asksOnlyInformation(write!)).toBe(false);
    // A change verb that is hardly a noun asks for a change wherever the instruction has it, not in the text it gives.
    expect(asksOnlyInformation(requestedActions('pls rename a.txt to b.txt, thx')[0]!)).toBe(false);
    expect(asksOnlyInformation(requestedActions('in settings.ini change the line debug=true to debug=false.')[0]!)).toBe(false);
    expect(asksOnlyInformation(requestedActions('In hours.txt make the Saturday line say "Saturday: closed".')[0]!)).toBe(false);
    expect(requestedActions('Push the main branch to origin so that CI picks it up.')[0]!.kind).not.toBe('delivery');
    expect(asksOnlyInformation(requestedActions('Find the web address in this note: write to us at https://x.example.')[0]!)).toBe(true);
    // "Add up" asks for a total; "add" alone asks for a change.
    expect(asksOnlyInformation(requestedActions('Can you add up these receipts for my claim: 12.40, 7.95 and 23.10')[0]!)).toBe(true);
    expect(asksOnlyInformation(requestedActions('Add them up: 1, 2 and 3.')[0]!)).toBe(true);
    expect(asksOnlyInformation(requestedActions('Add coffee beans to shopping.txt.')[0]!)).toBe(false);
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

  it('writes the text a colon introduces verbatim, whatever the model wrote, on its line or the lines after it', () => {
    const content = (input: string, wrote: string) => protocolArguments(write([1], wrote), input, requestedActions(input));
    const wifi = 'Please create /tmp/a.txt containing exactly: Network: Guest-5G, password on the fridge';
    expect(content(wifi, 'Network Guest-5G')).toMatchObject({ content: 'Network: Guest-5G, password on the fridge' });
    // Not "exactly this line", which "containing" would give: the line after the colon, its stop included.
    const standup = 'Please create a new file called /tmp/a.txt containing exactly this line:\nStandup moves to 10:30 on Thursday, same room (B2).';
    expect(content(standup, 'exactly this line')).toMatchObject({ content: 'Standup moves to 10:30 on Thursday, same room (B2).' });
    // Several lines, up to the next request.
    const notes = 'Save this to /tmp/a.txt:\n\nVersion 2.3\n- Faster search\n- Dark mode for reports\n\nThen tell the team that the notes are ready.';
    expect(content(notes, 'Version 2.3')).toMatchObject({ content: 'Version 2.3\n- Faster search\n- Dark mode for reports' });
    // The colon of the sentence after the instruction, when that sentence only introduces the text.
    const agenda = "Make a file called /tmp/a.txt for tomorrow's meeting. Contents exactly as follows:\n1. Budget review\n2. Hiring update\n3. AOB";
    expect(content(agenda, 'Budget review')).toMatchObject({ content: '1. Budget review\n2. Hiring update\n3. AOB' });
    // Not a colon of another action, nor one inside the text the instruction already gives; not thanks or what follows a blank line.
    expect(content('Create /tmp/a.txt with the text hello and post to the channel: done', 'hello')).not.toMatchObject({ content: 'done' });
    expect(content('Create /tmp/a.txt with the text Note: back at 3', 'Note: back at 3')).not.toMatchObject({ content: 'back at 3' });
    expect(content('Create /tmp/a.txt with this text:\nhello\nThanks!', 'hello')).toMatchObject({ content: 'hello' });
    expect(content('Save this to /tmp/a.txt: The audit passed. Rent is lower.', 'The audit passed.')).toMatchObject({
      content: 'The audit passed. Rent is lower.',
    });
    // A text to lay out anew is no copy of what the colon introduces.
    const packing = 'Save a packing list to /tmp/a.txt, one item per line: passport, charger, umbrella';
    expect(content(packing, 'passport, charger, umbrella')).toMatch(/laid out anew/);
  });

  it('writes a text introduced by "with the text" or "listing" to its end, and nothing the model picked from the instruction', () => {
    const input = 'can you create /tmp/a.txt with the text Visitor parking moved to bays 4-9 from Monday';
    expect(protocolArguments(write([1], 'Monday'), input, requestedActions(input))).toMatchObject({ content: 'Visitor parking moved to bays 4-9 from Monday' });
    const listing = 'Create a file /tmp/a.txt listing milk and eggs.';
    expect(protocolArguments(write([1], 'eggs'), listing, requestedActions(listing))).toMatchObject({ content: 'milk and eggs' });
    const append = 'add coffee beans to the end of /tmp/a.txt, on its own line';
    expect(protocolArguments(write([1], 'to the end of /tmp/a.txt'), append, requestedActions(append))).toMatch(/needs a stronger model/);
  });

  it('runs no edit that changes nothing: a text replaced with itself, or no edits at all', () => {
    const input = 'Update the Latte price in /tmp/prices.txt to the new price.';
    const edit = (edits: unknown[]): PlanStep => ({ ...write([1], ''), tool: 'files__edit_file', arguments: { path: '/tmp/prices.txt', edits } });
    expect(protocolArguments(edit([{ oldText: 'Latte', newText: 'Latte' }]), input, requestedActions(input))).toMatch(/replaced with itself/);
    // Tuning case s-26: an empty list of edits had been approved and counted as the change made.
    const quoted = "In /tmp/open.txt can you change its line to '#1042 VPN - CLOSED'?";
    expect(protocolArguments(edit([]), quoted, requestedActions(quoted))).toMatch(/would change nothing/);
  });
});

describe('statements that are context for the part after them (context-statements.ts)', () => {
  const kept = (input: string) => withoutContextStatements(requestedActions(input), new Set());

  it("reads a statement whose figures or names the next part works on as that part's context, renumbered, its words still quoted", () => {
    expect(kept("Response times this week were 212 ms, 187 ms, 240 ms and 197 ms. What's the average?").map((a) => [a.n, a.clause])).toEqual([
      [1, "What's the average?"],
    ]);
    expect(kept('Mrs Adeyemi rang, her new mobile is 07700 900 117. Update her row in customers.csv please.').map((a) => a.clause)).toEqual([
      'Update her row in customers.csv please',
    ]);
    const input =
      'Three invoices came in today: €240.00 from Brightline, €115.50 from Kettle & Co. and €89.99 from Oduya Print. Add them up and post the total to the team channel.';
    const actions = kept(input);
    // The delivery still sends the total: its source is renumbered with it.
    expect(actions.map((a) => [a.n, a.clause, a.messageFrom])).toEqual([
      [1, 'Add them up', undefined],
      [2, 'post the total to the team channel', 1],
    ]);
    // The statement's words are in the scope of the part it serves (a path it names is that part's to read).
    expect(actions[0]!.scope).toContain('€89.99 from Oduya Print');
    // Quoted with the part it serves: every sentence of the request is still accounted for.
    const report = planReport(input, { planner: 'model', steps: [] }, actions, [], new Map(), callIdOf);
    expect(report.parts[0]!.quote.startsWith('Three invoices came in today')).toBe(true);
    expect(accountFor(input, report, new Map()).unresolved.some((u) => /quote/i.test(u))).toBe(false);
  });

  it('reads a statement after a question, saying where its answer is, as that question’s context', () => {
    const input = 'Has Harbour Cafe paid invoice 1042 yet? invoices.csv in /srv/share has the statuses. Thanks';
    const actions = kept(input);
    expect(actions.map((a) => [a.n, a.clause])).toEqual([[1, 'Has Harbour Cafe paid invoice 1042 yet?']]);
    expect(actions[0]!.scope).toContain('invoices.csv in /srv/share');
    // A question that names its own file keeps a later statement as a part of its own (it may say something else).
    expect(kept('What does notes.txt say? invoices.csv in /srv/share has the statuses.')).toHaveLength(2);
  });

  it('keeps as parts: an instruction, news beside a part that does not work on it, a sentence that asks in any words, one that ends the request', () => {
    expect(kept('Bump the Latte price to 3.40 in prices.txt. Then tell Sam it is done.')).toHaveLength(2);
    expect(kept('Make sure the heating is fixed. Tell the tenants it is sorted.')).toHaveLength(2);
    // A part that neither points back nor asks a question of the statement's figures: the statement may ask something.
    expect(kept('Dinner came to €387.60. Summarise notes.txt.').map((a) => a.clause)).toEqual(['Dinner came to €387.60', 'Summarise notes.txt']);
    expect(kept('According to memory, how many hours have The Velvet Owls booked this May, and what does that come to?').map((a) => a.clause)).toEqual(
      requestedActions('According to memory, how many hours have The Velvet Owls booked this May, and what does that come to?').map((a) => a.clause),
    );
    expect(kept('Summarise the minutes in minutes.txt. Sam was there.').map((a) => a.clause)).toEqual(
      requestedActions('Summarise the minutes in minutes.txt. Sam was there.').map((a) => a.clause),
    );
    // What is to be done, worded as what is, beside a question about something else; a statement before thanks.
    for (const input of [
      "Tom's number 555 0142 is to be added to contacts.txt. Then tell me what's in notes.txt.",
      "Tom's number 555 0142 has to go into contacts.txt. What does notes.txt say?",
      "Kim's new mobile is 07700 900117 and contacts.txt still has the old one. What's in notes.txt?",
      "Tom's number is 555 0142, it goes in contacts.txt. Thanks for that.",
    ])
      expect(kept(input).map((a) => a.clause)).toEqual(requestedActions(input).map((a) => a.clause));
    // A part the catalog offers a change is never context.
    const input = "Kim Tran's number changed to 01632 960 612. Update it in contacts.csv.";
    const changes = new Set(requestedActions(input).map((a) => a.n));
    expect(withoutContextStatements(requestedActions(input), changes)).toEqual(requestedActions(input));
  });

  it('words a statement by its verb or as a label with its figures, never an instruction', () => {
    expect(
      ['Dinner came to €387.60', 'Mileage this month: 42, 17.5, 63 and 28.25 miles', 'Lovely news: Oliver Brandt passed his exam'].map(statesSomething),
    ).toEqual([true, true, true]);
    expect(
      ['Make sure the file is updated', 'Log this at the bottom: Tue 21 Oct', 'I need the keypad code', 'Marek asked what the password is'].map(
        statesSomething,
      ),
    ).toEqual([false, false, false, false]);
  });
});
