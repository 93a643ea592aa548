// The schema an embedded model's json_schema answer is decoded under: the request's own, except that
// a required string must not be empty. An empty required value is never passed on (the answer is held
// to the request's text, and "" states nothing: services/chat/structured-output.ts refuses it), so
// allowing it only lets a small model stop early where the text states the value: SmolLM2 on some
// CPUs wrote `{"city": ""}` for "The office is in Lisbon. Which city is the office in?".

type Schema = Record<string, unknown>;

const isSchema = (value: unknown): value is Schema => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A plain string schema (no enum, const or format, whose grammars fix the value's shape already). */
const isFreeString = (schema: Schema) => schema.type === 'string' && !('enum' in schema) && !('const' in schema) && !('format' in schema);

/** `schema` with every required free string given a minLength of at least 1, nested objects, items and variants included. */
export function nonEmptyRequiredStrings(schema: Schema): Schema {
  const out: Schema = { ...schema };
  if (isSchema(schema.properties)) {
    const required = new Set(Array.isArray(schema.required) ? schema.required : []);
    out.properties = Object.fromEntries(
      Object.entries(schema.properties).map(([key, value]) => {
        if (!isSchema(value)) return [key, value];
        const inner = nonEmptyRequiredStrings(value);
        if (required.has(key) && isFreeString(inner)) inner.minLength = Math.max(1, Number(inner.minLength ?? 0));
        return [key, inner];
      }),
    );
  }
  if (isSchema(schema.items)) out.items = nonEmptyRequiredStrings(schema.items);
  for (const key of ['oneOf', 'anyOf'] as const) {
    const variants = schema[key];
    if (Array.isArray(variants)) out[key] = variants.map((v) => (isSchema(v) ? nonEmptyRequiredStrings(v) : v));
  }
  if (isSchema(schema.$defs)) out.$defs = Object.fromEntries(Object.entries(schema.$defs).map(([k, v]) => [k, isSchema(v) ? nonEmptyRequiredStrings(v) : v]));
  return out;
}
