// Which tools of an operator's catalog can carry out an action at all, by what the tool needs and
// what the request gives, so no planner (a 135M model least of all) is offered a tool that cannot
// be right: one whose required path the request does not name, a folder tool for a file, the
// unclassified twin of a tool the operator classified read, a tool that takes no text for a
// delivery, any tool for analysis of text the request gives, or an exact check that answers another
// question. General rules over schemas, names and classifications; no per-tool cases.
import { namesOpenable } from '../planning/material.ts';
import { asksOnlyInformation, namesSource, type RequestedAction } from '../planning/requested-actions.ts';
import type { ServerToolCatalog, ServerToolRef } from '../tools.ts';

/** The words that name what the action works on: its clause, or the whole input for a request's only action. */
const scopeOf = (action: RequestedAction) => action.scope ?? action.clause;

/** Argument names that take a path or an address: the request must name one for such a tool to fit. */
const LOCATION_ARG = /path|file|dir|folder|source|destination|uri|url|location/i;

/** The required properties of a tool's input schema. */
function requiredArgs(ref: ServerToolRef): string[] {
  const required = ref.parameters.required;
  return Array.isArray(required) ? required.filter((r): r is string => typeof r === 'string') : [];
}

/** The words of a tool's own name: `read_text_file` → read, text, file; `listDirectory` → list, directory. */
export function wordsOfName(name: string): string[] {
  return name
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w.toLowerCase());
}

const toolNameWords = (ref: ServerToolRef) => wordsOfName(ref.tool);

/** Whether the tool takes a path or an address among its required arguments. */
export const takesLocation = (ref: ServerToolRef) => requiredArgs(ref).some((arg) => LOCATION_ARG.test(arg));

/** Whether a word of an argument's name says only that it is a place ("path" of repo_path). */
export const namesLocation = (word: string) => LOCATION_ARG.test(word);

/** Whether the action gives what the tool requires: a path or address for every location argument. */
function givesRequired(ref: ServerToolRef, action: RequestedAction): boolean {
  return !takesLocation(ref) || namesOpenable(scopeOf(action));
}

/** Words of a tool's name that say it works on folders. */
export const FOLDER_WORDS: ReadonlySet<string> = new Set(['directory', 'directories', 'folder', 'folders', 'dir', 'tree']);

/** A path with an extension names a file, one ending in a slash a folder; a tool named for the other kind does not fit. */
function fitsPathKind(ref: ServerToolRef, action: RequestedAction): boolean {
  const names = toolNameWords(ref);
  const folderWords = names.some((w) => FOLDER_WORDS.has(w));
  const fileWords = names.some((w) => ['file', 'files'].includes(w));
  const namesFile = /(?:^|[\s/])[\w-]+\.[a-z][a-z0-9]{0,4}(?=$|[\s,;:!?)'"])/i.test(scopeOf(action));
  const namesFolder = /(?:^|\s)[\w./-]*\/(?=$|[\s,;:!?)'"])/.test(scopeOf(action));
  if (namesFile && folderWords && !fileWords) return false;
  return !(namesFolder && !namesFile && fileWords && !folderWords);
}

/** Unclassified tools with a read-classified tool of the same server and the same leading verb ("read_file" beside "read_text_file"). */
function unclassifiedTwins(tools: string[], catalog: ServerToolCatalog): Set<string> {
  const readVerbs = new Set(
    tools.filter((t) => catalog[t]!.effect === 'read' && catalog[t]!.classified !== false).map((t) => `${catalog[t]!.server}:${toolNameWords(catalog[t]!)[0]}`),
  );
  return new Set(tools.filter((t) => catalog[t]!.classified === false && readVerbs.has(`${catalog[t]!.server}:${toolNameWords(catalog[t]!)[0]}`)));
}

/** Whether the tool takes text at all: a delivery's message must go somewhere. */
function takesText(ref: ServerToolRef): boolean {
  const props = (ref.parameters.properties ?? {}) as Record<string, { type?: unknown }>;
  return Object.values(props).some((p) => p?.type === 'string' || (Array.isArray(p?.type) && p.type.includes('string')));
}

/**
 * Whether the tool may carry out the action at all: a delivery only through a tool that takes its
 * message as text; analysis of text the request gives only by the model or an exact tool, unless the
 * request names a path or address for a tool to open.
 */
function mayCarryOut(ref: ServerToolRef, action: RequestedAction): boolean {
  if (action.kind === 'delivery') return takesText(ref);
  // Work on text the request gives needs no tool; a change asked with it ("remember that …") may.
  // A place the catalog reads, named ("It should be in the knowledge graph"), is no text given: the catalog reads it.
  if (action.kind === 'analysis' && action.given && asksOnlyInformation(action)) return namesOpenable(scopeOf(action)) || namesSource(scopeOf(action));
  return true;
}

/** The server tools of `catalog` that can carry out `action`, in catalog order. */
export function fittingServerTools(catalog: ServerToolCatalog, action: RequestedAction): string[] {
  const fitting = Object.keys(catalog).filter(
    (t) => mayCarryOut(catalog[t]!, action) && givesRequired(catalog[t]!, action) && fitsPathKind(catalog[t]!, action),
  );
  const twins = unclassifiedTwins(fitting, catalog);
  return fitting.filter((t) => !twins.has(t));
}
