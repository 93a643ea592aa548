// Unit tests: the request's own plan schema (one entry per action, each a union of the options it
// is offered), the options and shortlist an action gets, text arguments limited to the request,
// how an answer's grounding is measured, and the receipt of a run that ended early.
import Ajv from 'ajv';
import { describe, expect, it } from 'vitest';
import { answerGrounding, betterGrounded, groundedShare, inventedValues } from '../domain/agent/answer-grounding.ts';
import { boundedArguments, exactPlanSchema, maxJsonTokens } from '../domain/agent/exact-plan.ts';
import { actionOptions } from '../domain/agent/plan-options.ts';
import { namesPath, requestSpans, takesPath, withoutFolders, withSpanStrings } from '../domain/agent/request-spans.ts';
import { madePaths, withPathOrder } from '../activities/embedded/path-order.ts';
import { requestedActions } from '../domain/planning/requested-actions.ts';
import { endingReceipt } from '../domain/runs/ending-receipt.ts';
import { sentencesOf } from '../domain/text/analyze.ts';
import type { ServerToolCatalog } from '../domain/tools.ts';

const files: ServerToolCatalog = {
  files__read_text_file: {
    server: 'files',
    tool: 'read_text_file',
    effect: 'read',
    description: 'Read a file.',
    parameters: { type: 'object', required: ['path'], properties: { path: { type: 'string' }, head: { type: 'number' } } },
  },
  files__write_file: {
    server: 'files',
    tool: 'write_file',
    effect: 'external',
    description: 'Write a file.',
    parameters: { type: 'object', required: ['path', 'content'], properties: { path: { type: 'string' }, content: { type: 'string' } } },
  },
  files__move_file: {
    server: 'files',
    tool: 'move_file',
    effect: 'external',
    description: 'Move a file.',
    parameters: { type: 'object', required: ['source', 'destination'], properties: { source: { type: 'string' }, destination: { type: 'string' } } },
  },
};

const ajv = new Ajv.default({ strict: false });

describe('the per-request plan schema', () => {
  const actions = requestedActions('Summarise the outage and send the summary to the team channel. Pay the invoice.');
  const options = actionOptions(actions, {}, false);

  it('offers each action only what can carry it out: an answer or an exact analysis tool for analysis, the delivery tool for a delivery, unresolved always', () => {
    expect(options.map((o) => o.options)).toEqual([
      ['answer', 'count_list_items', 'find_contact_details', 'unresolved'],
      ['webhook_delivery', 'unresolved'],
      ['unresolved'],
    ]);
  });

  it('has one required entry per action, so no action can be skipped, and admits only the offered choices', () => {
    const validate = ajv.compile(exactPlanSchema(options, {}, 'anyOf'));
    const plan = {
      action_1: { do: 'answer' },
      action_2: { do: 'webhook_delivery', arguments: {}, purpose: 'Send it.' },
      action_3: { do: 'unresolved', reason: 'No tool pays.' },
    };
    expect(validate(plan)).toBe(true);
    expect(validate({ action_1: plan.action_1, action_2: plan.action_2 })).toBe(false);
    expect(validate({ ...plan, action_1: { do: 'webhook_delivery', arguments: {}, purpose: 'x' } })).toBe(false);
    expect(validate({ ...plan, action_3: { do: 'answer' } })).toBe(false);
    expect(validate({ ...plan, action_4: { do: 'answer' } })).toBe(false);
  });

  it("holds a tool's arguments to its own required properties, bounded, and sizes the budget to fit any plan", () => {
    const bounded = boundedArguments(files.files__write_file!.parameters)!;
    expect(bounded).toEqual({
      type: 'object',
      properties: { path: { type: 'string', minLength: 1, maxLength: 400 }, content: { type: 'string', minLength: 1, maxLength: 400 } },
      required: ['path', 'content'],
      additionalProperties: false,
    });
    expect(boundedArguments(files.files__read_text_file!.parameters)).toMatchObject({ properties: { path: {} }, required: ['path'] });
    expect(boundedArguments({ $ref: '#/x' })).toBeNull();
    const schema = exactPlanSchema(actionOptions(requestedActions('Write a file /tmp/a.txt saying hi.'), files, false), files);
    const longest = JSON.stringify({
      action_1: { do: 'files__write_file', arguments: { path: 'p'.repeat(400), content: 'c'.repeat(400) }, purpose: 'w'.repeat(160) },
    });
    expect(maxJsonTokens(schema)).toBeGreaterThanOrEqual(longest.length);
  });
});

describe('the shortlist a small model is shown', () => {
  const optionsOf = (input: string) => actionOptions(requestedActions(input), files, true).map((o) => o.options);

  it('keeps the server tools whose names fit the action: its verb, a verb of the same kind, or a shared word', () => {
    expect(optionsOf('Write a file /tmp/a/hello.txt saying hello.')).toEqual([['answer', 'files__write_file', 'unresolved']]);
    expect(optionsOf('Save the text "hi" into /tmp/a/hello.txt.')).toEqual([['answer', 'files__write_file', 'unresolved']]);
    expect(optionsOf('What does /tmp/a/notes.txt say?')).toEqual([['answer', 'files__read_text_file', 'unresolved']]);
    expect(optionsOf('Summarise: the office opens in May.')).toEqual([['answer', 'unresolved']]);
    // Words of the material after a colon, or a version number, do not make a tool fit ("write" here).
    expect(optionsOf('Extract the email addresses from this text: write to anna@example.com.')).toEqual([['answer', 'find_contact_details', 'unresolved']]);
  });

  it('records what it narrowed, and gives an action on material never given only unresolved', () => {
    const [narrowed] = actionOptions(requestedActions('Summarise: the office opens in May.'), files, true);
    expect(narrowed!.narrowed).toMatch(/tool\(s\)/);
    const [attached] = actionOptions(requestedActions('Review the attached spreadsheet.'), files, true);
    expect(attached).toMatchObject({ options: ['unresolved'], narrowed: expect.stringMatching(/attached/) });
  });
});

describe('text arguments copied from the request', () => {
  it('lists runs of its words as written, paths whole', () => {
    const spans = requestSpans('Save the text "meeting at 3pm" into /tmp/x/reminder.txt.');
    expect(spans).toContain('meeting at 3pm');
    expect(spans).toContain('/tmp/x/reminder.txt');
    expect(spans).not.toContain('/tmp/x/reminder.txt.');
  });

  it('gives a path argument only the paths, any other text argument the rest, and none when the request states nothing', () => {
    const spans = requestSpans('Write a file /tmp/x/hello.txt saying hello.');
    const schema = withSpanStrings(boundedArguments(files.files__write_file!.parameters)!, spans)!;
    const props = schema.properties as Record<string, { enum: string[] }>;
    expect(props.path!.enum).toEqual(['/tmp/x/hello.txt']);
    expect(props.content!.enum).toContain('hello');
    expect(props.content!.enum).not.toContain('/tmp/x/hello.txt');
    expect(withSpanStrings(boundedArguments(files.files__read_text_file!.parameters)!, requestSpans('Read my notes.'))).toBeNull();
  });

  it('offers a tool that makes something the new path, not the folder it goes in', () => {
    const paths = (input: string, folders = true) => madePaths(requestSpans(input), input, folders).filter((s) => s.includes('/') && !s.includes(' '));
    expect(paths('Could you create a folder called receipts-2024-25 in /srv/share/?')).toEqual(['/srv/share/receipts-2024-25']);
    expect(paths('Create an empty folder at /srv/share/receipts-2025.')).toEqual(['/srv/share/receipts-2025']);
    // A folder tool is not offered the folder that is there; a file a write goes into is no folder.
    expect(paths('Create a folder in /srv/share for receipts')).toEqual([]);
    expect(paths('Write "Fire drill at 3pm" into /srv/notice.txt.', false)).toEqual(['/srv/notice.txt']);
    expect(paths('Make a folder in /srv/clients named after the new client.')).toEqual([]);
  });

  it('holds a move to the two paths of its sentence in the order written', () => {
    const move = { type: 'object', properties: { source: { type: 'string' }, destination: { type: 'string' } } };
    const ordered = (clause: string) => {
      const p = withPathOrder(move, clause)!.properties as Record<string, { enum?: string[] }>;
      return [p.source!.enum, p.destination!.enum];
    };
    expect(ordered('rename /srv/scan_0931.txt to /srv/lease-agreement.txt')).toEqual([['/srv/scan_0931.txt'], ['/srv/lease-agreement.txt']]);
    expect(ordered('Rename /srv/docs/old.txt to new.txt')).toEqual([['/srv/docs/old.txt'], ['/srv/docs/new.txt']]);
    // Words between the file and the link: the small model had swapped these two.
    expect(ordered('Could you rename draft_letter.txt in the letters folder to final_letter.txt?')).toEqual([['draft_letter.txt'], ['final_letter.txt']]);
    // A folder named as where things are holds the bare names; a path inside a longer one is not that path.
    expect(ordered('In /srv/share, move a.txt to b.txt')).toEqual([['/srv/share/a.txt'], ['/srv/share/b.txt']]);
    expect(ordered('Rename a.txt to b.txt in /srv/docs')).toEqual([['/srv/docs/a.txt'], ['/srv/docs/b.txt']]);
    expect(ordered('Move the file a.txt from /srv/in to /srv/out')).toEqual([['/srv/in/a.txt'], ['/srv/out/a.txt']]);
    expect(ordered('Rename old-notes.txt to notes.txt')).toEqual([['old-notes.txt'], ['notes.txt']]);
    expect(ordered('Rename /srv/share/report.txt.bak to /srv/share/report.txt')).toEqual([['/srv/share/report.txt.bak'], ['/srv/share/report.txt']]);
    // Into a folder, what moves keeps its name.
    expect(ordered('move the receipt (inbox/receipt-0311.txt) into the receipts/2025-03 folder')).toEqual([
      ['inbox/receipt-0311.txt'],
      ['receipts/2025-03/receipt-0311.txt'],
    ]);
    expect(ordered('Move old-menu.txt into a folder called archive.')).toEqual([['old-menu.txt'], ['archive/old-menu.txt']]);
    expect(ordered('Move /srv/share/old-menu.txt into a folder called archive.')).toEqual([['/srv/share/old-menu.txt'], ['/srv/share/archive/old-menu.txt']]);
    expect(ordered('Please move report.pdf to the /srv/archive folder')).toEqual([['report.pdf'], ['/srv/archive/report.pdf']]);
    expect(ordered('Move /tmp/share/inbox/scan.pdf into /tmp/share')).toEqual([['/tmp/share/inbox/scan.pdf'], ['/tmp/share/scan.pdf']]);
    expect(ordered('move /srv/reports into /srv/archive')).toEqual([['/srv/reports'], ['/srv/archive/reports']]);
    expect(ordered('please move notes.md into the archive folder (/srv/archive) and keep the same file name')).toEqual([
      ['notes.md'],
      ['/srv/archive/notes.md'],
    ]);
    // No link after a path: the grammar's spans stand.
    expect(withPathOrder(move, 'Move into /srv/archive the file scan.pdf')).toBe(move);
    expect(withPathOrder(move, 'Restore notes.txt from notes.bak')).toBe(move);
    // Several files, several places, or nowhere named: no one call does it ("into it" had moved q1 onto q2).
    for (const clause of [
      'move a.txt, b.txt and c.txt to /srv/archive',
      'make a folder called 2024-reports and move q1-report.txt and q2-report.txt into it',
      'Move a.txt to the archive',
      'copy a.txt to b.txt and c.txt',
      'Move all the PDFs in /srv/in to /srv/out',
      // Words after the link that are not a place: the words do not say where it goes.
      'copy a.txt to the same folder as b.txt',
      'Use b.txt as the new name for a.txt',
      'I want report.txt to be replaced by draft.txt',
      'Move /srv/inbox/a.txt into the archive folder in /srv/share',
      'Move a.txt, which we need to keep, into /srv/archive',
    ])
      expect(withPathOrder(move, clause)).toBeNull();
  });

  it('offers a read of one file the files a request names, not the folder they are in', () => {
    const spans = requestSpans('What does timetable.csv in /srv/share say about Tuesday? The folder /srv/share has more.');
    expect(withoutFolders(spans).filter((s) => !s.includes(' ') && (s.includes('/') || s.includes('.csv')))).toEqual(['timetable.csv']);
    // A request that names only a folder keeps it: a read of that folder is all it can mean.
    expect(withoutFolders(requestSpans('What is in /srv/share?'))).toContain('/srv/share');
  });

  it('reads a property named as a path at its end (repo_path, targetDir) as one, and tells whether a request or a tool has a path', () => {
    const spans = requestSpans('Commit onboarding.md in /tmp/x/repo with the message "Add checklist".');
    const commit = { type: 'object', properties: { repo_path: { type: 'string' }, message: { type: 'string' } }, required: ['repo_path', 'message'] };
    const props = withSpanStrings(commit, spans)!.properties as Record<string, { enum: string[] }>;
    expect(props.repo_path!.enum).toEqual(['onboarding.md', '/tmp/x/repo']);
    expect(props.message!.enum).not.toContain('/tmp/x/repo');
    expect(takesPath(commit)).toBe(true);
    expect(takesPath({ type: 'object', properties: { entityNames: { type: 'array', items: { type: 'string' } } } })).toBe(false);
    expect(
      takesPath({ type: 'object', properties: { edits: { type: 'array', items: { type: 'object', properties: { targetDir: { type: 'string' } } } } } }),
    ).toBe(true);
    expect(namesPath('Delete /tmp/x/old-draft.txt, please.')).toBe(true);
    expect(namesPath('Delete the old customer records.')).toBe(false);
  });
});

describe('sentences', () => {
  it('end at a full stop, but not after a title or an initial', () => {
    expect(sentencesOf('Remember that our dentist, Dr. Amelia Ross, is closed. Call J. Smith now! Then stop.')).toEqual([
      'Remember that our dentist, Dr. Amelia Ross, is closed.',
      'Call J. Smith now!',
      'Then stop.',
    ]);
  });

  it('keep a quotation whole, and read no requests into it', () => {
    const input = 'Here is a message: "Thanks! Please copy b@x.example; or write to d@x.example." Give me every email address in it.';
    expect(sentencesOf(input)).toEqual([
      'Here is a message: "Thanks! Please copy b@x.example; or write to d@x.example."',
      'Give me every email address in it.',
    ]);
    expect(requestedActions(input).map((a) => a.clause)).toEqual(['Give me every email address in it']);
    // Quotes that do not pair up are no quotation.
    expect(sentencesOf('He said "hi. Then go')).toEqual(['He said "hi.', 'Then go']);
  });
});

describe("an answer's grounding in its text", () => {
  const text = 'Write to anna@example.com or sales@example.org. Rent is 20% lower.';

  it('names the kinds of value an answer holds that the text does not', () => {
    expect(inventedValues('The addresses are anna@example.com and sales@example.org.', text)).toEqual([]);
    expect(inventedValues('Write to matt@example.com; rent is 25% lower.', text)).toEqual(['an email address', 'a percentage', 'a figure']);
    // A figure worked out from the text (a sum, a share) is not the model's to give: the text holds no 34.25.
    expect(inventedValues('The week comes to 34.25 hours.', 'mon 7.5h, tue 8h, wed 6.25h')).toEqual(['a figure']);
    expect(inventedValues('It arrives on 12 June; six boxes.', 'Estimated delivery: 12 June, 6 boxes')).toEqual([]);
    expect(inventedValues('6 of them', 'the office closes at six')).toEqual([]);
  });

  it('measures the share of content words the text holds, and prefers the better grounded answer', () => {
    expect(groundedShare('Rent is lower.', text)).toBe(1);
    expect(groundedShare('A detailed patch with an official link.', text)).toBe(0);
    const good = answerGrounding('Rent is 20% lower.', text);
    const bad = answerGrounding('Rent is 30% lower.', text);
    expect(betterGrounded(good, bad)).toBe(true);
    expect(betterGrounded(bad, good)).toBe(false);
  });
});

describe('the receipt of a run that ended early', () => {
  const input = 'Summarise the outage and send the summary to the team channel.';
  const base = { runId: 'run_x', input, memory: false, results: [], approval: null };

  it('stopped at planning: every sentence unresolved, with why, nothing performed, and no words of the request read', () => {
    const receipt = endingReceipt({
      ...base,
      status: 'needs_attention',
      step: 'plan',
      plan: null,
      failure: { code: 'model_unavailable', message: 'The model did not answer.' },
    });
    expect(receipt.verification_class).toBe('unverified');
    // No plan, no report: nothing is claimed, and the request is not read into actions by words.
    expect(receipt.actions).toEqual([]);
    expect(receipt.unresolved).toEqual([
      'The request was not accounted for: the run stopped before the model reported (model_unavailable).',
      'sentence 1 "Summarise the outage and send the summary to the team channel.": not done.',
      'model_unavailable: The model did not answer.',
    ]);
    expect(receipt.action_boundary.effects_performed).toEqual([]);
  });

  it('rejected: the planned effect was requested, not approved, not performed', () => {
    const plan = {
      planner: 'model',
      answer: [1],
      steps: [{ id: 'step_1', tool: 'webhook_delivery', effect: 'external' as const, purpose: 'Send it.', scope: 'result', covers: [2] }],
    };
    const approval = { state: 'rejected' as const, effects: [], reason: '', deadline: '', decided_at: null, decision_reason: null };
    const receipt = endingReceipt({
      ...base,
      status: 'failed',
      step: 'approval',
      plan,
      approval,
      failure: { code: 'approval_rejected', message: 'Approval rejected.' },
    });
    expect(receipt.action_boundary).toMatchObject({
      effects_requested: ['webhook_delivery:step_1'],
      effects_approved: [],
      effects_performed: [],
      effects_not_performed: ['webhook_delivery:step_1'],
    });
    expect(receipt.unresolved.length).toBeGreaterThanOrEqual(2);
    expect(receipt.unresolved[0]).toMatch(/^action 1 "Summarise the outage": not done; the run ended failed at approval/);
  });
});
