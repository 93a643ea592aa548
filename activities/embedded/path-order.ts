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

/**
 * The move's schema with its source and destination held to the two paths of the action's own clause, where it
 * reads "P1 … to|as|into|onto P2"; unchanged otherwise ("Move into /srv/archive the file scan.pdf", "restore
 * notes.txt from notes.bak"). A bare new name is joined to the source's folder ("rename /srv/docs/old.txt to new.txt").
 */
export function withPathOrder(schema: Schema, clause: string): Schema {
  const properties = schema.properties as Record<string, Schema> | undefined;
  if (!properties) return schema;
  const source = Object.keys(properties).find((k) => SOURCE_KEY.test(k));
  const destination = Object.keys(properties).find((k) => DESTINATION_KEY.test(k));
  const paths = [...new Set(pathsNamed(clause))];
  if (!source || !destination || paths.length !== 2) return schema;
  const [from, to] = paths as [string, string];
  if (!new RegExp(`${escapeRegExp(from)}\\S*\\s+(?:\\S+\\s+){0,3}?(?:to|as|into|onto)\\s+(?:\\S+\\s+){0,2}?${escapeRegExp(to)}`, 'i').test(clause))
    return schema;
  const folder = from.includes('/') ? from.slice(0, from.lastIndexOf('/') + 1) : '';
  const target = to.includes('/') ? to : `${folder}${to}`;
  return { ...schema, properties: { ...properties, [source]: { enum: [from] }, [destination]: { enum: [target] } } };
}

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
