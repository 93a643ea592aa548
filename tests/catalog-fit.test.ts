// Unit tests: which tools of a whole catalog each action may use, on the real reference filesystem
// server's tool list with nothing hidden (14 tools; only read_text_file and write_file classified, as
// `npm run eval -- --catalog full` configures it). The cases are the everyday mistakes issue 49 saw:
// a directory listing for a list of facts, a folder for a file, an unclassified read for a
// classified one, a count of list items for a count of words, a file tool for a message.
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addsToFile, writesWholeText } from '../activities/embedded/adds-to-file.ts';
import { admitsBuiltin } from '../activities/embedded/admits-builtin.ts';
import { planByChoice, rankedOptions } from '../activities/embedded/plan-by-choice.ts';
import { actionOptions } from '../domain/agent/plan-options.ts';
import { requestedActions } from '../domain/planning/requested-actions.ts';
import { type ServerToolCatalog, serverToolName } from '../domain/tools.ts';

const CLASSIFIED: Record<string, 'read' | 'external'> = { read_text_file: 'read', write_file: 'external' };
let catalog: ServerToolCatalog = {};

/** A real MCP server's tools as a catalog, each with the effect `effectOf` gives it (null: external, unclassified). */
async function catalogOf(id: string, server: string, args: string[], effectOf: (tool: string) => 'read' | 'external' | null, env?: Record<string, string>) {
  const client = new Client({ name: 'catalog-fit-test', version: '0' });
  const script = path.resolve(`node_modules/@modelcontextprotocol/${server}/dist/index.js`);
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [script, ...args], ...(env ? { env } : {}) }));
  try {
    const { tools } = await client.listTools();
    return Object.fromEntries(
      tools.map((t) => [
        serverToolName(id, t.name),
        {
          server: id,
          tool: t.name,
          effect: effectOf(t.name) ?? 'external',
          description: t.description ?? '',
          parameters: t.inputSchema as Record<string, unknown>,
          ...(effectOf(t.name) ? {} : { classified: false }),
        },
      ]),
    ) as ServerToolCatalog;
  } finally {
    await client.close();
  }
}

beforeAll(async () => {
  catalog = await catalogOf('files', 'server-filesystem', ['/tmp'], (t) => CLASSIFIED[t] ?? null);
}, 30_000);

afterAll(() => {
  catalog = {};
});

/** The options of each action, for a small model (shortlisted) and for a large one (every fitting tool). */
const offered = (input: string, shortlist = false) => actionOptions(requestedActions(input), catalog, shortlist).map((o) => o.options);
const serverTools = (options: string[]) => options.filter((o) => o.startsWith('files__'));

describe('choices over the whole filesystem catalog', () => {
  it('lists the whole catalog: 14 tools, 12 of them unclassified', () => {
    expect(Object.keys(catalog)).toHaveLength(14);
    expect(Object.values(catalog).filter((t) => t.classified === false)).toHaveLength(12);
  });

  it.each([
    'List the facts in this text: the sky is blue, water is wet, ice floats.',
    'Summarise: the vendor raised prices by 5% and delayed shipping to June.',
    "Is this review positive? 'The app crashes every time I log in.'",
  ])('offers no file tool to analyse text the request gives: %s', (input) => {
    for (const options of offered(input)) expect(serverTools(options)).toEqual([]);
  });

  it('offers the tool classified read, not its unclassified twins, for a read', () => {
    const [options] = offered('What does /tmp/share/plan.md say?');
    expect(options).toContain('files__read_text_file');
    expect(options).not.toContain('files__read_file');
    expect(options).not.toContain('files__read_media_file');
  });

  it("takes the paths of the statements beside a request's only action as its own", () => {
    expect(offered("whose extension is 4417? it's in /tmp/share/phones.txt")[0]).toContain('files__read_text_file');
    expect(offered("whose extension is 4417? it's in /tmp/share/phones.txt", true)[0]).toContain('files__read_text_file');
    // Beside another request, a statement's path is not the question's.
    expect(offered("whose extension is 4417? Summarise the notes. it's in /tmp/share/phones.txt")[0]).not.toContain('files__read_text_file');
  });

  it('offers no folder tool for a file, and no tool whose required path the request does not name', () => {
    const [save] = offered('Save the line "call Bob" into /tmp/share/calls.txt.');
    expect(save).toContain('files__write_file');
    expect(save).not.toContain('files__create_directory');
    // A question is answered by reads only: the unclassified (so external) listing is no answer to it.
    const [folder] = offered('Which files are in /tmp/share/reports/?', true);
    expect(folder).not.toContain('files__list_directory');
    expect(serverTools(folder!).every((t) => catalog[t]!.effect === 'read')).toBe(true);
    const [email] = offered('Email the invoice to accounting.');
    expect(serverTools(email!).filter((t) => catalog[t]!.parameters.required)).toEqual([]);
  });

  it('offers an effect no tool is named for nothing but unresolved, never the nearest tool (issue 63)', () => {
    // The filesystem server has no tool to delete; moving or writing the file is not deleting it.
    const [remove] = offered('Delete /tmp/share/old-draft.txt, we do not need it.', true);
    expect(remove).toEqual(['unresolved']);
    const [create] = offered('Create a file /tmp/share/todo.txt listing milk and eggs.', true);
    expect(create).toContain('files__write_file');
    // A verb is the tool's operation only before any other verb of its name: write_file does not file a tax return.
    const [vat] = offered('Hi, could you file my VAT return for Q2 with HMRC? The figures are in /tmp/share/vat.csv', true);
    expect(vat!.filter((t) => catalog[t]?.effect === 'external')).toEqual([]);
    // On the embedded model, a path the request calls a folder is one, extension or not: no file tool writes it.
    const small = (input: string) =>
      rankedOptions(
        { runId: 'run_x', tenantId: 'ten_x', model: 'svc-workspace', provider: 'embedded', input, attempt: 1 },
        requestedActions(input),
        catalog,
      )[0]!.options;
    const folder = small('Create an empty folder at /tmp/share/receipts-2025.');
    expect(folder).toContain('files__create_directory');
    expect(folder).not.toContain('files__write_file');
    expect(small('Could you create a folder called receipts-2024-25 in /tmp/share?')).not.toContain('files__write_file');
    // Called a folder beside the path only: a file named there, or a move of the folder, keeps its tools.
    expect(small('Create an empty file /tmp/share/receipts/README in the receipts folder.')).toContain('files__write_file');
    expect(small('Move the folder /tmp/share/reports to /tmp/share/archive/reports.')).toContain('files__move_file');
    // A capable model is offered every fitting tool and reads the request itself.
    expect(offered('Create an empty folder at /tmp/share/receipts-2025.')[0]).toContain('files__write_file');
    const [move] = offered('Please rename /tmp/share/a.txt to /tmp/share/b.txt', true);
    expect(move).toContain('files__move_file');
  });

  it('sends a message only through a tool that takes text: no folder listing carries it', () => {
    const [options] = offered('Post this to the marketing channel: "Spring sale starts Monday".');
    expect(options).toEqual(['webhook_delivery', 'unresolved']);
  });

  it("offers the small model the list count only where every item is to be counted, before narrowing by name, so a list's name takes no read's place", () => {
    const small = (input: string) => actionOptions(requestedActions(input), catalog, true, admitsBuiltin(input, requestedActions(input)))[0]!.options;
    // Units of text, or some of the items, not all: counting the list answers another question.
    expect(small('Count the words in this sentence: the quick brown fox jumps.')).not.toContain('count_list_items');
    expect(small('How many of these are vegetarian: pasta, steak, salad?')).not.toContain('count_list_items');
    expect(small('How many dishes of these have nuts: pasta, steak, salad?')).not.toContain('count_list_items');
    expect(small("How many of these haven't paid: Ann, Bob (paid), Cara?")).not.toContain('count_list_items');
    expect(small('How many people on the list live in Leeds? Ann, Bob, Cara')).not.toContain('count_list_items');
    expect(small('How many times does Jonas appear on this list: Jonas, Ann, Jonas?')).not.toContain('count_list_items');
    // A measure is no number of items, and a colon that introduces the request itself gives no list.
    expect(small('How many kg did these hives make: Bev 9.25, Carol 27.5, Dev 6.5?')).not.toContain('count_list_items');
    expect(small("Quick one: how many kg of honey did Bev's and Carol's hives produce?")).not.toContain('count_list_items');
    expect(small("What's the word count of this: the quick brown fox")).not.toContain('count_list_items');
    expect(small("List the ones who haven't paid: Ann, Bob (paid), Cara")).not.toContain('count_list_items');
    // A count the request gives no list for is a read's to answer ("how many elbows are in stock.csv").
    expect(small('How many copper elbows have we got? See /tmp/share/stock.csv')).not.toContain('count_list_items');
    expect(small('How many items are in this list: pens, clips, staples?')).toContain('count_list_items');
    expect(small('List the action items and share them with the ops channel: renew the certificate, rotate the keys.')).toContain('count_list_items');
    // "list" names where the answer is, or what to add to: no count of it is asked, and the read is offered.
    const lookup = small("whats Aisha Khan's extension number? the list is in /tmp/share/staff.csv i think");
    expect(lookup).not.toContain('count_list_items');
    expect(lookup).toContain('files__read_text_file');
    expect(small('pls add this line to the end of the shopping list (/tmp/share/shopping.txt): - oat milk')).not.toContain('count_list_items');
    // How many different names asks another count than every item's ("Jonas" twice).
    expect(small('How many different people signed up? Amy, Jonas, Pedro, Jonas')).not.toContain('count_list_items');
    // Without the adapter's aid, the same request's name narrowing keeps the count.
    expect(
      actionOptions(requestedActions("whats Aisha Khan's extension number? the list is in /tmp/share/staff.csv i think"), catalog, true)[0]!.options,
    ).toContain('count_list_items');
  });

  it('plans an action it cannot do as a gap saying why, however much the whole catalog narrowed', async () => {
    // Its only option is unresolved, so no model is asked: the plan is made without one.
    const noModel = {} as Parameters<typeof planByChoice>[0];
    const context = { runId: 'run_x', tenantId: 'ten_x', model: 'svc-workspace' as const, provider: 'embedded' as const, input: '', attempt: 1 };
    const gapOf = async (input: string) => {
      const proposal = await planByChoice(noModel, { ...context, input }, requestedActions(input), catalog);
      expect(proposal.kind).toBe('planned');
      return proposal.kind === 'planned' ? proposal.plan.gaps![0]!.reason : '';
    };
    expect(await gapOf('Send the release notes to the team channel.')).toMatch(/"the release notes", which the run was not given/);
    expect(await gapOf('Summarise our Q3 vendor contracts.')).toMatch(/"our Q3 vendor contracts", which the run was not given/);
    expect(await gapOf('Book a meeting room for Tuesday at ten.')).toMatch(/server tool\(s\) were not offered/);
  });

  it('offers the model no answer of its own for a question only a read can answer: the options it ranks are the ones the plan lists', () => {
    const input = 'Who is on call this weekend? It is in /tmp/share/rota.txt.';
    const context = { runId: 'run_x', tenantId: 'ten_x', model: 'svc-workspace' as const, provider: 'embedded' as const, input, attempt: 1 };
    expect(offered(input, true)[0]).toContain('answer');
    expect(rankedOptions(context, requestedActions(input), catalog)[0]!.options).toEqual(['files__read_text_file', 'unresolved']);
    // Nor with tenant memory recalled: the small model answers a question only from what a server tool read.
    expect(rankedOptions({ ...context, memory: true }, requestedActions(input), catalog)[0]!.options).toEqual(['files__read_text_file', 'unresolved']);
    // Given the text, the question may be answered from it.
    const given = 'Who is on call this weekend? The rota says: Sat Ana, Sun Ben.';
    expect(rankedOptions({ ...context, input: given }, requestedActions(given), catalog)[0]!.options).toContain('answer');
  });

  it("knows the server's tool that writes a file's whole text, which adding a line to a file must not be given to", () => {
    expect(writesWholeText(catalog.files__write_file!.parameters)).toBe(true);
    expect(writesWholeText(catalog.files__edit_file!.parameters)).toBe(false);
    expect(writesWholeText(catalog.files__create_directory!.parameters)).toBe(false);
    expect(addsToFile('add coffee beans to the end of shopping.txt, on its own line')).toBe(true);
    expect(addsToFile('new starter - add this row at the end of staff.csv pls')).toBe(true);
    expect(addsToFile('Log this at the bottom of deliveries-log.txt, under the others please')).toBe(true);
    expect(addsToFile('Add this to shopping.txt')).toBe(true);
    expect(addsToFile('Insert this line into staff.csv')).toBe(true);
    expect(addsToFile('Please create standup.txt containing exactly this line')).toBe(false);
    expect(addsToFile('Put this in a new file notes.txt')).toBe(false);
  });

  it('finds a tool by what its description says when its name shares no word with the request', () => {
    // Classified read, the metadata tool is found by its description; left unclassified (external), a
    // request for information is never offered it (issue 63: no effect for a question).
    const read = { ...catalog, files__get_file_info: { ...catalog.files__get_file_info!, effect: 'read' as const } };
    const [options] = actionOptions(requestedActions('Retrieve the metadata of /tmp/share/plan.md.'), read, true).map((o) => o.options);
    expect(options).toContain('files__get_file_info');
    const [unclassified] = offered('Retrieve the metadata of /tmp/share/plan.md.', true);
    expect(unclassified).not.toContain('files__get_file_info');
  });
});

describe('choices over the memory server', () => {
  let memory: ServerToolCatalog = {};
  beforeAll(async () => {
    memory = await catalogOf('memory', 'server-memory', [], (t) => (/^(?:read|search|open)_/.test(t) ? 'read' : 'external'), {
      MEMORY_FILE_PATH: '/tmp/catalog-fit-memory.jsonl',
    });
  }, 30_000);
  const changes = (input: string) =>
    actionOptions(requestedActions(input), memory, true)
      .flatMap((o) => o.options)
      .filter((o) => memory[o]?.effect === 'external');

  it('offers a change to the knowledge graph only to a request that names it, never for a post somewhere else', () => {
    expect(changes("Please put a big thank-you post on our Facebook page for everyone who came to Saturday's bake sale")).toEqual([]);
    expect(changes('Please add a note to Dr Helen Marsh in the knowledge graph: she is on leave in March')).toContain('memory__add_observations');
    // One word of the store's name is not the store: a graph for a newsletter, a memory card, existing customers.
    expect(changes("Add a graph of this week's sales to the newsletter.")).toEqual([]);
    expect(changes('Add a memory card to the shopping list.')).toEqual([]);
    expect(changes('Add the existing customers to the mailing list.')).toEqual([]);
    expect(changes('Add Tom Becker to our contacts in the memory graph.')).not.toEqual([]);
    // An apostrophe between letters is no quote: the instruction goes on past "Tom's" to name the store.
    expect(changes("Please add Tom's new number to the knowledge graph: 555 0142")).toContain('memory__add_observations');
  });
});

describe('choices over tools whose place the operator fixed (fixed_arguments)', () => {
  // The Git server's tools as the service shows them with repo_path fixed: the model sees no path to give.
  const repo = { repo_path: '/srv/repo' };
  const git: ServerToolCatalog = {
    git__git_add: {
      server: 'git',
      tool: 'git_add',
      effect: 'external',
      description: 'Adds file contents to the staging area',
      parameters: { type: 'object', properties: { files: { type: 'array', items: { type: 'string' } } }, required: ['files'] },
      fixed: repo,
    },
    git__git_create_branch: {
      server: 'git',
      tool: 'git_create_branch',
      effect: 'external',
      description: 'Creates a new branch from an optional base branch',
      parameters: { type: 'object', properties: { branch_name: { type: 'string' }, base_branch: { type: 'string' } }, required: ['branch_name'] },
      fixed: repo,
    },
  };
  const changes = (input: string) =>
    actionOptions(requestedActions(input), git, true)
      .flatMap((o) => o.options)
      .filter((o) => git[o]?.effect === 'external');

  it('offers a change there only to a request that names the place: the fixed argument or the server', () => {
    expect(changes('Create a new branch called release in the git repository.')).toEqual(['git__git_create_branch']);
    expect(changes('Add notes.txt to the staging area in the repo.')).toEqual(['git__git_add']);
    // A branch of a bakery, a file's contents added to a wiki: no repository named, nothing to change in it.
    expect(changes('Create a new branch of the bakery on Elm Street.')).toEqual([]);
    expect(changes('Add the file contents to the staging area of the wiki.')).toEqual([]);
    // A path named is not the place: "Add notes.txt to the wiki" is no git add. "repository" names the repo.
    expect(changes('Add notes.txt to the wiki.')).toEqual([]);
    expect(changes('Add notes.txt to the staging area of the repository.')).toEqual(['git__git_add']);
  });
});
