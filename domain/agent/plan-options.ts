// What each requested action may become in a model's plan: a step of a tool the run is offered,
// the model's own answer, or unresolved. The per-request plan schema (exact-plan.ts) is built
// from these options, so a plan can only take a choice the service could carry out and check:
// - `answer` only for analysis (an answer cannot deliver or pay);
// - a built-in tool only for the kind of action it performs (webhook_delivery for a delivery;
//   key phrases and memory recall carry out no requested action, so they cover none);
// - an operator's server tool for any action (the plan maps actions to tools); on the shortlist (the
//   embedded model's), only a read one for an action that asks for information;
// - `unresolved` always, and alone for an action on material the run was never given.
// A weak model may further be shown a shortlist: the server tools whose own names fit what the
// action asks (its verb first, toolsByName). The plan records every such hint (Plan.hints), so a reader can tell
// what the service narrowed and what the model chose.
import { asksOnlyInformation, missingMaterialPhrase, type RequestedAction } from '../planning/requested-actions.ts';
import { stemOf, wordsOf } from '../text/analyze.ts';
import { STOPWORDS } from '../text/stopwords.ts';
import { PATH_LIKE } from '../text/find-in-text.ts';
import { isToolId, type ServerToolCatalog, type ServerToolRef, TOOLS } from '../tools.ts';
import { fittingServerTools, namesLocation, takesLocation, wordsOfName } from './catalog-fit.ts';

export const ANSWER = 'answer';
export const UNRESOLVED = 'unresolved';

/** The choices one action has, in the order they are shown. */
export interface ActionOptions {
  action: number;
  options: string[];
  /** Why the options are fewer than every tool, in words (recorded in the plan). */
  narrowed: string | null;
}

/** Name words too general to say what a tool does. */
const GENERAL = new Set(['get', 'set', 'text', 'data', 'info', 'item', 'items', 'tool', 'run', 'do', 'make', 'use', 'new']);

/** The words of a tool's own name (`files__write_file` → write, file; `listDirectory` → list, directory). */
export function nameWords(tool: string, serverTools: ServerToolCatalog): string[] {
  return wordsOfName(Object.hasOwn(serverTools, tool) ? serverTools[tool]!.tool : tool);
}

/** The words of what an action asks: its instruction, before any quoted or introduced material, and `file` for a path. */
function askedWords(action: RequestedAction): Set<string> {
  // An apostrophe between letters is no quote: "What's the message on the latest commit" asks about a commit.
  const instruction = action.clause.split(/:|["“‘]|(?<!\p{L})'|'(?!\p{L})/u)[0] ?? action.clause;
  const words = new Set(wordsOf(instruction).map(stemOf));
  // A request's only action asks with the statements beside it too ("… it's all in the knowledge graph").
  if (action.scope) for (const w of wordsOf(action.scope.replace(/"[^"]*"|“[^”]*”/g, ' '))) words.add(stemOf(w));
  if (PATH_LIKE.test(action.scope ?? action.clause)) words.add('file');
  return words;
}

/**
 * Verbs that ask for the same kind of operation, so "save the text into a.txt" finds a tool named
 * write_file and "what does a.txt say" one named read_text_file. A small, general table: a tool whose
 * name has none of these is still found by any other word its name shares with the request.
 */
const VERB_FAMILIES: string[][] = [
  ['write', 'create', 'save', 'store', 'put', 'record', 'add', 'append', 'overwrite'],
  ['read', 'open', 'show', 'view', 'see', 'say', 'look', 'display', 'print', 'fetch', 'load', 'contain'],
  ['list', 'enumerate'],
  ['delete', 'remove', 'erase'],
  ['move', 'rename'],
  ['search', 'find', 'look', 'extract', 'pull'],
  // "How many" asks for a count as "count" does.
  ['count', 'tally', 'many'],
  ['edit', 'change', 'modify', 'update', 'replace'],
];

const familyOf = (word: string) => VERB_FAMILIES.find((f) => f.includes(word)) ?? [word];
const isVerb = (word: string) => VERB_FAMILIES.some((f) => f.includes(word));

/** Whether any of a tool's name words is in the family of one of `verbs`. */
const sharesVerb = (names: string[], verbs: Iterable<string>) => [...verbs].some((w) => familyOf(w).some((v) => names.includes(v)));

/**
 * Whether a tool's name says it does `verb`: its first word, after the server's own name (git_commit on the git
 * server), is in the verb's family. Later words name what it works on: write_file and get_file_info do not "file"
 * a tax return.
 */
function namesOperation(tool: string, verb: string, serverTools: ServerToolCatalog): boolean {
  const names = nameWords(tool, serverTools).map(stemOf);
  const server = serverTools[tool]?.server.toLowerCase();
  const operation = names[0] === server && names.length > 1 ? names[1] : names[0];
  return operation !== undefined && familyOf(verb).includes(operation);
}

/**
 * The server tools that fit what the action asks, by their own names: those that name the action's
 * verb (or a verb of its family); else those that name another verb of the request; else those that
 * share any meaningful word with it ("file", when the request names a path).
 */
function toolsByName(tools: string[], action: RequestedAction, serverTools: ServerToolCatalog): string[] {
  const asked = askedWords(action);
  const names = new Map(
    tools.map((t) => [
      t,
      nameWords(t, serverTools)
        .map(stemOf)
        .filter((w) => !GENERAL.has(w)),
    ]),
  );
  const verb = action.verb ? stemOf(action.verb) : null;
  const askedVerbs = [...asked].filter(isVerb);
  // How well a tool's name fits, per tier; 0 is no fit. Within a tier the best fits are kept, so a
  // name that fits two of the request's verbs ("how many … list": count_list_items) wins over one.
  // Last, what the tool's own description says it does (MCP descriptions are written for this choice).
  const described = new Map(tools.map((t) => [t, descriptionWords(t, serverTools)]));
  const tiers: ((n: string[], t: string) => number)[] = [
    (n) => (verb !== null && sharesVerb(n, [verb]) ? 1 : 0),
    (n) => askedVerbs.filter((v) => sharesVerb(n, [v])).length,
    (n) => (n.some((w) => asked.has(w)) ? 1 : 0),
    (_, t) => [...asked].filter((w) => !STOPWORDS.has(w) && !GENERAL.has(w) && described.get(t)!.has(w)).length,
  ];
  for (const fitOf of tiers) {
    const scores = tools.map((t) => fitOf(names.get(t)!, t));
    const best = Math.max(0, ...scores);
    if (best > 0) return tools.filter((_, i) => scores[i] === best);
  }
  return [];
}

/** The content words of the first sentence of a tool's description, stemmed; none for a built-in tool. */
function descriptionWords(tool: string, serverTools: ServerToolCatalog): Set<string> {
  const description = Object.hasOwn(serverTools, tool) ? serverTools[tool]!.description : '';
  const first = description.split(/(?<=\.)\s/)[0] ?? '';
  return new Set(wordsOf(first).map(stemOf));
}

/** The content words every tool of a server says it works on (the memory server's "knowledge graph"): the name of its store. */
function storeWords(server: string, serverTools: ServerToolCatalog): string[] {
  const described = Object.keys(serverTools)
    .filter((t) => serverTools[t]!.server === server)
    .map((t) => descriptionWords(t, serverTools));
  const [first = new Set<string>(), ...rest] = described;
  return [...first].filter((w) => rest.every((d) => d.has(w)) && !isVerb(w) && !GENERAL.has(w) && !STOPWORDS.has(w));
}

/**
 * Whether the action names where a tool that takes no path makes its change: the store its server
 * keeps, by every word its tools' descriptions share ("the knowledge graph"), or by the server's name
 * and one of them ("the memory graph"). "Put a thank-you post on our Facebook page" or "Add a graph of
 * sales to the newsletter" names no knowledge graph, so adding to one is not offered for it (issue 63).
 * A server whose tools share no such word is named by any word of the tool's description. Any other
 * tool names its place by the path the request gives (catalog-fit.ts); one whose place the operator fixed, by its name.
 */
function namesStore(tool: string, action: RequestedAction, serverTools: ServerToolCatalog): boolean {
  const ref = Object.hasOwn(serverTools, tool) ? serverTools[tool]! : null;
  if (ref?.effect !== 'external') return true;
  const asked = askedWords(action);
  if (Object.keys(ref.fixed ?? {}).length && !namesFixedPlace(ref, asked)) return false;
  if (takesLocation(ref)) return true;
  const store = storeWords(ref.server, serverTools);
  if (!store.length) return [...descriptionWords(tool, serverTools)].some((w) => !isVerb(w) && !GENERAL.has(w) && !STOPWORDS.has(w) && asked.has(w));
  return store.every((w) => asked.has(w)) || (asked.has(stemOf(ref.server)) && store.some((w) => asked.has(w)));
}

/**
 * Whether the request names the place a tool's fixed arguments hold (fixed_arguments: a repository's path): a tool there
 * changes that place only, so the request names it, by a word of a fixed argument's name ("repo" of repo_path, also as
 * in "repository") or by the server's ("git"), whatever other paths it names ("Add notes.txt to the wiki" is no git add).
 */
function namesFixedPlace(ref: ServerToolRef, asked: ReadonlySet<string>): boolean {
  if (asked.has(stemOf(ref.server))) return true;
  const named = Object.keys(ref.fixed ?? {})
    .flatMap(wordsOfName)
    .filter((w) => w.length >= 3 && !GENERAL.has(w) && !namesLocation(w));
  return named.some((w) => [...asked].some((a) => a === w || (w.length >= 4 && a.startsWith(w))));
}

/** Whether a model's adapter lets a built-in tool answer an action (the embedded adapter's aids for its small model). */
export type AdmitsBuiltin = (tool: string, action: RequestedAction) => boolean;

/** Every choice the service can carry out and check for `action`. */
function validOptions(action: RequestedAction, serverTools: ServerToolCatalog, shortlist: boolean, admits: AdmitsBuiltin): string[] {
  if (action.missing) return [UNRESOLVED];
  const builtin = Object.values(TOOLS)
    .filter((t) => t.capability === action.kind && admits(t.id, action))
    .map((t) => t.id);
  const own = action.kind === 'analysis' ? [ANSWER] : [];
  // For the small model only (its adapter's aid): a question never becomes a proposal to change
  // something, only the catalog's reads may answer it. A capable model on the plan schema decides that itself.
  const informationOnly = shortlist && asksOnlyInformation(action);
  const servers = fittingServerTools(serverTools, action).filter((t) => !informationOnly || serverTools[t]!.effect === 'read');
  return [...own, ...builtin, ...servers, UNRESOLVED];
}

/**
 * The options of each action. With `shortlist`, server tools are narrowed to those whose name shares
 * a word with the action's request (for a small model, which otherwise picks tools at random); `admits`
 * narrows the built-ins before that, so a built-in it refuses takes no tool's place.
 */
export function actionOptions(
  actions: RequestedAction[],
  serverTools: ServerToolCatalog,
  shortlist: boolean,
  admits: AdmitsBuiltin = () => true,
): ActionOptions[] {
  return actions.map((a) => {
    const valid = validOptions(a, serverTools, shortlist, admits);
    if (a.missing) return { action: a.n, options: valid, narrowed: `it ${missingMaterialPhrase(a)}, which the run was not given` };
    const unfit = Object.keys(serverTools).length - fittingServerTools(serverTools, a).length;
    const unfitNote = unfit
      ? `${unfit} server tool(s) were not offered: they need a path the request does not name, name a folder where it names a file, are an unclassified twin of a tool classified read, take no text for a message, or would analyse text the request gives`
      : null;
    if (!shortlist) return { action: a.n, options: valid, narrowed: unfitNote };
    // The exact analysis tools are narrowed by name as server tools are: a count is no answer to "summarise".
    const byName = valid.filter((o) => !isToolId(o) || TOOLS[o].capability === 'analysis');
    const candidates = byName.filter((o) => o !== ANSWER && o !== UNRESOLVED);
    // An effect is done only by a tool named for it ("delete" by a tool named delete or remove), never
    // by the nearest tool that shares another word of the request (issue 63).
    const verb = a.kind === 'unsupported' && a.verb ? stemOf(a.verb) : null;
    const matching = new Set(verb !== null ? candidates.filter((t) => namesOperation(t, verb, serverTools)) : toolsByName(candidates, a, serverTools));
    const kept = valid.filter((o) => !byName.includes(o) || o === ANSWER || o === UNRESOLVED || (matching.has(o) && namesStore(o, a, serverTools)));
    const dropped = valid.length - kept.length;
    const byWords = dropped ? `${dropped} tool(s) whose name and description do not fit the action's words were not offered` : null;
    return { action: a.n, options: kept, narrowed: [unfitNote, byWords].filter(Boolean).join('; ') || null };
  });
}

/** What choosing `option` means, in the words a small model scores: "I will send a message to the team channel." */
export function optionPhrase(option: string, serverTools: ServerToolCatalog): string {
  if (option === ANSWER) return 'I will answer it myself in writing, from the text given.';
  if (option === UNRESOLVED) return 'I cannot do it: no tool here does that.';
  return `I will ${toolWords(option, serverTools)}.`;
}

/** A tool as a short verb phrase: webhook_delivery "send a message to the team channel", files__write_file "write the file". */
export function toolWords(tool: string, serverTools: ServerToolCatalog): string {
  if (isToolId(tool)) return TOOLS[tool].doing;
  const [verb, ...rest] = nameWords(tool, serverTools);
  return rest.length ? `${verb} the ${rest.join(' ')}` : (verb ?? tool);
}

/** The instructions a small model ranks its options under: the tools this action may use, and whether it may answer itself. */
export function choiceInstructions(options: string[], serverTools: ServerToolCatalog): string {
  const tools = options.filter((o) => o !== ANSWER && o !== UNRESOLVED).map((o) => toolWords(o, serverTools));
  return [
    tools.length ? `You have these tools: ${tools.join('; ')}.` : 'You have no tools.',
    options.includes(ANSWER) ? 'You can also write answers yourself from text you are given.' : '',
    'Say what you will do for the request.',
  ]
    .filter(Boolean)
    .join(' ');
}
