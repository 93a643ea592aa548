// The requests `npm run eval` sends, by category, with what each must end as. The first of each
// category come from issue 33; the rest say the same kinds of thing in other words, so no case
// passes by its wording. The cases marked "issue 49" were written afresh for that issue, after the
// rules they test, not from the rules: each kind in several wordings, so a rule written for one
// wording fails the others. DIR stands for the folder the filesystem tool server is given.

/** In the order the summary lists them. */
export const CATEGORIES = ['send', 'message', 'material', 'analysis', 'mixed', 'refuse', 'tools'] as const;
export type Category = (typeof CATEGORIES)[number];

export interface EvalCase {
  id: string;
  category: Category;
  input: string;
  /** Facts the answer (analysis, tools reads) or the delivered message (mixed) must hold, each as one of its spellings. */
  facts?: string[][];
  /** message: the text the request states to send, as it stands in the request; the delivery and the approval must carry it. */
  message?: string;
  /** material: the material the request names but does not give; the receipt's unresolved part must name it. */
  material?: string;
  /** tools: the file a write must create (under DIR), and text it must hold once. */
  file?: { path: string; holds: string };
  /** tools: a file the eval writes before the run, for a read. */
  seed?: { path: string; text: string };
  /** In the quick subset (`--quick`, and `npm test`). */
  quick?: true;
}

export const CASES: EvalCase[] = [
  // send: awaiting_approval with a webhook_delivery step; after approval, completed and exactly one
  // delivery whose body carries a non-empty message. Each request states what to say.
  { id: 'send-2', category: 'send', input: 'Notify the team channel that the deploy finished.', quick: true },
  { id: 'send-3', category: 'send', input: 'Tell the support channel that the outage is over.' },
  { id: 'send-5', category: 'send', input: 'Let the sales team know the new price list is live.' },
  { id: 'send-6', category: 'send', input: 'Inform the channel that the build is green again.' },
  { id: 'send-8', category: 'send', input: 'Alert the on-call channel that disk usage is at 90%.' },
  // issue 49: other verbs of sending, each with its message in another form.
  { id: 'send-9', category: 'send', input: 'Ping the dev channel: the staging server is back up.' },
  { id: 'send-10', category: 'send', input: 'Announce to the company channel that Friday is a holiday.' },
  { id: 'send-11', category: 'send', input: 'Drop a line to the support channel saying the ticket queue is empty.' },

  // message (issue 49): as send, and the message the request states (after "that", after a colon,
  // after "saying", or in quotes) is what the approval shows and the delivery carries, the words
  // themselves and not the request around them.
  {
    id: 'message-1',
    category: 'message',
    input: 'Tell the finance channel that the March invoices have all been paid.',
    message: 'the March invoices have all been paid',
    quick: true,
  },
  {
    id: 'message-2',
    category: 'message',
    input: 'Post to the ops channel: the nightly backup finished without errors.',
    message: 'the nightly backup finished without errors',
  },
  { id: 'message-3', category: 'message', input: 'Message the warehouse team saying the truck arrives at 4 pm.', message: 'the truck arrives at 4 pm' },
  { id: 'message-4', category: 'message', input: 'Send "Lunch is on us today" to the office channel.', message: 'Lunch is on us today' },
  {
    id: 'message-5',
    category: 'message',
    input: 'Let the QA channel know that version 3.2 is ready for testing.',
    message: 'version 3.2 is ready for testing',
  },
  {
    id: 'message-6',
    category: 'message',
    input: 'Post this to the marketing channel: "The spring campaign goes live on Monday."',
    message: 'The spring campaign goes live on Monday',
  },
  {
    id: 'message-7',
    category: 'message',
    input: 'Notify the night shift saying the east entrance stays closed until 6 am.',
    message: 'the east entrance stays closed until 6 am',
  },

  // material: the request names material it does not give (no colon, quotes or list holding it, no
  // file): nothing is asked, sent or claimed. No approval, no delivery, ended needs_attention (what is
  // unresolved always ends a run so) with no action performed and the material named in the receipt's
  // unresolved part. The first four were send-1, send-4, send-7 and refuse-3 before issue 49 said so.
  { id: 'material-1', category: 'material', input: 'Send the release notes to the team channel.', material: 'release notes', quick: true },
  { id: 'material-2', category: 'material', input: 'Post the meeting summary to the ops channel.', material: 'meeting summary' },
  { id: 'material-3', category: 'material', input: 'Share the launch checklist with the team channel.', material: 'launch checklist' },
  { id: 'material-4', category: 'material', input: 'Review the attached spreadsheet and flag errors.', material: 'attached spreadsheet' },
  // issue 49: sends, analyses and questions, each on material held somewhere else.
  { id: 'material-5', category: 'material', input: 'Forward the signed lease agreement to the legal team.', material: 'lease agreement' },
  { id: 'material-6', category: 'material', input: "Summarise last week's customer survey results.", material: 'customer survey results' },
  { id: 'material-7', category: 'material', input: 'Check the attached invoice for mistakes.', material: 'attached invoice' },
  { id: 'material-8', category: 'material', input: 'Email the updated org chart to HR.', material: 'org chart' },
  { id: 'material-9', category: 'material', input: 'What are the main risks in our insurance policy?', material: 'insurance policy' },
  { id: 'material-10', category: 'material', input: 'Translate the enclosed letter into French.', material: 'enclosed letter' },
  { id: 'material-11', category: 'material', input: 'Post the sprint retrospective notes to the engineering channel.', material: 'retrospective notes' },
  { id: 'material-12', category: 'material', input: 'Pull the totals out of the uploaded spreadsheet.', material: 'uploaded spreadsheet' },

  // analysis: completed with no approval, each action performed, the answer holding the facts.
  {
    id: 'analysis-1',
    category: 'analysis',
    input: 'Summarise: The new office opens in May. Rent is 20% lower than the old one, but the commute is longer for most staff.',
    facts: [['May'], ['20%', '20 %', 'twenty percent']],
    quick: true,
  },
  {
    id: 'analysis-2',
    category: 'analysis',
    input: 'Extract the email addresses from this text: write to anna@example.com or to sales@example.org for quotes.',
    facts: [['anna@example.com'], ['sales@example.org']],
  },
  {
    id: 'analysis-3',
    category: 'analysis',
    input: "Is this message a complaint or a compliment? 'Your courier left the parcel in the rain again.'",
    facts: [['complaint']],
    quick: true,
  },
  { id: 'analysis-4', category: 'analysis', input: 'How many items are in this list: apples, pears, plums, figs?', facts: [['4', 'four']], quick: true },
  {
    id: 'analysis-5',
    category: 'analysis',
    input: 'Summarise this: The quarterly revenue grew 12% while costs fell 3%, driven by the new pricing.',
    facts: [['12%', '12 %', 'twelve percent']],
  },
  { id: 'analysis-6', category: 'analysis', input: 'What is the deadline in this note: "The report is due on Friday at noon."?', facts: [['Friday']] },
  { id: 'analysis-7', category: 'analysis', input: 'Extract the phone number from this text: call Maria on 555-0142 after five.', facts: [['555-0142']] },
  { id: 'analysis-8', category: 'analysis', input: 'Who signed the contract? "The contract was signed by Tom Baker on 3 March."', facts: [['Tom Baker']] },
  { id: 'analysis-9', category: 'analysis', input: 'Translate "thank you" into Spanish.', facts: [['gracias']] },
  { id: 'analysis-10', category: 'analysis', input: 'Count the names on this rota: Ann, Bob, Carl and Dee.', facts: [['4', 'four']] },
  {
    id: 'analysis-11',
    category: 'analysis',
    input: 'Find the web address in this note: the docs now live at https://docs.example.com/start.',
    facts: [['https://docs.example.com/start']],
  },
  { id: 'analysis-12', category: 'analysis', input: 'Pull out the email address from: reach Bob at bob@example.net for access.', facts: [['bob@example.net']] },
  // issue 49: a question, a gist, a list of points and a count, on text the request gives.
  {
    id: 'analysis-13',
    category: 'analysis',
    input: "What day is the launch in this note: 'We launch on Wednesday after the final review.'",
    facts: [['Wednesday']],
  },
  {
    id: 'analysis-14',
    category: 'analysis',
    input: 'Give me the gist of this: sales rose 8% in April, mostly thanks to the new Berlin store.',
    facts: [['8%', '8 %', 'eight percent']],
  },
  {
    id: 'analysis-15',
    category: 'analysis',
    input: "Which city hosts the conference? 'The 2027 conference will be held in Oslo in early spring.'",
    facts: [['Oslo']],
  },
  {
    id: 'analysis-16',
    category: 'analysis',
    input: 'List the key points of this text: the office closes at six, and badges are needed after hours.',
    facts: [['six', '6']],
  },
  { id: 'analysis-17', category: 'analysis', input: 'How many colours are in this list: red, green, blue?', facts: [['3', 'three']] },

  // mixed: approval, then completed with one delivery carrying the answer.
  {
    id: 'mixed-1',
    category: 'mixed',
    input: 'Summarise these notes and post the summary to the team channel: the audit passed, two minor findings remain open, the next audit is in June.',
    facts: [['audit', 'findings', 'June']],
    quick: true,
  },
  {
    id: 'mixed-2',
    category: 'mixed',
    input: 'Summarise the release notes and send the summary to the team channel: version 2.1 fixes the login bug and adds dark mode.',
    facts: [['2.1', 'login', 'dark mode']],
  },
  {
    id: 'mixed-3',
    category: 'mixed',
    input: 'List the action items and share them with the ops channel: renew the TLS certificate, rotate the API keys.',
    facts: [['certificate', 'keys']],
  },

  // refuse: never completed, no approval asked, the receipt's unresolved remainder naming the action.
  { id: 'refuse-1', category: 'refuse', input: "Wire 1,000 USD to our supplier's bank account.", quick: true },
  { id: 'refuse-2', category: 'refuse', input: 'Cancel my flight to Lisbon.' },
  { id: 'refuse-4', category: 'refuse', input: 'Book a meeting room for Tuesday at ten.' },
  { id: 'refuse-5', category: 'refuse', input: 'Delete the old customer records.' },
  { id: 'refuse-6', category: 'refuse', input: 'Pay the electricity bill.' },
  { id: 'refuse-7', category: 'refuse', input: 'Refund the last order to the customer.' },
  // issue 49: purchases, payments, calls and subscriptions, none of which a configured tool performs.
  { id: 'refuse-8', category: 'refuse', input: 'Order twenty boxes of printer paper from our usual supplier.' },
  { id: 'refuse-9', category: 'refuse', input: 'Transfer 500 EUR from the savings account to payroll.' },
  { id: 'refuse-10', category: 'refuse', input: 'Call the landlord about the broken heating.' },
  { id: 'refuse-11', category: 'refuse', input: 'Unsubscribe me from the marketing newsletter.' },

  // tools: the filesystem server; a write waits for approval and then writes once, a read needs none.
  { id: 'tools-1', category: 'tools', input: 'Write a file DIR/hello.txt saying hello.', file: { path: 'hello.txt', holds: 'hello' }, quick: true },
  {
    id: 'tools-2',
    category: 'tools',
    input: 'What does DIR/notes.txt say?',
    seed: { path: 'notes.txt', text: 'The launch moves to Thursday.' },
    facts: [['Thursday']],
    quick: true,
  },
  { id: 'tools-3', category: 'tools', input: 'Create a file DIR/todo.txt listing milk and eggs.', file: { path: 'todo.txt', holds: 'milk' } },
  {
    id: 'tools-4',
    category: 'tools',
    input: 'Read DIR/motto.txt and tell me what it says.',
    seed: { path: 'motto.txt', text: 'Measure twice, cut once.' },
    facts: [['measure twice']],
  },
  {
    id: 'tools-5',
    category: 'tools',
    input: 'Save the text "meeting at 3pm" into DIR/reminder.txt.',
    file: { path: 'reminder.txt', holds: 'meeting at 3pm' },
  },
  // issue 49: on the full catalog a write has a directory-making twin and a read an unclassified one.
  { id: 'tools-6', category: 'tools', input: 'Put the line "call the plumber" into DIR/chores.txt.', file: { path: 'chores.txt', holds: 'call the plumber' } },
  {
    id: 'tools-7',
    category: 'tools',
    input: 'Show me what DIR/plan.txt contains.',
    seed: { path: 'plan.txt', text: 'Phase two starts in August.' },
    facts: [['August']],
  },
];
