// The bounded JSON Schema subset that response_format.json_schema.schema may
// use: what pydantic's model_json_schema() (through the openai clients'
// .parse() strict transform) and zod's toJSONSchema / zodResponseFormat emit,
// minus what the service cannot honour. Anything outside it is refused up front
// (400, param naming the keyword), so every accepted schema is one the service
// can always satisfy or refuse.
//
// Three steps, all Ajv:
// 1. The subset is itself a JSON Schema (SUBSET_META_SCHEMA). Ajv validates the
//    request's schema against it as data, which names the first offending
//    keyword by its path: an unknown or unsupported keyword anywhere (also inside
//    $defs that nothing references), a bound over the limits, a remote $ref.
// 2. Local $refs are resolved and the resolved tree is bounded: depth, total
//    properties and schema nodes counted after resolving (a $def used twice
//    counts twice); a recursive $ref is refused; required names defined
//    properties; arrays define items; a oneOf is a discriminated union (each
//    branch requires the discriminator property as a const of its own, so no
//    value meets two branches and oneOf means what anyOf means).
// 3. Ajv compiles the schema in strict mode, with every keyword outside the
//    subset removed from its vocabulary (so one that slipped through would be an
//    unknown keyword, an error) and only the supported formats known. The
//    compiled validator is what answers are checked with.
import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';

/** Keywords the service honours: the answer is built and validated to meet them. */
export const CONSTRAINT_KEYWORDS = [
  'type',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'enum',
  'const',
  'anyOf',
  'oneOf',
  '$ref',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'minLength',
  'maxLength',
  'minItems',
  'maxItems',
  'format',
] as const;

/** Keywords accepted only at the root of the schema. */
export const ROOT_KEYWORDS = ['$schema', '$defs', 'definitions'] as const;

/**
 * Annotations that constrain nothing, accepted and ignored: an answer never
 * takes its value from a `default` or an `examples` entry.
 */
export const ANNOTATION_KEYWORDS = ['title', 'description', 'default', 'examples', '$comment', 'deprecated', 'readOnly', 'writeOnly', 'discriminator'] as const;

export const SUPPORTED_KEYWORDS = [...CONSTRAINT_KEYWORDS, ...ROOT_KEYWORDS, ...ANNOTATION_KEYWORDS] as const;

/** String formats an answer is checked against (the ones OpenAI's structured outputs list). */
export const SUPPORTED_FORMATS = ['date-time', 'date', 'time', 'duration', 'email', 'hostname', 'ipv4', 'ipv6', 'uuid', 'uri'] as const;

/** `$schema` values accepted at the root; within the subset they mean the same. */
export const SUPPORTED_DIALECTS = [
  'http://json-schema.org/draft-07/schema#',
  'http://json-schema.org/draft-07/schema',
  'https://json-schema.org/draft-07/schema#',
  'https://json-schema.org/draft-07/schema',
  'https://json-schema.org/draft/2019-09/schema',
  'https://json-schema.org/draft/2020-12/schema',
] as const;

export const SCHEMA_LIMITS = {
  /** Levels of nested properties / items below the root, after resolving $ref (anyOf adds none). */
  maxDepth: 5,
  /** Properties in all, after resolving $ref. */
  maxProperties: 64,
  maxEnum: 100,
  /** Branches of an anyOf or oneOf. */
  maxAnyOf: 16,
  /** Bound on minItems / maxItems. */
  maxItemsBound: 100,
  /** Bound on minLength / maxLength. */
  maxLengthBound: 10_000,
  /** Schema objects in all, after resolving $ref. */
  maxNodes: 500,
};

const TYPES = ['object', 'array', 'string', 'number', 'integer', 'boolean', 'null'] as const;

/** The subset in words: the OpenAPI description of json_schema.schema (and docs/chat.md's). */
export const SCHEMA_SUBSET_DESCRIPTION =
  "A bounded JSON Schema subset: what pydantic's model_json_schema() (through the openai clients' .parse()) and zod's toJSONSchema / zodResponseFormat emit. " +
  `Honoured: type (one of ${TYPES.join(', ')}, or an array of them), properties, required, additionalProperties (true or false), items (one schema), ` +
  `enum (1 to ${SCHEMA_LIMITS.maxEnum} values), const, anyOf (1 to ${SCHEMA_LIMITS.maxAnyOf} schemas; nullable as anyOf with {"type": "null"}), ` +
  "oneOf only as a discriminated union (pydantic's Field(discriminator=...): with discriminator.propertyName a required const of a different value in every branch, so it means what anyOf does), " +
  "$ref to '#/$defs/<name>' or '#/definitions/<name>', minimum, maximum, exclusiveMinimum, exclusiveMaximum, " +
  `minLength and maxLength (0 to ${SCHEMA_LIMITS.maxLengthBound}), minItems and maxItems (0 to ${SCHEMA_LIMITS.maxItemsBound}), format (${SUPPORTED_FORMATS.join(', ')}). ` +
  'At the root only: $schema (draft-07, 2019-09 or 2020-12), $defs, definitions. ' +
  `Annotations accepted and ignored, never used as a value: ${ANNOTATION_KEYWORDS.join(', ')}. ` +
  `After resolving $ref: at most ${SCHEMA_LIMITS.maxDepth} levels of nested properties and items, ${SCHEMA_LIMITS.maxProperties} properties in all, ${SCHEMA_LIMITS.maxNodes} schema objects; a recursive $ref is refused. ` +
  'Anything else (pattern, patternProperties, allOf, not, if/then/else, any other oneOf, a remote $ref, ...) is 400 with param naming the keyword, e.g. response_format.json_schema.schema.properties.code.pattern.';

export const SCHEMA_PARAM = 'response_format.json_schema.schema';

type Schema = Record<string, unknown>;

export type SubsetCheck = { ok: true; validate: ValidateFunction } | { ok: false; path: string; message: string };

// --- 1. The subset as a JSON Schema --------------------------------------------

const integerUpTo = (max: number) => ({ type: 'integer', minimum: 0, maximum: max });

function nodeSchema(root: boolean): Schema {
  const node = { $ref: '#/definitions/node' };
  return {
    type: 'object',
    additionalProperties: false,
    properties: {
      type: { anyOf: [{ enum: TYPES }, { type: 'array', items: { enum: TYPES }, minItems: 1, uniqueItems: true }] },
      properties: { type: 'object', additionalProperties: node },
      required: { type: 'array', items: { type: 'string' }, uniqueItems: true },
      additionalProperties: { type: 'boolean' },
      items: node,
      enum: { type: 'array', minItems: 1, maxItems: SCHEMA_LIMITS.maxEnum },
      const: true,
      anyOf: { type: 'array', minItems: 1, maxItems: SCHEMA_LIMITS.maxAnyOf, items: node },
      oneOf: { type: 'array', minItems: 1, maxItems: SCHEMA_LIMITS.maxAnyOf, items: node },
      discriminator: {
        type: 'object',
        additionalProperties: false,
        required: ['propertyName'],
        properties: { propertyName: { type: 'string' }, mapping: { type: 'object', additionalProperties: { type: 'string' } } },
      },
      // Local only: #/$defs/Name or #/definitions/Name. No remote, no '#', no other pointer.
      $ref: { type: 'string', pattern: '^#/(\\$defs|definitions)/[^/]+$' },
      minimum: { type: 'number' },
      maximum: { type: 'number' },
      exclusiveMinimum: { type: 'number' },
      exclusiveMaximum: { type: 'number' },
      minLength: integerUpTo(SCHEMA_LIMITS.maxLengthBound),
      maxLength: integerUpTo(SCHEMA_LIMITS.maxLengthBound),
      minItems: integerUpTo(SCHEMA_LIMITS.maxItemsBound),
      maxItems: integerUpTo(SCHEMA_LIMITS.maxItemsBound),
      format: { enum: SUPPORTED_FORMATS },
      title: { type: 'string' },
      description: { type: 'string' },
      default: true,
      examples: { type: 'array' },
      $comment: { type: 'string' },
      deprecated: { type: 'boolean' },
      readOnly: { type: 'boolean' },
      writeOnly: { type: 'boolean' },
      ...(root
        ? {
            $schema: { enum: SUPPORTED_DIALECTS },
            $defs: { type: 'object', additionalProperties: node },
            definitions: { type: 'object', additionalProperties: node },
          }
        : {}),
    },
  };
}

/** The subset, published as data (the adapter catalog may show it). */
export const SUBSET_META_SCHEMA = { ...nodeSchema(true), definitions: { node: nodeSchema(false) } };

const metaAjv = new Ajv.default({ allErrors: false, strict: true });
const validateSubset = metaAjv.compile(SUBSET_META_SCHEMA);

function decodePointer(pointer: string): string[] {
  return pointer
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

const join = (segments: (string | number)[]) => [SCHEMA_PARAM, ...segments].join('.');

/** The first error Ajv found, as a param and a message a person can act on. */
function describe(errors: ErrorObject[], schema: unknown): { path: string; message: string } {
  // An anyOf (the `type` keyword) reports its branches first; its own error names the keyword.
  const error = errors.find((e) => e.keyword === 'anyOf') ?? errors[0]!;
  const at = decodePointer(error.instancePath);
  if (error.keyword === 'additionalProperties') {
    const keyword = (error.params as { additionalProperty: string }).additionalProperty;
    const message = (ROOT_KEYWORDS as readonly string[]).includes(keyword)
      ? `JSON Schema keyword '${keyword}' is supported only at the root of the schema`
      : `unsupported JSON Schema keyword '${keyword}'; supported: ${SUPPORTED_KEYWORDS.join(', ')}`;
    return { path: join([...at, keyword]), message };
  }
  const keyword = at.at(-1) ?? 'schema';
  if (keyword === '$ref') {
    const value = at.reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key], schema);
    // zod's toJSONSchema writes a schema that contains itself as {"$ref": "#"}.
    if (value === '#') return { path: join(at), message: "recursive $ref '#' (the root) is not supported" };
    return { path: join(at), message: "only local $ref to '#/$defs/<name>' or '#/definitions/<name>' is supported" };
  }
  if (keyword === '$schema') return { path: join(at), message: `$schema must be one of ${SUPPORTED_DIALECTS.join(', ')}` };
  if (keyword === 'format') return { path: join(at), message: `format must be one of ${SUPPORTED_FORMATS.join(', ')}` };
  if (keyword === 'type') return { path: join(at), message: `type must be one of ${TYPES.join(', ')}, or an array of them` };
  if (keyword === 'enum' && (error.keyword === 'maxItems' || error.keyword === 'minItems'))
    return { path: join(at), message: `enum must list 1 to ${SCHEMA_LIMITS.maxEnum} values` };
  if (at.length === 0) return { path: SCHEMA_PARAM, message: 'must be a JSON Schema object' };
  return { path: join(at), message: `${keyword} ${error.message ?? 'is not valid'}` };
}

// --- 2. Resolving $ref and bounding the resolved tree --------------------------

/** The definition a local `$ref` names, or undefined. */
export function resolveRef(root: Schema, ref: string): Schema | undefined {
  const match = /^#\/(\$defs|definitions)\/([^/]+)$/.exec(ref);
  if (!match) return undefined;
  let name: string;
  try {
    name = decodeURIComponent(match[2]!).replace(/~1/g, '/').replace(/~0/g, '~');
  } catch {
    return undefined;
  }
  const defs = root[match[1]!];
  if (typeof defs !== 'object' || defs === null || !Object.hasOwn(defs, name)) return undefined;
  const target = (defs as Record<string, unknown>)[name];
  return typeof target === 'object' && target !== null && !Array.isArray(target) ? (target as Schema) : undefined;
}

/** A schema with its $ref chain followed (a recursive chain ends at the last schema reached). */
function followRefs(root: Schema, node: Schema): Schema {
  const seen = new Set<string>();
  let current = node;
  while (typeof current.$ref === 'string' && !seen.has(current.$ref)) {
    seen.add(current.$ref);
    const target = resolveRef(root, current.$ref);
    if (!target) return current;
    current = target;
  }
  return current;
}

/**
 * Why a oneOf is not a discriminated union, or null: every branch must require
 * discriminator.propertyName as a const, each branch a different one. Then
 * no value can meet two branches, so oneOf means what anyOf means.
 */
function discriminatedProblem(root: Schema, node: Schema): string | null {
  const rule =
    "oneOf is supported only as a discriminated union: with discriminator.propertyName, a property every branch requires as a const of a different value (pydantic's Field(discriminator=...)); use anyOf otherwise";
  const property = (node.discriminator as { propertyName?: string } | undefined)?.propertyName;
  if (property === undefined) return rule;
  const seen: unknown[] = [];
  for (const raw of node.oneOf as Schema[]) {
    const branch = followRefs(root, raw);
    const value = followRefs(root, ((branch.properties ?? {}) as Record<string, Schema>)[property] ?? {}).const;
    if (value === undefined || !((branch.required ?? []) as string[]).includes(property)) return rule;
    if (seen.some((v) => JSON.stringify(v) === JSON.stringify(value))) return rule;
    seen.push(value);
  }
  return null;
}

type Failure = { ok: false; path: string; message: string };
const fail = (segments: (string | number)[], message: string): Failure => ({ ok: false, path: join(segments), message });

function checkResolved(root: Schema): Failure | null {
  let properties = 0;
  let nodes = 0;
  /** `at`: where the node is written (a $def's own path once a $ref is followed); `refs`: the $refs being followed. */
  function visit(node: Schema, at: (string | number)[], depth: number, refs: string[]): Failure | null {
    nodes += 1;
    if (nodes > SCHEMA_LIMITS.maxNodes) return fail(at, `more than ${SCHEMA_LIMITS.maxNodes} schema objects once $ref is resolved`);
    if (depth > SCHEMA_LIMITS.maxDepth) return fail(at, `nesting deeper than ${SCHEMA_LIMITS.maxDepth} levels (after resolving $ref) is not supported`);
    if (typeof node.$ref === 'string') {
      const ref = node.$ref;
      if (refs.includes(ref)) return fail([...at, '$ref'], `recursive $ref '${ref}' is not supported`);
      const target = resolveRef(root, ref);
      if (!target) return fail([...at, '$ref'], `$ref '${ref}' names no definition of this schema`);
      const problem = visit(
        target,
        ref
          .slice(2)
          .split('/')
          .map((s) => decodeURIComponent(s)),
        depth,
        [...refs, ref],
      );
      if (problem) return problem;
    } else if (node.type === undefined && node.enum === undefined && node.const === undefined && node.anyOf === undefined && node.oneOf === undefined) {
      return fail([...at, 'type'], `type must be one of ${TYPES.join(', ')} (or the schema an enum, const, anyOf or $ref)`);
    }
    const types = Array.isArray(node.type) ? node.type : [node.type];
    if (node.properties !== undefined) {
      const props = node.properties as Record<string, Schema>;
      for (const [name, child] of Object.entries(props)) {
        properties += 1;
        if (properties > SCHEMA_LIMITS.maxProperties)
          return fail([...at, 'properties'], `at most ${SCHEMA_LIMITS.maxProperties} properties in all (after resolving $ref)`);
        const problem = visit(child, [...at, 'properties', name], depth + 1, refs);
        if (problem) return problem;
      }
    }
    if (node.required !== undefined && (node.required as string[]).some((r) => !Object.hasOwn((node.properties ?? {}) as object, r))) {
      return fail([...at, 'required'], 'required must list names defined in properties');
    }
    if (types.includes('array') && node.items === undefined) return fail([...at, 'items'], 'arrays must define items');
    if (node.items !== undefined) {
      const problem = visit(node.items as Schema, [...at, 'items'], depth + 1, refs);
      if (problem) return problem;
    }
    if (Array.isArray(node.oneOf)) {
      const problem = discriminatedProblem(root, node);
      if (problem) return fail([...at, 'oneOf'], problem);
    }
    for (const keyword of ['anyOf', 'oneOf'] as const) {
      if (!Array.isArray(node[keyword])) continue;
      for (const [i, branch] of (node[keyword] as Schema[]).entries()) {
        const problem = visit(branch, [...at, keyword, i], depth, refs);
        if (problem) return problem;
      }
    }
    return null;
  }
  return visit(root, [], 0, []);
}

// --- 3. Compiling with Ajv, strict -----------------------------------------------

/** Keywords Ajv knows that the subset leaves out: removed, so strict mode makes any of them an unknown keyword. */
const REMOVED_KEYWORDS = [
  'multipleOf',
  'pattern',
  'uniqueItems',
  'maxProperties',
  'minProperties',
  'dependentRequired',
  'additionalItems',
  'contains',
  'dependencies',
  'propertyNames',
  'patternProperties',
  'not',
  'allOf',
  'if',
  'then',
  'else',
];

/**
 * An Ajv instance for one request's schema. One instance per schema, because
 * an Ajv instance keeps what it compiled (its code scope) even after
 * removeSchema: a shared one grows with every distinct schema clients send.
 */
function compiler() {
  const ajv = new Ajv.default({
    strict: true,
    allowUnionTypes: true,
    allErrors: false,
    // Step 1 validated the keywords against the subset; the draft meta-schema needs keywords removed below.
    meta: false,
    validateSchema: false,
    addUsedSchema: false,
    // Schemas are compiled once per request: the optimiser would cost more than it saves.
    code: { optimize: false },
  });
  addFormats.default(ajv, [...SUPPORTED_FORMATS]);
  for (const keyword of REMOVED_KEYWORDS) ajv.removeKeyword(keyword);
  // An annotation here: the distinct consts of a discriminated oneOf already tell the branches apart.
  ajv.addKeyword('discriminator');
  return ajv;
}

/** Compiles an accepted schema (its $schema left out: within the subset every accepted dialect means the same). */
function compile(schema: Schema): ValidateFunction | Failure {
  const { $schema: _dialect, ...rest } = schema;
  try {
    return compiler().compile(rest);
  } catch (err) {
    // Ajv names the schema location of strict-mode problems as `at "#/..."`.
    const message = (err as Error).message.replace(/^strict mode: /, '');
    const at = /at "#([^"]*)"/.exec(message)?.[1];
    const keyword = /for keyword "([^"]+)"/.exec(message)?.[1];
    const segments = [...(at ? decodePointer(at) : []), ...(at && keyword ? [keyword] : [])];
    return { ok: false, path: join(segments), message: message.replace(/ at "#[^"]*"/, '').replace(/ \(strict\w+\)$/, '') };
  }
}

/** The supported formats' checks, for formatAccepts (this instance compiles nothing). */
const formats = new Ajv.default({ meta: false, validateSchema: false });
addFormats.default(formats, [...SUPPORTED_FORMATS]);

const compiled = new WeakMap<object, ValidateFunction>();

/** Checks a response_format schema against the subset and its limits, and compiles it. */
export function checkSchemaSubset(schema: unknown): SubsetCheck {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return { ok: false, path: SCHEMA_PARAM, message: 'must be a JSON Schema object' };
  const known = compiled.get(schema);
  if (known) return { ok: true, validate: known };
  if (!validateSubset(schema)) return { ok: false, ...describe(validateSubset.errors ?? [], schema) };
  const problem = checkResolved(schema as Schema);
  if (problem) return problem;
  const validate = compile(schema as Schema);
  if (typeof validate !== 'function') return validate;
  compiled.set(schema, validate);
  return { ok: true, validate };
}

/** The compiled validator of a schema (cached per schema object), or null when the schema is outside the subset. */
export function validatorFor(schema: Record<string, unknown>): ValidateFunction | null {
  const check = checkSchemaSubset(schema);
  return check.ok ? check.validate : null;
}

/** Whether a string meets one of the supported formats (used to keep only stated values that do). */
export function formatAccepts(format: string, value: string): boolean {
  if (!(SUPPORTED_FORMATS as readonly string[]).includes(format)) return false;
  const known = formats.formats[format];
  const check = typeof known === 'object' && known !== null && !(known instanceof RegExp) ? known.validate : known;
  if (check instanceof RegExp) return check.test(value);
  if (typeof check === 'function') return (check as (s: string) => boolean)(value) === true;
  return false;
}
