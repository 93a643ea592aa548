// Grounded extraction for chat structured output: values come only from what
// the text states; a required field without one is reported missing, never guessed.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { fillSchema } from '../domain/chat/fill-schema.ts';
import { checkSchemaSubset } from '../domain/chat/schema-subset.ts';
import { object, type Schema } from './support/json-schema.ts';

const priority = { type: 'string', enum: ['low', 'medium', 'high'] };

describe('no value is invented', () => {
  it('an enum the text does not mention is missing, not its first value', () => {
    expect(fillSchema(object({ priority }), 'Please fix the login bug on the settings page.')).toEqual({ ok: false, missing: ['priority'] });
  });

  it('a number the text does not state is missing, not 0', () => {
    expect(fillSchema(object({ budget: { type: 'number' } }), 'We want to move the staging cluster to a cheaper region.')).toEqual({
      ok: false,
      missing: ['budget'],
    });
  });

  it('"3pm" is not an hour: numbers glued to letters do not count', () => {
    const schema = object({ hour: { type: 'integer', minimum: 0, maximum: 23 } });
    expect(fillSchema(schema, "Let's meet at 3pm")).toEqual({ ok: false, missing: ['hour'] });
    expect(fillSchema(object({ version: { type: 'integer' }, cores: { type: 'integer' } }), 'The version is v2 and cores run on x86.')).toEqual({
      ok: false,
      missing: ['version', 'cores'],
    });
  });

  it('a number in a sentence that does not name the field, or in a question, is not the field', () => {
    expect(fillSchema(object({ hour: { type: 'integer' } }), 'We have 3 rooms. Let us meet then.')).toEqual({ ok: false, missing: ['hour'] });
    expect(fillSchema(object({ budget: { type: 'integer' }, priority }), 'Is the budget 2000 EUR? Or is it high priority?')).toEqual({
      ok: false,
      missing: ['budget', 'priority'],
    });
  });

  it('an array item with nothing grounded in it is no item', () => {
    const meetings = { type: 'array', items: object({ hour: { type: 'integer' }, room: { type: 'string' } }, []), minItems: 1 };
    expect(fillSchema(object({ meetings }), 'Set up the weekly sync.')).toEqual({ ok: false, missing: ['meetings'] });
    expect(fillSchema(object({ meetings }), 'The room is Atlas.')).toEqual({ ok: true, value: { meetings: [{ room: 'Atlas' }] } });
  });

  it('rejects out-of-range and non-integer numbers instead of clamping or rounding', () => {
    expect(fillSchema(object({ hour: { type: 'integer', minimum: 0, maximum: 23 } }), 'The hour is 27.')).toEqual({ ok: false, missing: ['hour'] });
    expect(fillSchema(object({ hour: { type: 'integer' } }), 'The hour is 9.5.')).toEqual({ ok: false, missing: ['hour'] });
  });

  it('a boolean needs a statement about the field', () => {
    expect(fillSchema(object({ urgent: { type: 'boolean' } }), 'Yes, please fix the login bug.')).toEqual({ ok: false, missing: ['urgent'] });
  });

  it('a string field with no statement of its value is missing', () => {
    expect(fillSchema(object({ owner: { type: 'string' } }), 'Migrate billing to Postgres before March.')).toEqual({ ok: false, missing: ['owner'] });
  });

  it('does not pad below minLength or minItems', () => {
    expect(fillSchema(object({ owner: { type: 'string', minLength: 10 } }), 'The owner is Ann.')).toEqual({ ok: false, missing: ['owner'] });
    const regions = { type: 'array', items: { type: 'string' }, minItems: 3 };
    expect(fillSchema(object({ regions }), 'Regions: Frankfurt and Dublin.')).toEqual({ ok: false, missing: ['regions'] });
  });

  it('names nested required paths, and every missing field at once', () => {
    const schema = object({ meeting: object({ hour: { type: 'integer' }, room: { type: 'string' } }), priority });
    expect(fillSchema(schema, 'Book a meeting; the room is Atlas.')).toEqual({ ok: false, missing: ['meeting.hour', 'priority'] });
  });

  it('a root value without grounding is missing under the schema name', () => {
    expect(fillSchema({ type: 'string', minLength: 5, maxLength: 2 }, 'Compare the hosting costs.', 'impossible')).toEqual({
      ok: false,
      missing: ['impossible'],
    });
  });
});

describe('grounded values', () => {
  it('reads numbers, enums and stated strings from the sentence that names the field', () => {
    const schema = object({
      title: { type: 'string', maxLength: 80 },
      priority,
      regions: { type: 'array', items: { type: 'string' }, minItems: 1, maxItems: 3 },
      budget_usd: { type: 'integer', minimum: 0 },
    });
    const text =
      'Compare the hosting costs of our staging cluster; budget is 2,000 USD per month. Which regions are cheapest? This is high priority. Regions: Frankfurt, Dublin and Paris.';
    expect(fillSchema(schema, text)).toEqual({
      ok: true,
      value: { title: 'hosting costs', priority: 'high', regions: ['Frankfurt', 'Dublin', 'Paris'], budget_usd: 2000 },
    });
  });

  it('takes the value nearest the field name, in its own clause', () => {
    const schema = object({ priority, severity: { enum: ['low', 'medium', 'high'] }, start_hour: { type: 'integer' } });
    expect(fillSchema(schema, 'High priority, low severity. The start hour is 15, with 3 attendees.')).toEqual({
      ok: true,
      value: { priority: 'high', severity: 'low', start_hour: 15 },
    });
  });

  it('matches enum values case-insensitively and word-bounded, including snake_case values', () => {
    const status = { type: 'string', enum: ['todo', 'in_progress', 'done'] };
    expect(fillSchema(object({ status }), 'The ticket is In Progress now.')).toEqual({ ok: true, value: { status: 'in_progress' } });
    expect(fillSchema(object({ status }), 'Nothing is undone.')).toEqual({ ok: false, missing: ['status'] });
  });

  it('reads booleans from explicit statements about the field', () => {
    const schema = object({ remote: { type: 'boolean' }, urgent: { type: 'boolean' }, approved: { type: 'boolean' } });
    expect(fillSchema(schema, "The job is remote. This isn't urgent. Approved: yes.")).toEqual({
      ok: true,
      value: { remote: true, urgent: false, approved: true },
    });
  });

  it('omits optional fields without a value and keeps const values', () => {
    const schema = object({ kind: { const: 'meeting' }, hour: { type: 'integer' }, room: { type: 'string' } }, ['kind', 'hour']);
    expect(fillSchema(schema, 'The hour is 10.')).toEqual({ ok: true, value: { kind: 'meeting', hour: 10 } });
  });

  it('derives text-like and list-like fields from the source, cut at a word boundary', () => {
    const schema = object({
      summary: { type: 'string', maxLength: 40 },
      key_phrases: { type: 'array', items: { type: 'string' }, minItems: 2, maxItems: 3 },
      questions: { type: 'array', items: { type: 'string' } },
    });
    const text = 'We need to migrate the billing service to Postgres before March. Which team owns the invoices?';
    expect(fillSchema(schema, text)).toEqual({
      ok: true,
      value: {
        summary: 'We need to migrate the billing service',
        key_phrases: ['billing service', 'team owns', 'postgres'],
        questions: ['Which team owns the invoices?'],
      },
    });
  });

  it('meets a minLength with more of the real text, not with padding', () => {
    const text = 'Ship it. The billing service moves to Postgres.';
    expect(fillSchema(object({ summary: { type: 'string', minLength: 20 } }), text)).toEqual({ ok: true, value: { summary: text } });
  });

  it('gives an empty list when nothing is grounded and no minItems asks for more', () => {
    expect(fillSchema(object({ tags: { type: 'array', items: priority } }), 'Fix the login bug.')).toEqual({ ok: true, value: { tags: [] } });
    expect(fillSchema(object({ tags: { type: 'array', items: priority } }), 'Low effort, high impact.')).toEqual({
      ok: true,
      value: { tags: ['low', 'high'] },
    });
  });

  it('ignores statements inside questions and negated statements', () => {
    const schema = object({ region: { type: 'string' } });
    expect(fillSchema(schema, 'Which region is cheapest? The region is not decided.')).toEqual({ ok: false, missing: ['region'] });
    expect(fillSchema(schema, 'The region is eu-west-1, for now.')).toEqual({ ok: true, value: { region: 'eu-west-1' } });
  });
});

// What the official clients send: pydantic through .parse() (all properties required,
// Optional as anyOf with null, nested models as $defs) and zod's toJSONSchema.
describe('$ref, anyOf, type arrays and const', () => {
  const address = object({ city: { type: 'string' }, street: { anyOf: [{ type: 'string' }, { type: 'null' }] } });

  it('resolves local $refs to $defs and definitions, also for list items', () => {
    const schema = {
      ...object({ home: { $ref: '#/$defs/Address' }, guests: { type: 'array', items: { $ref: '#/$defs/Guest' } } }),
      $defs: { Address: address, Guest: object({ name: { type: 'string' } }) },
    };
    expect(fillSchema(schema, 'The city is Berlin. The name is Ada.')).toEqual({
      ok: true,
      value: { home: { city: 'Berlin', street: null }, guests: [{ name: 'Ada' }] },
    });
    const draft7 = { ...object({ home: { $ref: '#/definitions/Address', description: 'Where they live.' } }), definitions: { Address: address } };
    expect(fillSchema(draft7, 'The street is Main Street. The city is Oslo.')).toEqual({ ok: true, value: { home: { city: 'Oslo', street: 'Main Street' } } });
  });

  it('a required field behind a $ref without a stated value is still missing, by its path', () => {
    const schema = { ...object({ home: { $ref: '#/$defs/Address' } }), $defs: { Address: address } };
    expect(fillSchema(schema, 'The street is Main Street.')).toEqual({ ok: false, missing: ['home.city'] });
  });

  it('a nullable field with no stated value is null; with one, the value', () => {
    const schema = object({
      room: { anyOf: [{ type: 'string' }, { type: 'null' }] },
      hour: { type: ['integer', 'null'] },
      level: { anyOf: [priority, { type: 'null' }] },
    });
    expect(fillSchema(schema, 'Book the meeting.')).toEqual({ ok: true, value: { room: null, hour: null, level: null } });
    expect(fillSchema(schema, 'The room is Atlas. The hour is 9. The level is high.')).toEqual({ ok: true, value: { room: 'Atlas', hour: 9, level: 'high' } });
  });

  it('a required non-nullable field with no stated value still refuses, next to nullable ones', () => {
    const schema = object({ room: { type: ['string', 'null'] }, hour: { type: 'integer' } });
    expect(fillSchema(schema, 'The room is Atlas.')).toEqual({ ok: false, missing: ['hour'] });
  });

  it('an enum that lists null is null when the text names none of its values', () => {
    expect(fillSchema(object({ level: { enum: ['low', 'high', null] } }), 'Fix the bug.')).toEqual({ ok: true, value: { level: null } });
  });

  it('an optional nested object is null unless the text names it, even when its fields are stated for another one', () => {
    const schema = {
      ...object({ home: { $ref: '#/$defs/Address' }, work: { anyOf: [{ $ref: '#/$defs/Address' }, { type: 'null' }] } }),
      $defs: { Address: address },
    };
    expect(fillSchema(schema, 'The city is London.')).toEqual({ ok: true, value: { home: { city: 'London', street: null }, work: null } });
    // Named but incomplete: without its required city there is no work address, not a made-up one.
    const work = { ...object({ work: { anyOf: [{ $ref: '#/$defs/Address' }, { type: 'null' }] } }), $defs: { Address: address } };
    expect(fillSchema(work, 'The work street is Baker Street.')).toEqual({ ok: true, value: { work: null } });
    expect(fillSchema(work, 'At work: the city is Paris.')).toEqual({ ok: true, value: { work: { city: 'Paris', street: null } } });
  });

  it('an optional nested enum is taken only from a sentence that names the field', () => {
    const schema = object({ priority, severity: { anyOf: [{ type: 'string', enum: ['low', 'high'] }, { type: 'null' }] } });
    expect(fillSchema(schema, 'This is high priority.')).toEqual({ ok: true, value: { priority: 'high', severity: null } });
  });

  it('picks the anyOf branch the text supports, told apart by the const it mentions', () => {
    const event = {
      anyOf: [
        object({ kind: { const: 'call' }, hour: { type: 'integer' } }),
        object({ kind: { const: 'meeting' }, hour: { type: 'integer' }, room: { type: 'string' } }),
      ],
    };
    expect(fillSchema(object({ event }), 'This is a meeting. The hour is 10. The room is Atlas.')).toEqual({
      ok: true,
      value: { event: { kind: 'meeting', hour: 10, room: 'Atlas' } },
    });
    expect(fillSchema(object({ event }), 'Schedule a call; the hour is 10.')).toEqual({ ok: true, value: { event: { kind: 'call', hour: 10 } } });
    // The text names neither kind: choosing one would be a guess.
    expect(fillSchema(object({ event }), 'The hour is 10.')).toEqual({ ok: false, missing: ['event'] });
  });

  it('a discriminated oneOf (pydantic) is filled as anyOf: the branch whose const the text mentions', () => {
    const schema = {
      ...object({
        event: {
          oneOf: [{ $ref: '#/$defs/Call' }, { $ref: '#/$defs/Visit' }],
          discriminator: { propertyName: 'kind', mapping: { call: '#/$defs/Call', visit: '#/$defs/Visit' } },
        },
      }),
      $defs: {
        Call: object({ kind: { type: 'string', const: 'call' }, hour: { type: 'integer' } }),
        Visit: object({ kind: { type: 'string', const: 'visit' }, city: { type: 'string' } }),
      },
    };
    expect(fillSchema(schema, 'Plan a visit. The city is Lyon.')).toEqual({ ok: true, value: { event: { kind: 'visit', city: 'Lyon' } } });
    expect(fillSchema(schema, 'The hour is 10.')).toEqual({ ok: false, missing: ['event'] });
  });

  it('a type array without null takes the first type the text states a value for', () => {
    const schema = object({ code: { type: ['integer', 'string'] } });
    expect(fillSchema(schema, 'The code is 42.')).toEqual({ ok: true, value: { code: 42 } });
    expect(fillSchema(schema, 'The code is ABC-7.')).toEqual({ ok: true, value: { code: 'ABC-7' } });
    expect(fillSchema(schema, 'No code yet.')).toEqual({ ok: false, missing: ['code'] });
  });

  it("const values are the schema's own, with a type or without", () => {
    expect(fillSchema(object({ kind: { type: 'string', const: 'person' }, v: { const: 2 } }), 'Nothing stated.')).toEqual({
      ok: true,
      value: { kind: 'person', v: 2 },
    });
  });

  it('a format keeps only stated values that meet it, and exclusive bounds reject the bound', () => {
    const schema = object({ due: { type: 'string', format: 'date' } });
    expect(fillSchema(schema, 'The due date is tomorrow.')).toEqual({ ok: false, missing: ['due'] });
    expect(fillSchema(schema, 'Due: 2024-05-01.')).toEqual({ ok: true, value: { due: '2024-05-01' } });
    expect(fillSchema(object({ seats: { type: 'integer', exclusiveMinimum: 0 } }), 'The seats are 0.')).toEqual({ ok: false, missing: ['seats'] });
  });

  it('never answers with a default or an example', () => {
    const schema = object({
      room: { type: 'string', default: 'Atlas', examples: ['Atlas'] },
      note: { anyOf: [{ type: 'string' }, { type: 'null' }], default: 'n/a' },
    });
    expect(fillSchema(schema, 'Book a slot.')).toEqual({ ok: false, missing: ['room'] });
  });
});

describe('the schema subset (Ajv)', () => {
  const param = (path: string) => `response_format.json_schema.schema${path}`;
  const refused = (schema: unknown) => {
    const check = checkSchemaSubset(schema);
    return check.ok ? 'accepted' : check.path;
  };

  it('accepts what pydantic and zod emit: $schema, $defs / definitions with local $ref, anyOf, type arrays, const, annotations', () => {
    const zod = z.object({
      name: z.string().describe('Their name.'),
      age: z.int().nullable(),
      kind: z.literal('person'),
      tags: z.array(z.string()).max(3),
      home: z.object({ city: z.string(), street: z.string().nullable() }),
    });
    expect(refused(z.toJSONSchema(zod))).toBe('accepted');
    expect(refused(z.toJSONSchema(zod, { target: 'draft-7' }))).toBe('accepted');
    expect(
      refused({
        $schema: 'http://json-schema.org/draft-07/schema#',
        ...object({ a: { $ref: '#/definitions/A' } }),
        definitions: { A: { type: 'string', title: 'A', default: 'x', examples: ['y'] } },
      }),
    ).toBe('accepted');
    expect(refused({ ...object({ a: { type: ['string', 'null'], $comment: 'c', deprecated: true } }), title: 'T', description: 'D' })).toBe('accepted');
  });

  it('names an unsupported keyword where it is written, also inside $defs', () => {
    expect(refused(object({ code: { type: 'string', pattern: '^[A-Z]+$' } }))).toBe(param('.properties.code.pattern'));
    expect(
      refused({ ...object({ a: { $ref: '#/$defs/Address' } }), $defs: { Address: { type: 'object', patternProperties: { '^x': { type: 'string' } } } } }),
    ).toBe(param('.$defs.Address.patternProperties'));
    expect(refused({ type: 'object', if: { properties: {} }, then: { required: [] } })).toBe(param('.if'));
    expect(refused(object({ a: { oneOf: [{ type: 'string' }] } }))).toBe(param('.properties.a.oneOf'));
    // oneOf only as a discriminated union: every branch requires the property as a const of its own.
    const branch = (kind: string) => object({ kind: { type: 'string', const: kind }, n: { type: 'integer' } });
    expect(refused(object({ a: { oneOf: [branch('x'), branch('y')], discriminator: { propertyName: 'kind' } } }))).toBe('accepted');
    expect(refused(object({ a: { oneOf: [branch('x'), branch('x')], discriminator: { propertyName: 'kind' } } }))).toBe(param('.properties.a.oneOf'));
    expect(refused(object({ a: { oneOf: [branch('x'), object({ n: { type: 'integer' } })], discriminator: { propertyName: 'kind' } } }))).toBe(
      param('.properties.a.oneOf'),
    );
    expect(refused(object({ a: { anyOf: [{ type: 'string', 'x-custom': 1 }] } }))).toBe(param('.properties.a.anyOf.0.x-custom'));
    expect(refused(object({ a: { type: 'object', $defs: {} } }))).toBe(param('.properties.a.$defs'));
  });

  it('refuses a remote $ref, a $ref to nothing and a recursive $ref', () => {
    expect(refused(object({ a: { $ref: 'https://example.com/schema.json' } }))).toBe(param('.properties.a.$ref'));
    expect(refused(object({ a: { $ref: '#/$defs/Nope' } }))).toBe(param('.properties.a.$ref'));
    // zod's toJSONSchema of a schema that contains itself.
    expect(refused(object({ children: { type: 'array', items: { $ref: '#' } } }))).toBe(param('.properties.children.items.$ref'));
    expect(
      refused({ ...object({ a: { $ref: '#/$defs/Node' } }), $defs: { Node: object({ next: { anyOf: [{ $ref: '#/$defs/Node' }, { type: 'null' }] } }) } }),
    ).toBe(param('.$defs.Node.properties.next.anyOf.0.$ref'));
  });

  it('bounds the schema after resolving $ref: depth, properties, enum, string and array bounds', () => {
    let deep: Schema = { type: 'string' };
    for (let i = 0; i < 5; i++) deep = object({ x: deep });
    expect(refused(deep)).toBe('accepted');
    expect(refused(object({ x: deep }))).toBe(param('.properties.x.properties.x.properties.x.properties.x.properties.x.properties.x'));
    // Three levels in a $def used three levels down: six levels once resolved.
    const viaRef = {
      ...object({ a: object({ b: object({ c: { $ref: '#/$defs/D' } }) }) }),
      $defs: { D: object({ d: object({ e: object({ f: { type: 'string' } }) }) }) },
    };
    expect(refused(viaRef)).toBe(param('.$defs.D.properties.d.properties.e.properties.f'));
    const many = Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`p${i}`, { type: 'string' }]));
    expect(refused(object(many))).toBe(param('.properties'));
    // 33 properties in a $def used twice: 66 once resolved.
    const half = object(Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`p${i}`, { type: 'string' }])));
    expect(refused({ ...object({ a: { $ref: '#/$defs/H' }, b: { $ref: '#/$defs/H' } }), $defs: { H: half } })).toBe(param('.$defs.H.properties'));
    expect(refused(object({ e: { enum: Array.from({ length: 101 }, (_, i) => i) } }))).toBe(param('.properties.e.enum'));
    expect(refused(object({ s: { type: 'string', maxLength: 10_001 } }))).toBe(param('.properties.s.maxLength'));
    expect(refused(object({ l: { type: 'array', items: { type: 'string' }, maxItems: 101 } }))).toBe(param('.properties.l.maxItems'));
  });

  it('checks keyword values and the rest of the structure', () => {
    expect(refused(object({ a: { type: 'strin' } }))).toBe(param('.properties.a.type'));
    expect(refused({ ...object({ a: { type: 'string' } }), required: ['b'] })).toBe(param('.required'));
    expect(refused(object({ l: { type: 'array' } }))).toBe(param('.properties.l.items'));
    expect(refused(object({ a: { description: 'no type' } }))).toBe(param('.properties.a.type'));
    expect(refused({ $schema: 'http://example.com/my-dialect', type: 'object' })).toBe(param('.$schema'));
    expect(refused(object({ a: { type: 'string', format: 'credit-card' } }))).toBe(param('.properties.a.format'));
    expect(refused(object({ a: { type: 'object', additionalProperties: { type: 'string' } } }))).toBe(param('.properties.a.additionalProperties'));
    // Ajv's strict mode: a keyword that does not apply to the declared type.
    expect(refused(object({ a: { type: 'string', minimum: 1 } }))).toBe(param('.properties.a.minimum'));
  });

  it('compiles a validator that holds answers to the schema', () => {
    const check = checkSchemaSubset({
      ...object({ a: { anyOf: [{ $ref: '#/$defs/A' }, { type: 'null' }] } }),
      $defs: { A: object({ n: { type: 'integer', maximum: 3 } }) },
    });
    expect(check.ok).toBe(true);
    if (!check.ok) return;
    expect(check.validate({ a: null })).toBe(true);
    expect(check.validate({ a: { n: 3 } })).toBe(true);
    expect(check.validate({ a: { n: 4 } })).toBe(false);
    expect(check.validate({ a: { n: 1, extra: true } })).toBe(false);
  });
});
