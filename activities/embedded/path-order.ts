// A move or a copy names its two paths in the request's order ("rename scan_0931.txt to lease-agreement.txt"): the
// small model had swapped them, and would have moved the new name onto the old. Where a tool takes a source and a
// destination and the action's sentence names exactly two paths, the first is the source and the second the
// destination, as the request wrote them. An aid for this model's argument grammar; a capable model writes its own.
import { pathsNamed } from '../../domain/agent/request-spans.ts';

type Schema = Record<string, unknown>;

const SOURCE_KEY = /^(?:source|src|from)(?:_?path)?$/i;
const DESTINATION_KEY = /^(?:destination|dest|target|to)(?:_?path)?$/i;

/** The argument schema with its source and destination held to the sentence's two paths, in order; unchanged otherwise. */
export function withPathOrder(schema: Schema, sentence: string): Schema {
  const properties = schema.properties as Record<string, Schema> | undefined;
  if (!properties) return schema;
  const source = Object.keys(properties).find((k) => SOURCE_KEY.test(k));
  const destination = Object.keys(properties).find((k) => DESTINATION_KEY.test(k));
  const paths = [...new Set(pathsNamed(sentence))];
  if (!source || !destination || paths.length !== 2) return schema;
  return { ...schema, properties: { ...properties, [source]: { enum: [paths[0]] }, [destination]: { enum: [paths[1]] } } };
}

// "a folder called receipts-2024-25 in /srv/share": the name given to what is made, and the folder it goes in.
const NAMED = /\b(?:called|named)\s+["'“‘]?([\w][\w.-]*[\w])["'”’]?(?=[\s,.;:!?)]|$)/gi;
const PARENT = /\b(?:in|inside|into|under|within)\s+(?:the\s+folder\s+)?(\/[\w./-]*[\w-])/gi;

/**
 * The path spans for a tool that makes something: a folder the request names as where the new thing goes is its
 * parent, not what is made (create_directory on /srv/share had "created" the folder that was there, and counted
 * done), so it gives way to the parent and the new name joined; with no name given, no path of it is offered.
 */
export function madePaths(spans: string[], input: string): string[] {
  const parents = [...input.matchAll(PARENT)].map((m) => m[1]!);
  if (!parents.length) return spans;
  const names = [...input.matchAll(NAMED)].map((m) => m[1]!);
  return [...spans.filter((s) => !parents.includes(s)), ...parents.flatMap((p) => names.map((n) => `${p}/${n}`))];
}
