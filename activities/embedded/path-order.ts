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
/**
 * What may stand between the link and where the file goes: an article and the word for a folder ("to the /srv/archive
 * folder"), or the folder's name with its path in brackets ("into the archive folder (/srv/archive)").
 */
const TO_PLACE = /^\s*(?:(?:the|a|an|my|our)\s+)?(?:(?:new\s+)?(?:folder|directory)\s+|(?:[\w-]+\s+){1,2}(?:folder|directory)\s*\(\s*)?$/i;
/** A folder the link leads to by name, not by path ("into a folder called archive", "into the archive folder" is no name). */
const CALLED = /^\s*(?:the\s+|a\s+(?:new\s+)?)?(?:folder|directory)\s+(?:called|named)\s+["'“‘]?([\w][\w.-]*[\w])["'”’]?\W*$/i;
/** At most this many words between what is moved and the link ("draft.txt in the letters folder to final.txt"). */
const FROM_GAP_WORDS_MAX = 5;

/** Where a path stands in the text as a whole word, from `from` on; -1 when it does not ("notes.txt" is not in "old-notes.txt"). */
function positionOf(text: string, path: string, from: number): number {
  const found = new RegExp(`(?<![\\w./-])${escapeRegExp(path)}(?![\\w/-]|\\.\\w)`, 'g');
  found.lastIndex = from;
  return found.exec(text)?.index ?? -1;
}

/** A folder named as where things are ("in /srv/share", "from /srv/inbox"), not as what is moved or where it goes. */
const isPlaceOf = (clause: string, path: string, at: number) =>
  !namesFile(path) && /\b(?:in|from|inside|within)\s+(?:the\s+)?(?:(?:folder|directory)\s+)?$/i.test(clause.slice(0, at));

/**
 * The move's schema with its source and destination held to the clause's own words, "P1 … to|as|into|onto P2": one path
 * before the link (a few words may stand between), and the path right after it (only an article or "folder" between) or a
 * folder called by name. A folder named as where things are ("In /srv/share, move a.txt to b.txt") is where a bare name
 * is. Into a folder ("into", "folder", a trailing slash, or a move of a file to a path with no extension), what moves
 * keeps its name. Unchanged where no link follows a path ("Move into /srv/archive the file scan.pdf"). Null where the
 * clause's words do not say one thing to move and one place for it ("move q1.txt and q2.txt into it" had moved q1 onto
 * q2; "Use b.txt as the new name for a.txt", "copy a.txt to the same folder as b.txt"): one call cannot be read from them.
 */
export function withPathOrder(schema: Schema, clause: string): Schema | null {
  const properties = schema.properties as Record<string, Schema> | undefined;
  if (!properties) return schema;
  const source = Object.keys(properties).find((k) => SOURCE_KEY.test(k));
  const destination = Object.keys(properties).find((k) => DESTINATION_KEY.test(k));
  if (!source || !destination) return schema;
  const found: { path: string; at: number }[] = [];
  for (const path of new Set(pathsNamed(clause))) {
    const at = positionOf(clause, path, 0);
    if (at >= 0) found.push({ path, at });
  }
  found.sort((a, b) => a.at - b.at);
  const places = found.filter((p) => isPlaceOf(clause, p.path, p.at));
  const items = found.filter((p) => !places.includes(p));
  // The first gap after a path, up to the next one (or the clause's end), that holds a link word.
  const gapAfter = (i: number) => clause.slice(found[i]!.at + found[i]!.path.length, found[i + 1]?.at ?? clause.length);
  const split = found.findIndex((_, i) => LINK.test(gapAfter(i)));
  if (split < 0) return schema;
  const gap = gapAfter(split);
  const link = LINK.exec(gap)!;
  const froms = items.filter((p) => p.at <= found[split]!.at);
  const next = found[split + 1];
  const toPath = next && !places.includes(next) && TO_PLACE.test(gap.slice(link.index + link[0].length)) ? next.path : undefined;
  const called = next ? undefined : CALLED.exec(gap.slice(link.index + link[0].length))?.[1];
  // Between what is moved and the link, a few words (places among them: "a.txt from /srv/in to …").
  const linkAt = found[split]!.at + found[split]!.path.length + link.index;
  const beforeLink = froms.length === 1 ? clause.slice(froms[0]!.at + froms[0]!.path.length, linkAt).trim() : '';
  const fromGapWords = beforeLink ? beforeLink.split(/\s+/).length : 0;
  // Anything more to move or copy to after where it goes ("copy a.txt to b.txt and c.txt") is a second call.
  const more = items.some((p) => p.at > (next?.at ?? linkAt));
  if (froms.length !== 1 || fromGapWords > FROM_GAP_WORDS_MAX || (toPath === undefined && called === undefined) || more) return null;
  const place = places.length === 1 ? `${places[0]!.path.replace(/\/$/, '')}/` : '';
  const from = within(place, froms[0]!.path);
  const to = toPath ?? `${folderOf(from)}${called}`;
  const afterTo = toPath ? clause.slice(next!.at + toPath.length) : '';
  const intoFolder =
    called !== undefined ||
    /^in|^on/i.test(link[1]!) ||
    to.endsWith('/') ||
    /(?:folder|directory)\s+$/i.test(gap) ||
    /^\s+(?:folder|directory)\b/i.test(afterTo) ||
    (namesFile(from) && !/\brename/i.test(clause));
  const target =
    intoFolder && !namesFile(to)
      ? `${within(place, to).replace(/\/$/, '')}/${from.slice(from.lastIndexOf('/') + 1)}`
      : to.includes('/')
        ? to
        : `${folderOf(from)}${to}`;
  return { ...schema, properties: { ...properties, [source]: { enum: [from] }, [destination]: { enum: [target] } } };
}

/** A bare name within the folder named as where things are; any other path as it is. */
const within = (place: string, path: string) => (path.includes('/') ? path : `${place}${path}`);

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
