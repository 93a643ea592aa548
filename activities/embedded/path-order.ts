// Paths for the small model's argument grammar where the request's own words place them. A move names its two
// paths in the order "P1 … to P2" ("rename scan_0931.txt to lease-agreement.txt"): the small model had swapped
// them. A tool that makes something makes the new path, not the folder the request says it goes in ("a folder
// called receipts-2024-25 in /srv/share"): create_directory on /srv/share had "created" the folder that was
// there, and counted done. Aids for this model only; a capable model writes its own arguments.
import { namesFile, pathsNamed } from '../../domain/agent/request-spans.ts';
import { escapeRegExp } from '../../domain/text/escape-regexp.ts';

type Schema = Record<string, unknown>;

const SOURCE_KEY = /^source(?:_?path)?$/i;
const DESTINATION_KEY = /^(?:destination|target)(?:_?path)?$/i;

/** The word that links what a move takes to where it goes ("a.txt to b.txt", "a.txt into /srv/archive"). */
const LINK = /\s(to|as|into|onto)\s/i;
/** What a move is told to go into, named rather than given as a path ("into a folder called archive"). */
const CALLED = /^\s*(?:the\s+|a\s+(?:new\s+)?)?(?:folder|directory)\s+(?:called|named)\s+["'“‘]?([\w][\w.-]*[\w])["'”’]?(?=[\s,.;:!?)]|$)/i;

/**
 * The move's schema with its source and destination held to the paths of the action's own clause, read as "P1 … to|as|into|onto
 * P2": the one path before the link is the source, the one after it (or a folder called by name right after it) where it goes.
 * Unchanged where no link follows a path ("Move into /srv/archive the file scan.pdf", "restore notes.txt from notes.bak"). Null
 * where the clause names more than one path to move or no path to move it to ("move q1.txt and q2.txt into it" had moved
 * q1.txt onto q2.txt): one call cannot do it. A bare new name is joined to the source's folder ("rename /srv/docs/old.txt
 * to new.txt"); a folder it goes into keeps the file's own name ("into the receipts/2025-03 folder").
 */
export function withPathOrder(schema: Schema, clause: string): Schema | null {
  const properties = schema.properties as Record<string, Schema> | undefined;
  if (!properties) return schema;
  const source = Object.keys(properties).find((k) => SOURCE_KEY.test(k));
  const destination = Object.keys(properties).find((k) => DESTINATION_KEY.test(k));
  const found = [...new Set(pathsNamed(clause))].map((path) => ({ path, at: clause.indexOf(path) })).sort((a, b) => a.at - b.at);
  if (!source || !destination || found.length === 0) return schema;
  // Where the paths split: the first gap between two of them, or after the last, that holds a link word (its last one there).
  const gaps = found.map((p, i) => clause.slice(p.at + p.path.length, found[i + 1]?.at ?? clause.length));
  const split = gaps.findIndex((gap) => LINK.test(gap));
  if (split < 0) return schema;
  const links = [...gaps[split]!.matchAll(new RegExp(LINK.source, 'gi'))];
  const link = links.at(-1)!;
  // A folder named as where the file is ("In /srv/share, move a.txt to b.txt") is not what is moved.
  const froms = found
    .slice(0, split + 1)
    .map((p) => p.path)
    .filter((p, _, all) => all.length === 1 || namesFile(p) || !new RegExp(`\\b(?:in|from)\\s+${escapeRegExp(p)}`, 'i').test(clause));
  const tos = found.slice(split + 1).map((p) => p.path);
  const called = tos.length === 0 ? CALLED.exec(gaps[split]!.slice(link.index + link[0].length))?.[1] : undefined;
  const to = tos.length === 1 ? tos[0]! : called;
  if (froms.length !== 1 || to === undefined) return null;
  const from = froms[0]!;
  const into = called !== undefined || /^in|^on/i.test(link[1]!) || to.endsWith('/');
  const target =
    namesFile(from) && !namesFile(to) && into
      ? `${to.replace(/\/$/, '')}/${from.slice(from.lastIndexOf('/') + 1)}`
      : to.includes('/')
        ? to
        : `${folderOf(from)}${to}`;
  return { ...schema, properties: { ...properties, [source]: { enum: [from] }, [destination]: { enum: [target] } } };
}

/** The folder part of a path, with its slash ("/srv/docs/" of "/srv/docs/old.txt"); '' for a bare name. */
const folderOf = (path: string) => (path.includes('/') ? path.slice(0, path.lastIndexOf('/') + 1) : '');

// "a folder called receipts-2024-25 in /srv/share": the name given to what is made, and the folder it goes in.
const NAMED = /\b(?:called|named)\s+["'“‘]?([\w][\w.-]*[\w])["'”’]?(?=[\s,.;:!?)]|$)/gi;
const PARENT = /\b(?:in|inside|into|under|within)\s+(?:the\s+folder\s+)?(\/[\w./-]*[\w-]\/?)/gi;
// Words after "named" that are no name ("named after the new client").
const NOT_NAMES = new Set(['after', 'for', 'by', 'like', 'as', 'the', 'a', 'an']);

/**
 * The path spans for a tool that makes something, from the action's sentence: the one folder it names as where
 * the new thing goes gives way to that folder and the one name it gives, joined. A tool named for folders
 * (create_directory) is not offered that folder even where no name is given: it is there already.
 */
export function madePaths(spans: string[], sentence: string, makesFolders: boolean): string[] {
  const parents = [...sentence.matchAll(PARENT)].map((m) => m[1]!).filter((p) => !namesFile(p));
  const names = [...sentence.matchAll(NAMED)].map((m) => m[1]!).filter((n) => !NOT_NAMES.has(n.toLowerCase()));
  if (parents.length !== 1) return spans;
  const parent = parents[0]!.replace(/\/$/, '');
  const others = spans.filter((s) => s.replace(/\/$/, '') !== parent);
  if (names.length === 1) return [...others, `${parent}/${names[0]}`];
  return makesFolders ? others : spans;
}
