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
