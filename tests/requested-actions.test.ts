// Unit tests: how a run's input is split into requested actions and classed,
// and how the local planner turns those actions into steps and gaps.
// Pure functions only: no database, no Temporal, no HTTP.
import { describe, expect, it } from 'vitest';
import { planLocally } from '../domain/planning/local-planner.ts';
import { type ActionKind, missingMaterialReason, type RequestedAction, requestedActions } from '../domain/planning/requested-actions.ts';

/** The kind and deciding verb of each action, in order. */
const kinds = (input: string) => requestedActions(input).map((a) => [a.kind, a.verb]);

const action = (n: number, clause: string, kind: ActionKind, verb: string | null, sentence = 0, missing: string | null = null): RequestedAction => ({
  n,
  clause,
  sentence,
  kind,
  verb,
  missing,
});

describe('requestedActions: splitting and classification', () => {
  it('splits two effects joined by "and" into two unsupported actions', () => {
    expect(requestedActions('Delete the old S3 buckets and pay the vendor invoice.')).toEqual([
      action(1, 'Delete the old S3 buckets', 'unsupported', 'delete'),
      action(2, 'pay the vendor invoice', 'unsupported', 'pay'),
    ]);
  });

  it('splits analysis from delivery: summarise, then send', () => {
    expect(requestedActions('Summarise the incident timeline and send it to the on-call channel.')).toEqual([
      // Nothing gives the timeline, so neither the summary nor its delivery can be done.
      action(1, 'Summarise the incident timeline', 'analysis', 'summarise', 0, 'the incident timeline'),
      action(2, 'send it to the on-call channel', 'delivery', 'send', 0, 'the message to send'),
    ]);
  });

  it('splits analysis from delivery: collect, then post (the adjective "open" is not a verb here)', () => {
    expect(requestedActions('Collect the open invoices and post the list to finance.')).toEqual([
      action(1, 'Collect the open invoices', 'analysis', 'collect', 0, 'the open invoices'),
      action(2, 'post the list to finance', 'delivery', 'post', 0, 'the message to send'),
    ]);
  });

  it('keeps a list of nouns as one analysis action ("open questions" does not start a new action)', () => {
    expect(requestedActions('List the risks, open questions and deadlines.')).toEqual([
      action(1, 'List the risks, open questions and deadlines', 'analysis', 'list'),
    ]);
  });

  it('does not split at hyphenated words that start with a verb', () => {
    expect(kinds('Review the post-mortem and send-off notes.')).toEqual([['analysis', 'review']]);
  });

  it.each([
    ['The old cluster must be decommissioned by March.', 'decommission'],
    ['The vendor invoice should be paid by Friday.', 'pay'],
  ])('classes an effect in the passive voice as unsupported: %s', (input, verb) => {
    expect(kinds(input)).toEqual([['unsupported', verb]]);
  });

  it('classes a delivery in the passive voice as delivery', () => {
    expect(kinds('The report must be sent to finance.')).toEqual([['delivery', 'send']]);
  });

  it('classes email as unsupported (no tool sends email), after dropping "Please"', () => {
    expect(requestedActions('Please email Bob the summary.')).toEqual([action(1, 'Please email Bob the summary', 'unsupported', 'email')]);
  });

  it.each(["Don't delete anything.", 'Do not delete anything.', 'Never pay the invoice.', 'Avoid deploying on Fridays.'])(
    'treats a negated effect as a constraint, not a request: %s',
    (input) => {
      expect(kinds(input)).toEqual([['analysis', null]]);
    },
  );

  it('keeps a negated effect apart from the request that follows: a constraint, not an action of its own', () => {
    expect(kinds('Do not email anyone; summarise the doc.')).toEqual([['analysis', 'summarise']]);
  });

  it('takes statements beside a request as its material, not as requests', () => {
    expect(kinds('Summarise: The office opens in May. Rent is 20% lower.')).toEqual([['analysis', 'summarise']]);
    expect(kinds("Is this a complaint? 'The parcel was left in the rain.'")).toEqual([['analysis', 'is']]);
    // With no request at all, the statements stay (each is analysis of the given text).
    expect(kinds('The office opens in May. Rent is lower.')).toEqual([
      ['analysis', null],
      ['analysis', null],
    ]);
  });

  it.each([
    ['Tell the support channel that the outage is over.', [['delivery', 'tell']]],
    ['Let the ops team know the backup finished.', [['delivery', 'let know']]],
    ['Inform finance that the invoice arrived.', [['delivery', 'inform']]],
    ['Tell me what the risks are.', [['analysis', 'tell']]],
    ['Tell the difference between the two offers.', [['analysis', 'tell']]],
    ['Wire 500 EUR to the landlord.', [['unsupported', 'wire']]],
  ])('classes a message to someone as a delivery, an answer to me as analysis: %j', (input, expected) => {
    expect(kinds(input)).toEqual(expected);
  });

  it.each([
    ['Can you summarise the notes?', [['analysis', 'summarise']]],
    ['We need you to deploy the service.', [['unsupported', 'deploy']]],
    [
      'Check the logs and restart the service.',
      [
        ['analysis', 'check'],
        ['unsupported', 'restart'],
      ],
    ],
    [
      'Schedule a meeting and notify the team.',
      [
        ['unsupported', 'schedule'],
        ['delivery', 'notify'],
      ],
    ],
    [
      'Send the summary to finance and post it to the team channel.',
      [
        ['delivery', 'send'],
        ['delivery', 'post'],
      ],
    ],
  ])('classes each clause of %j', (input, expected) => {
    expect(kinds(input)).toEqual(expected);
  });

  it('gives one analysis action for an input with no verb at all', () => {
    expect(requestedActions('Hello')).toEqual([action(1, 'Hello', 'analysis', null)]);
  });

  it.each([
    [
      'Summarise the notes, then deploy.',
      [
        ['analysis', 'summarise'],
        ['unsupported', 'deploy'],
      ],
    ],
    [
      'Summarise the notes. Pay.',
      [
        ['analysis', 'summarise'],
        ['unsupported', 'pay'],
      ],
    ],
    ['Deploy.', [['unsupported', 'deploy']]],
  ])('does not drop an effect asked for in a single word: %j', (input, expected) => {
    expect(kinds(input)).toEqual(expected);
  });

  it('records the 0-based sentence of each action and numbers actions 1, 2, … in input order', () => {
    const actions = requestedActions('Review the contract. Summarise the notes and send them to the team. Delete the drafts. What are the risks?');
    expect(actions.map((a) => [a.n, a.sentence, a.clause, a.kind, a.verb])).toEqual([
      [1, 0, 'Review the contract', 'analysis', 'review'],
      [2, 1, 'Summarise the notes', 'analysis', 'summarise'],
      [3, 1, 'send them to the team', 'delivery', 'send'],
      [4, 2, 'Delete the drafts', 'unsupported', 'delete'],
      [5, 3, 'What are the risks?', 'analysis', null],
    ]);
  });
});

describe('requestedActions: statements are not requests', () => {
  it.each([
    ['At 10:02 the database was restarted.'],
    ['The bug was fixed yesterday.'],
    ['Sent the report yesterday.'],
    ['Open questions: who owns billing?'],
    ['Update on the migration: it is late.'],
    ['Release notes for v2 are attached.'],
    ['Text of the contract follows.'],
  ])('%s is analysis of the given text', (input) => {
    expect(requestedActions(input).map((a) => a.kind)).toEqual(['analysis']);
  });

  it('splits at "next" only where it leads a clause, not in "the next offsite"', () => {
    const asked = requestedActions('hey, can you summarise notes.txt and tell me when and where the next offsite is?').map((a) => a.clause);
    expect(asked).toEqual(['hey, can you summarise notes.txt', 'tell me when and where the next offsite is?']);
    expect(requestedActions('Read a.txt, next summarise it.').map((a) => a.clause)).toEqual(['Read a.txt', 'summarise it']);
    expect(requestedActions('Read a.txt and next summarise it.').map((a) => a.clause)).toEqual(['Read a.txt', 'summarise it']);
  });

  it('sends nothing that only names what to say, or an aside after a dash, as the message of "let … know"', () => {
    const [check, tell] = requestedActions("Check wardens.txt for who the warden on floor 3 is and let Tomasz know - he's just moved there.");
    expect([check!.kind, tell!.kind, tell!.message, tell!.messageFrom]).toEqual(['analysis', 'delivery', undefined, 1]);
    const [alarm] = requestedActions("let Marek know the new alarm code, it's in facilities.txt");
    expect(alarm!.missing).toBe('the message to send');
    expect(missingMaterialReason(alarm!)).toMatch(/^sends a message, which the run was not given/);
    expect(requestedActions('Let Sam know the meeting moved to 3pm.')[0]!.message).toBe('the meeting moved to 3pm');
  });

  it('reads a message by another medium than the delivery tool (an SMS, an email, the tannoy, a calendar invite) as an effect no tool performs', () => {
    expect(requestedActions('Send an SMS to all the patients booked in for tomorrow.').map((a) => [a.kind, a.verb])).toEqual([['unsupported', 'send by sms']]);
    expect(requestedActions('Announce over the tannoy that the blue Fiesta has its lights on.')[0]!.kind).toBe('unsupported');
    expect(requestedActions('Send Hugo a calendar invite for the review: Thursday 2pm.')[0]!.kind).toBe('unsupported');
    expect(requestedActions('Send the notes to bob@example.com').map((a) => [a.kind, a.verb])).toEqual([['unsupported', 'send by email']]);
    expect(requestedActions('Forward the Q3 figures by email to finance')[0]!.kind).toBe('unsupported');
    // What the message says is not how it is sent.
    expect(requestedActions('Tell Sam that the SMS gateway is down.')[0]!.kind).toBe('delivery');
    expect(requestedActions('Let Marek know his email is fixed')[0]!.kind).toBe('delivery');
  });

  it('takes a qualifier, or what the asker is doing, beside a question as its context, not a request of its own', () => {
    const clauses = (input: string) => requestedActions(input).map((a) => a.clause);
    expect(clauses('what port is staging on? it is in db.conf. only need the main one - not prod, and not the replica either')).toEqual([
      'what port is staging on?',
    ]);
    // A verb of change still asks, beside a question or not.
    expect(clauses('What is in notes.txt? Only add the total to a.txt.')).toEqual(['What is in notes.txt?', 'Only add the total to a.txt']);
    expect(clauses('What is in b.txt? Should be in the archive folder, move report.txt there.')).toHaveLength(2);
    expect(clauses('Doing the weekly order. Which items in stock.csv are low? Anything exactly on its level can wait.')).toEqual([
      'Which items in stock.csv are low?',
    ]);
    expect(clauses('Who manages the Leeds warehouse? Should be in our knowledge graph.')).toEqual(['Who manages the Leeds warehouse?']);
    // A verb that ends in -ing, or a known verb after the qualifier, is still a request.
    expect(clauses('Bring the chairs in. What is on the agenda?')).toEqual(['Bring the chairs in', 'What is on the agenda?']);
    expect(clauses('Only summarise the first paragraph. What is on the agenda?')).toEqual(['Only summarise the first paragraph', 'What is on the agenda?']);
  });

  it('takes where to look, why it is asked, and thanks beside a question as its context', () => {
    const clauses = (input: string) => requestedActions(input).map((a) => a.clause);
    expect(clauses('hey, can you check notes.txt and tell me when the offsite is?')).toEqual(['tell me when the offsite is?']);
    expect(clauses("who's on call saturday? check /tmp/x/oncall.md. and who is the backup")).toEqual(["who's on call saturday?", 'and who is the backup']);
    expect(clauses('Does Rosa have any dietary requirements? Check the knowledge graph.')).toEqual(['Does Rosa have any dietary requirements?']);
    expect(clauses('Where are they based? (check the knowledge graph)')).toEqual(['Where are they based?']);
    expect(clauses('open invoices.txt - what do we bill in total?')).toEqual(['what do we bill in total?']);
    expect(clauses('What time is it in Tokyo? Need to know before I call the supplier there.')).toEqual(['What time is it in Tokyo?']);
    expect(clauses("Which files are untracked? want to make sure I don't forget to add anything")).toEqual(['Which files are untracked?']);
    expect(clauses("Who manages the Leeds warehouse? Should be in our knowledge graph, I can't remember the name.")).toEqual([
      'Who manages the Leeds warehouse?',
    ]);
    expect(clauses('When does the lease end? Thanks so much.')).toEqual(['When does the lease end?']);
    // A greeting before "quick one", and a sign-off with a name, ask nothing; "Thanks, send it" still asks.
    expect(clauses('Hi, quick one - when does the lease end? Cheers, Gary')).toEqual(['when does the lease end?']);
    expect(clauses('Good afternoon. When does the lease end? Kind regards,')).toEqual(['When does the lease end?']);
    expect(clauses('When does the lease end? Thanks, send it to Bob')).toHaveLength(2);
    // What the asker will do or did themselves, and thanks with a kiss.
    expect(clauses("Hiya, who's our contact at the flour supplier? Tuesday's delivery hasn't turned up and I need to chase it")).toEqual([
      "Hiya, who's our contact at the flour supplier?",
    ]);
    expect(clauses('Who manages the Northside branch? New starter asked and I went blank.')).toEqual(['Who manages the Northside branch?']);
    expect(clauses('Can you add up these till counts for me: 50.00, 23.40 and 9.95. thanks x')).toEqual(['Can you add up these till counts for me']);
    // Not when it asks the reader, or asks to find out more.
    expect(clauses('Who manages the Northside branch? I need you to email them.')).toHaveLength(2);
    expect(clauses('Who manages the Northside branch? And I need to know their phone number')).toHaveLength(2);
    // Nor when it leads with a verb this file knows ("Tell …", "Add …"): the asker's own part does not drop the request.
    expect(clauses('Is the van back? Tell me who has the keys and I need to pick them up.')).toHaveLength(2);
    expect(clauses('Who is on call tonight? Add a note to handover.txt that the lift is down and I need to ring them.')).toHaveLength(2);
    // A bare list after a question is its material, whatever its items are called ("sticky notes").
    expect(clauses('How many things are on this list? printer paper, toner, sticky notes, stapler')).toEqual(['How many things are on this list?']);
    // Something to check that is no source, and a list led by a verb, still ask.
    expect(clauses("What's the capital of France? Also check the tyre pressure.")).toHaveLength(2);
    expect(clauses("What's in notes.txt? Add milk, eggs, bread.")).toHaveLength(2);
    // Where to look is each question's to read.
    expect(requestedActions("who's on call saturday? check /tmp/x/oncall.md. and who is the backup").map((a) => a.scope)).toEqual([
      "who's on call saturday? check /tmp/x/oncall.md",
      'and who is the backup check /tmp/x/oncall.md',
    ]);
    // Context is not material to answer from; a statement, or a bare list, is.
    expect(requestedActions('What time is it in Tokyo? Need to know before I call.')[0]!.given).toBeUndefined();
    expect(requestedActions('Who runs the depot? Check the knowledge graph.')[0]!.given).toBeUndefined();
    expect(requestedActions('How many are on this list? eggs, milk, bread')[0]!.given).toBe(true);
    expect(requestedActions('Who runs the depot? It changed in May.')[0]!.given).toBe(true);
    // A question cut from its question mark is still a question.
    expect(clauses('which of our vendors does the printing, and where are they based?')).toEqual([
      'which of our vendors does the printing',
      'where are they based?',
    ]);
  });

  it('takes a lead-in, news of someone named, a single-quoted text, and "let me know" beside a question as no request', () => {
    const clauses = (input: string) => requestedActions(input).map((a) => a.clause);
    expect(clauses('Quick one - has Leo handed his form in yet?')).toEqual(['has Leo handed his form in yet?']);
    expect(clauses('Sunita Rao just rang asking where her order is. What status is order 1187 at in orders.csv?')).toEqual([
      'What status is order 1187 at in orders.csv?',
    ]);
    expect(clauses('Ticket 1042 is sorted now. Which tickets in open.txt are still open?')).toEqual(['Which tickets in open.txt are still open?']);
    expect(clauses("Gary's diary says: 'Mon - 3 labourers, Tue - 4 labourers'. How many labourer-days is that?")).toEqual(['How many labourer-days is that?']);
    expect(clauses('What is in a.txt? Let me know.')).toEqual(['What is in a.txt?']);
    expect(clauses('How many labourer-days is that? Need it for the invoice.')).toEqual(['How many labourer-days is that?']);
    expect(clauses('hi, the wifi keeps dropping out. can you reboot the router and let me know when it is back?')).toEqual([
      'can you reboot the router',
      'let me know when it is back?',
    ]);
    // A request after where or what for is still that request ("In open.txt can you change …?" asks a change, not a question).
    expect(requestedActions("In tickets/open.txt can you change its line to '#1042 - CLOSED'?")[0]).toMatchObject({ kind: 'unsupported', verb: 'change' });
    expect(requestedActions('In a.txt, can you tell me what the first line is?')[0]!.kind).toBe('analysis');
    // "Let me know" asks for an answer, never a delivery; a verb leading the name, or news that asks, still requests.
    expect(requestedActions('Let me know when the backup is done.')[0]!.kind).toBe('analysis');
    expect(clauses('Ring Sunita Rao about the order. What is in a.txt?')).toHaveLength(2);
    expect(clauses('Sunita Rao needs the file. What is in a.txt?')).toHaveLength(2);
    // From a review: a request beside a question is never taken for news, a reason, or where to look.
    for (const input of [
      'What is the total in orders.csv? Open orders.csv and mark 1187 as shipped.',
      'What is in orders.csv? Ring Mohammed Ahmed about his order.',
      'What is in orders.csv? Ring Bob just to check the order is coming.',
      "What's Sunita's order number in orders.csv? Sunita Rao just rang, so ring her back with it.",
      'Summarise the notes in a.txt. Someone needs to ring the supplier about it.',
      'Summarise the notes in a.txt. Hi, you need to ring the supplier too.',
      'What is the balance in accounts.csv? Need it for the VAT return so file it today.',
    ])
      expect(clauses(input)).toHaveLength(2);
    expect(requestedActions('Let me know by email what is in orders.csv.')[0]!.kind).not.toBe('analysis');
    expect(requestedActions('Let me and Sarah know what is in orders.csv.')[0]!.kind).toBe('delivery');
  });

  it("reads for a question what the request's other sentences name, when every request is a question", () => {
    const scopes = (input: string) => requestedActions(input).map((a) => a.scope);
    // Where to look, named at more length ("orders.csv in the shared folder", "the asset list (assets.csv)").
    expect(scopes('Can you check the asset list (assets.csv) and tell me who it is assigned to?')[0]).toContain('assets.csv');
    expect(scopes('Can you check orders.csv in the shared folder and tell me its status?')[0]).toContain('orders.csv');
    expect(scopes("has Leo handed his form in? It's all in consent-forms.csv. If he has, what day did it come back?")).toEqual([
      "has Leo handed his form in? It's all in consent-forms.csv.",
      "If he has, what day did it come back? It's all in consent-forms.csv.",
    ]);
    expect(scopes('How many volunteers are down for Saturday (volunteers.csv)? And which of them are drivers?')[1]).toContain('volunteers.csv');
    // A question about something else reads nothing another question names.
    expect(scopes("Who's the plumber we use? Also, what did we pay for invoice 2291 in invoices.csv?")[0]).toBeUndefined();
    // An abbreviation is no path: "3 p.m." gives no material.
    expect(requestedActions('Summarise our Q3 vendor contracts before the 3 p.m. meeting.')[0]!.missing).not.toBeNull();
    // Checking whether something holds asks; it is not where to look.
    expect(requestedActions('Can you check whether a.txt is empty and tell me?')).toHaveLength(2);
  });

  it('takes what a colon introduces, what a change leaves alone, and news told in passing, as material', () => {
    const clauses = (input: string) => requestedActions(input).map((a) => a.clause);
    expect(clauses("Make a file called agenda.txt for tomorrow's meeting. Contents exactly as follows:\n1. Budget review\n2. Hiring update\n3. AOB")).toEqual([
      "Make a file called agenda.txt for tomorrow's meeting",
    ]);
    // What the colon introduced ends where a request leads ("Then …", a delivery).
    expect(clauses('Put this in a new file notes.txt:\nv1.4 fixes the bug\nThen let the team channel know.')).toEqual([
      'Put this in a new file notes.txt',
      'let the team channel know',
    ]);
    // What follows a change's colon is what it writes, split nowhere; a request after the colon still asks.
    expect(clauses('Log this at the bottom of log.txt, under the others please: Tue 21 Oct - Achterberg Inks - 2 boxes')).toEqual([
      'Log this at the bottom of log.txt, under the others please',
    ]);
    expect(clauses('Update the wiki: delete the old page.')).toEqual(['Update the wiki: delete the old page']);
    // A passive in the text to write is what it says, not an effect asked for ("closed" is no effect asked).
    expect(
      requestedActions('Please make a new file called notice.txt with exactly this text in it: The staff room will be closed on Friday.').map((x) => [
        x.clause,
        x.kind,
      ]),
    ).toEqual([['Please make a new file called notice.txt with exactly this text in it', 'unsupported']]);
    // A passive that says what must be done, after a change's colon, still asks.
    expect(clauses('Update the wiki: the old page must be deleted.')).toEqual(['Update the wiki: the old page must be deleted']);
    // A file or folder made is one created, unless more is asked of it.
    expect(requestedActions('Could you make a new folder called receipts?')[0]!.verb).toBe('create');
    expect(requestedActions('New file rota.txt please, with just "Deep clean Friday" in it')[0]!.verb).toBe('create');
    expect(requestedActions('Could you set up a new folder called receipts?')[0]!.verb).toBe('create');
    expect(requestedActions('Make a folder called archive and move a.txt into it')[0]!.verb).not.toBe('create');
    expect(requestedActions("Make a new folder called invoices/2023/ and also put last year's invoices in it")[0]!.verb).not.toBe('create');
    // A request after a change's colon, a verb beside a constraint, or a request after where the material is, still asks.
    expect(clauses('Rename a.txt to b.txt: it is outdated, and delete c.txt.')).toHaveLength(2);
    expect(clauses('Create /tmp/a.txt containing: hello world, then tell Sam it is done.').map((x) => x.startsWith('tell'))).toContain(true);
    expect(clauses('Add a line to notes.txt saying hi but make sure the header stays the same. Then tell Sam.')).toHaveLength(2);
    expect(clauses('Rename a.txt to b.txt. Leave a comment on the PR saying the rest is fine.')).toHaveLength(2);
    expect(clauses('Where is q3.xlsx? Should be in reports/ so copy it to backup/.')).toHaveLength(2);
    // Material ends at a line that asks again, at thanks, and at a blank line.
    expect(clauses('Create /tmp/a.txt with this text:\nhello\nAsk Priya to review it.')).toHaveLength(2);
    // A line that leads with an imperative asks again.
    expect(clauses('Create hello.txt with this text:\nhello there.\nSummarise a.txt.')).toEqual(['Create hello.txt with this text', 'Summarise a.txt']);
    expect(clauses('in settings.ini change the line debug=true to debug=false. leave everything else exactly as it is')).toHaveLength(1);
    expect(clauses('make a folder called reports and move q1.txt into it. leave budget.txt where it is')).toHaveLength(1);
    expect(clauses("Hartley job's all wrapped up. Make a jobs/hartley folder. Penrose stays put, that one's still live.")).toEqual([
      'Make a jobs/hartley folder',
    ]);
    // A change beside "leave the rest" still asks; so does news that asks a question, or holds a verb of work.
    expect(clauses("Latte's going up. In prices.txt change the Latte line, leave the rest alone")).toEqual([
      'In prices.txt change the Latte line, leave the rest alone',
    ]);
    expect(clauses("Chef's asking how much we owe Fenwick. Only count the unpaid ones in invoices.csv")).toHaveLength(2);
    expect(clauses("Sam's report needs a summary. Then tell Amy.")).toHaveLength(2);
  });

  it('takes thanks beside any request as no request of its own', () => {
    expect(requestedActions('Rename a.txt to b.txt. Thanks so much!').map((a) => a.clause)).toEqual(['Rename a.txt to b.txt']);
  });

  it('takes a contracted pronoun, or a label and its data, beside a request as its material', () => {
    expect(requestedActions("We're not opening Saturdays anymore. Which day is the shop shut?").map((a) => a.clause)).toEqual(['Which day is the shop shut?']);
    expect(requestedActions('timesheet: mon 7.5h, tue 8h. total for the week?').map((a) => a.clause)).toEqual(['total for the week?']);
    // A time is no label, and an instruction of more than one word before its colon still asks.
    expect(requestedActions('Create standup.txt with this line:\nStandup moves to 10:30 on Thursday.').map((a) => a.clause)).toEqual([
      'Create standup.txt with this line',
    ]);
    expect(requestedActions('Put this in a new file notes.txt: v1.4 fixes the bug\nThen tell Sam it is done.')).toHaveLength(2);
    // A colon inside a quote is the quote's: the clause around it still asks.
    expect(requestedActions('In hours.txt make the Saturday line say "Saturday: closed". It is urgent.').map((a) => a.clause)).toEqual([
      'In hours.txt make the Saturday line say "Saturday: closed"',
    ]);
  });

  it('takes lines of data after a question, a letter pasted after it and an aside in brackets as its material or context', () => {
    const clauses = (input: string) => requestedActions(input).map((a) => a.clause);
    expect(clauses('How many jobs took longer than 2 hours? (exactly 2 does not count)\nMon - tap washer, 0.5h\nTue - boiler repair, 4h')).toEqual([
      'How many jobs took longer than 2 hours?',
    ]);
    expect(clauses('Could you total up the receipts? Milk £2.45, stamps £8.40, taxi for Mrs Ahmed £11.20. Thank you!')).toEqual([
      'Could you total up the receipts?',
    ]);
    expect(clauses('Which day will Leo be back?\n\nDear Mrs Grant,\nLeo is back on Tuesday.\nKind regards,\nJoanne Fraser')).toEqual([
      'Which day will Leo be back?',
    ]);
    for (const signOff of [
      'Cheers, Dave, Northgate Motors garage',
      'Namaste, Jen (front desk, Still Water Yoga)',
      '- Imogen, props dept',
      'Warm wishes,\nGwen (Friends)',
    ])
      expect(clauses(`What is in notes.txt? ${signOff}`)).toEqual(['What is in notes.txt?']);
    expect(clauses('What is in notes.txt? Thanks, send it to Bob')).toHaveLength(2);
    // A line that may ask ("Ring Dave at 3pm") still does; so does an aside that asks.
    expect(clauses('Who is on call today?\nRing Dave at 3pm')).toHaveLength(2);
    expect(clauses('Who is on call today? (and email Dave the answer)')).toHaveLength(2);
  });

  it('reads a question about an effect as a question, and a look at a file in a folder as where to look', () => {
    expect(requestedActions('If I moved everything into an archive folder, how many files would I be moving?').map((a) => a.kind)).toEqual(['analysis']);
    expect(requestedActions('Which day does she say Leo will be back in school?').map((a) => a.kind)).toEqual(['analysis']);
    expect(requestedActions('The old logs should be deleted.').map((a) => a.kind)).toEqual(['unsupported']);
    const look = requestedActions("Hi, can you look in stock.csv (it's in /srv/share) and tell me how many elbows we have?");
    expect(look.map((a) => a.clause)).toEqual(['tell me how many elbows we have?']);
    expect(look[0]!.scope).toContain('stock.csv');
    expect(requestedActions('Could you check donations.csv in /srv/share and tell me what Margaret gave?')).toHaveLength(1);
  });

  it.each([
    'Is the boiler still under warranty? Call the plumber if not: see contacts.txt',
    'Who is on call Saturday? Open invoices.csv (and chase the overdue ones)',
    'Dear team please cancel the Friday booking. What time is the meeting?',
    'Rename a.txt to b.txt. Each new starter needs a locker assigning.',
    'Is the shop open Sunday? Ta, Jo - ring me if it is',
    'Is the shop open Sunday?\nBest, Jo (and remind Sam to lock up)',
    'Two jobs today\n- Rename a.txt to b.txt\n- Chase Acme about the unpaid invoice',
    'Is the van free Tuesday?\nIf so, ring Dave on 07700 900123',
    'What is 20% of 150? Also 15% of 80 and 10% of 60.',
    'Delete old.txt. Who works here?',
    'Who is on call Saturday? (And who is the backup?)',
    'Who is on call Saturday? Just remind Sam about it',
  ])('keeps a request beside context, data or a sign-off: %s', (input) => {
    expect(requestedActions(input).length).toBeGreaterThanOrEqual(2);
  });

  it('reads a path after a verb as its object, not a noun cue, and a later delivery of a sentence with its own message', () => {
    expect(requestedActions('Summarise notes.txt and send it to the team.').map((a) => [a.verb, a.messageFrom ?? null])).toEqual([
      ['summarise', null],
      ['send', 1],
    ]);
    const [, tell] = requestedActions('Write "Lot B is closed" to /tmp/x/notice.txt, then let reception know the notice is up.');
    expect(tell).toMatchObject({ kind: 'delivery', message: 'the notice is up' });
    // "know how it went", "know when it is done", "the staff that asked" say what the earlier work finds, or nothing.
    for (const input of [
      'Check that backup.log shows no errors and let Ana know how it went.',
      'Write "Closed Friday" to notice.txt and let reception know when it is done.',
      'Add "Closed Friday" to notice.txt and tell the staff that asked.',
    ])
      expect(requestedActions(input)[1]).toMatchObject({ kind: 'delivery', messageFrom: 1 });
    // A path's own noun cue comes after it: "Release notes.md has everything" is a statement.
    expect(requestedActions('Summarise the changes for the team. Release notes.md has everything.')).toHaveLength(1);
  });

  it('reads only a past participle after "be" as an effect asked in the passive', () => {
    expect(requestedActions('Any chance old.txt could be deleted when you get a sec?').map((a) => a.kind)).toEqual(['unsupported']);
    expect(requestedActions('The password must be reset.').map((a) => a.kind)).toEqual(['unsupported']);
    expect(requestedActions('When will the shop be open again?').map((a) => a.kind)).toEqual(['analysis']);
  });

  it('still reads the bare passive and the imperative of the same verbs as requests', () => {
    expect(requestedActions('The database must be restarted. Update the wiki.').map((a) => [a.kind, a.verb])).toEqual([
      ['unsupported', 'restart'],
      ['unsupported', 'update'],
    ]);
  });
});

describe('requestedActions: material a run was never given', () => {
  it('marks an action on something attached as missing its material; a run takes text only', () => {
    expect(requestedActions('Summarise the attached quarterly report. List the risks of each option.')).toEqual([
      action(1, 'Summarise the attached quarterly report', 'analysis', 'summarise', 0, 'attached'),
      action(2, 'List the risks of each option', 'analysis', 'list', 1),
    ]);
  });

  it('leaves text that is in the input alone', () => {
    expect(requestedActions('Summarise this: the outage began at 09:12 and ended at 09:40.').every((a) => a.missing === null)).toBe(true);
  });
});

describe('planLocally', () => {
  const covered = (steps: { covers?: number[] }[]) => steps.flatMap((s) => s.covers ?? []);
  const gapActions = (plan: ReturnType<typeof planLocally>) => (plan.gaps ?? []).map((g) => g.action);

  it('prepares every analysis action with key-phrase extraction in at most 8 steps, performs none of them: each is a gap saying a model would', () => {
    const input = Array.from({ length: 20 }, (_, i) => `Review point ${i + 1}.`).join(' ');
    const actions = requestedActions(input);
    expect(actions.map((a) => a.kind)).toEqual(Array(20).fill('analysis'));

    const plan = planLocally(input, false);
    expect(plan.steps).toHaveLength(7); // groups of ceil(20 / 8) = 3
    expect(plan.steps.map((s) => [s.id, s.tool, s.effect])).toEqual(plan.steps.map((_, i) => [`step_${i + 1}`, 'text_analysis', 'read']));
    expect(covered(plan.steps)).toEqual([]);
    expect(plan.steps.map((s) => s.scope).join('\n')).toBe(actions.map((a) => a.clause).join('\n'));
    expect(gapActions(plan)).toEqual(actions.map((a) => a.n));
    expect(plan.gaps![0]!.reason).toMatch(
      /^needs a model to review, and this run's provider is local \(no model\)\. Key-phrase extraction \(step_1\) prepared the text/,
    );
    expect(plan.gaps![19]!.reason).toContain('(step_7)');
  });

  it('plans one preparation step per analysis action when there are at most 8', () => {
    const plan = planLocally('Review the contract. List the risks. What are the open questions?', false);
    expect(plan.steps.map((s) => [s.tool, s.covers, s.scope])).toEqual([
      ['text_analysis', [], 'Review the contract'],
      ['text_analysis', [], 'List the risks'],
      ['text_analysis', [], 'What are the open questions?'],
    ]);
    expect(gapActions(plan)).toEqual([1, 2, 3]);
  });

  it('plans one external webhook_delivery step for the delivery action, which it covers', () => {
    const plan = planLocally('Summarise the incident timeline and tell the on-call channel that the incident is closed.', false);
    expect(plan.steps).toEqual([
      expect.objectContaining({ id: 'step_1', tool: 'text_analysis', effect: 'read', covers: [], scope: 'Summarise the incident timeline' }),
      expect.objectContaining({ id: 'step_2', tool: 'webhook_delivery', effect: 'external', covers: [2], arguments: { message: 'the incident is closed' } }),
    ]);
    expect(gapActions(plan)).toEqual([1]);
  });

  it('plans one webhook_delivery step per delivery, each with its own message, and no analysis step when none is asked', () => {
    const plan = planLocally('Tell finance that the audit passed. Post "audit passed" to the team channel.', false);
    expect(plan.steps.map((s) => [s.id, s.tool, s.effect, s.covers, s.arguments])).toEqual([
      ['step_1', 'webhook_delivery', 'external', [1], { message: 'the audit passed' }],
      ['step_2', 'webhook_delivery', 'external', [2], { message: 'audit passed' }],
    ]);
    expect(plan.gaps).toEqual([]);
  });

  it('sends nothing without a model when the message is to be the result of work', () => {
    const plan = planLocally('Summarise these notes and post the summary to the team channel: the audit passed, June is next.', false);
    expect(plan.steps.map((s) => s.tool)).toEqual(['text_analysis']);
    expect(plan.gaps!.map((g) => g.action)).toEqual([1, 2]);
    expect(plan.gaps![1]!.reason).toMatch(/^sends the result of action 1, which needs a model/);
  });

  it('turns unsupported actions into gaps, with no step covering them', () => {
    const plan = planLocally('Summarise the notes and delete the drafts. Pay the vendor invoice.', false);
    expect(plan.steps.map((s) => [s.tool, s.covers])).toEqual([['text_analysis', []]]);
    expect(plan.gaps!.slice(1)).toEqual([
      { action: 2, reason: 'asks to delete, and no configured tool can do that; it was not done' },
      { action: 3, reason: 'asks to pay, and no configured tool can do that; it was not done' },
    ]);
  });

  it('says an action on an attachment was given nothing to work on', () => {
    const plan = planLocally('Summarise the attached quarterly report.', false);
    expect(plan.gaps).toEqual([{ action: 1, reason: expect.stringMatching(/^works on something attached, which the run was not given/) }]);
  });

  it('plans no step at all when every action is unsupported', () => {
    const plan = planLocally('Delete the old S3 buckets and pay the vendor invoice.', false);
    expect(plan.steps).toEqual([]);
    expect(gapActions(plan)).toEqual([1, 2]);
  });

  it('with memory on, recalls first (covering no action) and numbers the other steps after it', () => {
    const input = 'Summarise the incident timeline and tell the on-call channel that the incident is closed.';
    const plan = planLocally(input, true);
    expect(plan.steps.map((s) => [s.id, s.tool, s.effect, s.covers])).toEqual([
      ['step_1', 'memory_recall', 'read', []],
      ['step_2', 'text_analysis', 'read', []],
      ['step_3', 'webhook_delivery', 'external', [2]],
    ]);
    expect(plan.gaps![0]!.reason).toContain('(step_2)');
    expect(plan.steps[0]!.scope).not.toBe('');
    expect(planLocally(input, false).steps.map((s) => s.tool)).toEqual(['text_analysis', 'webhook_delivery']);
  });
});

describe('requestedActions: what a delivery carries and what material is missing', () => {
  const read = (input: string) => requestedActions(input).map(({ kind, message, messageFrom, missing }) => ({ kind, message, messageFrom, missing }));

  it.each([
    ['Tell the support team that the outage on the billing page is resolved.', 'the outage on the billing page is resolved'],
    ['Let the sales team know the new price list is live.', 'the new price list is live'],
    ['Post to the support channel: tickets are back to normal.', 'tickets are back to normal'],
    ["Send a message to the team channel saying 'lunch is at noon'.", 'lunch is at noon'],
    ['Post "deploy done" to the ops channel.', 'deploy done'],
    // The message is not read as more requests: "deploys" here is what is said, not an action.
    ['Alert the on-call channel that disk usage is at 90% and deploy is blocked.', 'disk usage is at 90% and deploy is blocked'],
  ])('copies the message a delivery introduces from the request: %s', (input, message) => {
    expect(read(input)).toEqual([{ kind: 'delivery', message, messageFrom: undefined, missing: null }]);
  });

  it('sends the result of the earlier action when the request sends "it" or "the summary"', () => {
    expect(read('Summarise these notes and post the summary to the team channel: the audit passed, June is next.')).toEqual([
      { kind: 'analysis', message: undefined, messageFrom: undefined, missing: null },
      { kind: 'delivery', message: undefined, messageFrom: 1, missing: null },
    ]);
  });

  it.each([
    ['Send the release notes to the team channel.', 'the release notes'],
    ['Summarise our Q3 vendor contracts.', 'our Q3 vendor contracts'],
    ['Forward the quarterly board report to finance.', 'the quarterly board report'],
    ['Review the attached file.', 'attached'],
  ])('names material the run was never given: %s', (input, missing) => {
    expect(read(input)[0]!.missing).toBe(missing);
  });

  it('reads a colon followed by more requests as requests, not as material', () => {
    expect(read('Review our Q3 vendor contracts: summarise the renewal dates and flag any auto-renewal clauses.').map((a) => a.missing)).toEqual([
      'our Q3 vendor contracts',
      'our Q3 vendor contracts',
    ]);
  });

  it('counts material as given when the input holds it, or the run recalls the tenant memory', () => {
    expect(read('Summarise the report: revenue rose 4% and costs fell.')[0]!.missing).toBeNull();
    expect(read('Summarise the notes. The audit passed. June is next.')[0]!.missing).toBeNull();
    expect(requestedActions('Summarise the quarterly board report.', { memory: true })[0]!.missing).toBeNull();
    // An attachment is never given, memory or not.
    expect(requestedActions('Summarise the attached report.', { memory: true })[0]!.missing).toBe('attached');
  });

  it('leaves a question that names no material alone', () => {
    expect(read('Explain the difference between TCP and UDP.')[0]!.missing).toBeNull();
  });
});

describe('requestedActions: an effect verb that asks only for writing', () => {
  it.each([
    ['Create a summary of this text: the pilot ran for six weeks and users liked it.', 'analysis'],
    ['Order these tasks by urgency: fix login, update docs, ship release.', 'analysis'],
    // The same verbs on the world stay effects no tool performs.
    ['Order twenty boxes of printer paper from our usual supplier.', 'unsupported'],
    ['Create a Jira ticket for the login bug.', 'unsupported'],
    ['Email a summary to Bob.', 'unsupported'],
    ['Order pizza by 6pm.', 'unsupported'],
  ])('%s reads as %s', (input, kind) => {
    expect(requestedActions(input)[0]!.kind).toBe(kind);
  });
});
