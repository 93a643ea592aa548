// The bounded JSON Schema subset that response_format.json_schema.schema may
// use. Anything outside it is refused up front (400, param naming the keyword),
// so every accepted schema is one the service can always satisfy or refuse.

export const SUPPORTED_KEYWORDS = [
  'type', 'properties', 'required', 'additionalProperties', 'items', 'enum', 'const',
  'description', 'title', 'minimum', 'maximum', 'minLength', 'maxLength', 'minItems', 'maxItems',
] as const;

export const SCHEMA_LIMITS = { maxDepth: 5, maxProperties: 64, maxEnum: 100, maxItemsBound: 100, maxLengthBound: 10_000 };
const TYPES = new Set(['object', 'array', 'string', 'number', 'integer', 'boolean', 'null']);

export type SubsetCheck = { ok: true } | { ok: false; path: string; message: string };

type Node = Record<string, unknown>;

function fail(path: string, message: string): SubsetCheck {
  return { ok: false, path, message };
}

export function checkSchemaSubset(schema: unknown): SubsetCheck {
  let properties = 0;
  function visit(node: unknown, path: string, depth: number): SubsetCheck {
    if (typeof node !== 'object' || node === null || Array.isArray(node)) return fail(path, 'must be a JSON Schema object');
    if (depth > SCHEMA_LIMITS.maxDepth) return fail(path, `nesting deeper than ${SCHEMA_LIMITS.maxDepth} levels is not supported`);
    const n = node as Node;
    for (const key of Object.keys(n)) {
      if (!(SUPPORTED_KEYWORDS as readonly string[]).includes(key)) {
        return fail(`${path}.${key}`, `unsupported JSON Schema keyword '${key}'; supported: ${SUPPORTED_KEYWORDS.join(', ')}`);
      }
    }
    const type = n.type;
    if (typeof type !== 'string' || !TYPES.has(type)) {
      if (n.enum === undefined && n.const === undefined) return fail(`${path}.type`, `type must be one of ${[...TYPES].join(', ')}`);
    }
    if (n.enum !== undefined && (!Array.isArray(n.enum) || n.enum.length === 0 || n.enum.length > SCHEMA_LIMITS.maxEnum)) {
      return fail(`${path}.enum`, `enum must list 1 to ${SCHEMA_LIMITS.maxEnum} values`);
    }
    for (const bound of ['minLength', 'maxLength', 'minItems', 'maxItems'] as const) {
      const v = n[bound];
      const max = bound.endsWith('Items') ? SCHEMA_LIMITS.maxItemsBound : SCHEMA_LIMITS.maxLengthBound;
      if (v !== undefined && (!Number.isInteger(v) || (v as number) < 0 || (v as number) > max)) return fail(`${path}.${bound}`, `${bound} must be an integer from 0 to ${max}`);
    }
    if (n.additionalProperties !== undefined && typeof n.additionalProperties !== 'boolean') {
      return fail(`${path}.additionalProperties`, 'additionalProperties must be true or false');
    }
    if (type === 'object') {
      const props = (n.properties ?? {}) as Node;
      if (typeof props !== 'object' || Array.isArray(props)) return fail(`${path}.properties`, 'properties must be an object');
      for (const [name, child] of Object.entries(props)) {
        properties += 1;
        if (properties > SCHEMA_LIMITS.maxProperties) return fail(`${path}.properties`, `at most ${SCHEMA_LIMITS.maxProperties} properties in all`);
        const result = visit(child, `${path}.properties.${name}`, depth + 1);
        if (!result.ok) return result;
      }
      if (n.required !== undefined) {
        if (!Array.isArray(n.required) || n.required.some((r) => typeof r !== 'string' || !(r in props))) {
          return fail(`${path}.required`, 'required must list names defined in properties');
        }
      }
    }
    if (type === 'array') {
      if (n.items === undefined) return fail(`${path}.items`, 'arrays must define items');
      const result = visit(n.items, `${path}.items`, depth + 1);
      if (!result.ok) return result;
    }
    return { ok: true };
  }
  return visit(schema, 'response_format.json_schema.schema', 0);
}
