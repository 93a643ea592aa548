// The grounding check of a model's structured answer (domain/chat/grounded-values.ts): every value
// must be stated by the request's text; a required one that is not makes the answer missing it
// (the chat layer refuses), an optional one is dropped or null.
import { describe, expect, it } from 'vitest';
import { groundedValues, groundingSourceOf } from '../domain/chat/grounded-values.ts';
import { enforceResponseFormat, ungroundedRefusal } from '../services/chat/structured-output.ts';
import { object } from './support/json-schema.ts';

const ok = (value: unknown, dropped: string[] = []) => ({ ok: true, value, dropped });

describe('strings', () => {
  const schema = object({ city: { type: 'string' }, country: { type: 'string' } });

  it('keeps a value the text states, compared without case, spacing or punctuation', () => {
    expect(groundedValues(schema, { city: 'lisbon', country: 'PORTUGAL' }, 'Our office is in Lisbon,  Portugal.')).toEqual(
      ok({ city: 'lisbon', country: 'PORTUGAL' }),
    );
    expect(groundedValues(object({ region: { type: 'string' } }), { region: 'eu west 1' }, 'The region is eu-west-1.')).toEqual(ok({ region: 'eu west 1' }));
  });

  it('keeps a value whose words all stand in one sentence, up to inflection', () => {
    const text = 'The weekly meetings of the platform team happen on Mondays. Budget is tight.';
    expect(groundedValues(object({ topic: { type: 'string' } }), { topic: 'platform team meeting' }, text)).toEqual(ok({ topic: 'platform team meeting' }));
    // Words taken from two sentences are a combination the text does not state.
    expect(groundedValues(object({ topic: { type: 'string' } }), { topic: 'platform budget' }, text)).toEqual({ ok: false, missing: ['topic'] });
  });

  it('refuses an invented required value, and an empty string, naming the field', () => {
    expect(groundedValues(schema, { city: 'Paris', country: 'France' }, 'Name a city and the country it is in.')).toEqual({
      ok: false,
      missing: ['city', 'country'],
    });
    expect(groundedValues(schema, { city: 'Lisbon', country: '' }, 'The office is in Lisbon.')).toEqual({ ok: false, missing: ['country'] });
  });

  it('a negation is part of what a value says', () => {
    expect(groundedValues(object({ status: { type: 'string' } }), { status: 'not approved' }, 'The budget was approved.')).toEqual({
      ok: false,
      missing: ['status'],
    });
  });
});

describe('numbers', () => {
  const amount = object({ amount: { type: 'number' } });

  it.each([
    ['12', 12],
    ['12.0', 12],
    ['12%', 12],
    ['1,000', 1000],
    ['$300', 300],
    ['three', 3],
    ['2024-05-01', 2024],
  ])('"%s" states %d', (stated, value) => {
    expect(groundedValues(amount, { amount: value }, `The amount is ${stated}.`)).toEqual(ok({ amount: value }));
  });

  it('a number the text does not hold is invented', () => {
    expect(groundedValues(amount, { amount: 1200 }, 'The amount is 12%.')).toEqual({ ok: false, missing: ['amount'] });
    expect(groundedValues(amount, { amount: 0 }, 'Pay the invoice.')).toEqual({ ok: false, missing: ['amount'] });
    expect(groundedValues(object({ code: { type: 'string' } }), { code: '1000' }, 'Code 1,000 applies.')).toEqual(ok({ code: '1000' }));
  });
});

describe('booleans, enums and consts', () => {
  it('a boolean passes when the text states it or raises the field, not otherwise', () => {
    const urgent = object({ urgent: { type: 'boolean' } });
    expect(groundedValues(urgent, { urgent: false }, "This isn't urgent.")).toEqual(ok({ urgent: false }));
    expect(groundedValues(urgent, { urgent: true }, "This isn't urgent.")).toEqual({ ok: false, missing: ['urgent'] });
    expect(groundedValues(urgent, { urgent: true }, 'Is it urgent? The login page is down.')).toEqual(ok({ urgent: true }));
    expect(groundedValues(urgent, { urgent: true }, 'The login page is down.')).toEqual({ ok: false, missing: ['urgent'] });
  });

  it('an enum value passes when the text mentions it (a question offering it counts) or it is the only choice', () => {
    const kind = object({ kind: { type: 'string', enum: ['complaint', 'compliment'] } });
    expect(groundedValues(kind, { kind: 'complaint' }, 'Is this a complaint or a compliment? The soup was cold.')).toEqual(ok({ kind: 'complaint' }));
    // The labels never named: classifying is an inference, not a stated value.
    expect(groundedValues(kind, { kind: 'complaint' }, 'The soup was cold.')).toEqual({ ok: false, missing: ['kind'] });
    expect(groundedValues(object({ unit: { enum: ['eur'] } }), { unit: 'eur' }, 'Nothing about money.')).toEqual(ok({ unit: 'eur' }));
    expect(groundedValues(object({ status: { enum: ['in_progress', 'done'] } }), { status: 'in_progress' }, 'It is in progress.')).toEqual(
      ok({ status: 'in_progress' }),
    );
  });

  it('a const is the schema’s, and a discriminated branch is checked by its own fields', () => {
    const event = {
      oneOf: [object({ kind: { const: 'call' }, hour: { type: 'integer' } }), object({ kind: { const: 'visit' }, city: { type: 'string' } })],
      discriminator: { propertyName: 'kind' },
    };
    expect(groundedValues(object({ event }), { event: { kind: 'visit', city: 'Lyon' } }, 'We go to Lyon.')).toEqual(
      ok({ event: { kind: 'visit', city: 'Lyon' } }),
    );
    expect(groundedValues(object({ event }), { event: { kind: 'call', hour: 10 } }, 'We go to Lyon.')).toEqual({ ok: false, missing: ['event.hour'] });
  });
});

describe('optional values', () => {
  it('an ungrounded property that is not required is dropped', () => {
    const schema = object({ city: { type: 'string' }, street: { type: 'string' } }, ['city']);
    expect(groundedValues(schema, { city: 'Oslo', street: 'Main Street' }, 'The office is in Oslo.')).toEqual(ok({ city: 'Oslo' }, ['street']));
  });

  it('an ungrounded nullable value is null, as Optional means in strict schemas', () => {
    const schema = object({ city: { type: 'string' }, room: { anyOf: [{ type: 'string' }, { type: 'null' }] }, hour: { type: ['integer', 'null'] } });
    expect(groundedValues(schema, { city: 'Oslo', room: 'Atlas', hour: 9 }, 'The office is in Oslo.')).toEqual(
      ok({ city: 'Oslo', room: null, hour: null }, ['room', 'hour']),
    );
    expect(groundedValues(schema, { city: 'Oslo', room: null, hour: 9 }, 'Oslo, at 9.')).toEqual(ok({ city: 'Oslo', room: null, hour: 9 }));
  });

  it('invented array items are dropped; the array is missing when fewer than minItems stay', () => {
    const regions = { type: 'array', items: { type: 'string' }, minItems: 1 };
    expect(groundedValues(object({ regions }), { regions: ['Frankfurt', 'Tokyo'] }, 'Regions: Frankfurt and Dublin.')).toEqual(
      ok({ regions: ['Frankfurt'] }, ['regions[1]']),
    );
    expect(groundedValues(object({ regions }), { regions: ['Tokyo'] }, 'Regions: Frankfurt and Dublin.')).toEqual({ ok: false, missing: ['regions'] });
  });

  it('nested required fields are named by their path', () => {
    const schema = object({ meeting: object({ hour: { type: 'integer' }, room: { type: 'string' } }) });
    expect(groundedValues(schema, { meeting: { hour: 10, room: 'Atlas' } }, 'Book room Atlas.')).toEqual({ ok: false, missing: ['meeting.hour'] });
  });

  it('follows $ref to $defs', () => {
    const schema = { ...object({ home: { $ref: '#/$defs/Address' } }), $defs: { Address: object({ city: { type: 'string' } }) } };
    expect(groundedValues(schema, { home: { city: 'Lisbon' } }, 'I live in Lisbon.')).toEqual(ok({ home: { city: 'Lisbon' } }));
    expect(groundedValues(schema, { home: { city: 'Porto' } }, 'I live in Lisbon.')).toEqual({ ok: false, missing: ['home.city'] });
  });
});

describe('in the chat layer (enforceResponseFormat with a source)', () => {
  const format = { kind: 'json_schema' as const, name: 'place', schema: object({ city: { type: 'string' }, note: { type: 'string' } }, ['city']) };
  const answer = (content: string) => ({ content, refusal: null, finishReason: 'stop' as const, usage: { promptTokens: 10, completionTokens: 5 } });

  it('refuses an invented required value with the ungrounded wording, keeping usage, and quotes none of the text', () => {
    const source = 'Name a city. SECRET-MARKER';
    const out = enforceResponseFormat(format, answer('{"city":"Paris"}'), source);
    expect(out).toEqual({ content: null, refusal: ungroundedRefusal(['city']), finishReason: 'stop', usage: { promptTokens: 10, completionTokens: 5 } });
    expect(out.refusal).not.toContain('SECRET-MARKER');
  });

  it('keeps a grounded answer as it came, and rewrites one whose optional values were dropped', () => {
    const kept = answer('{ "city": "Lisbon" }');
    expect(enforceResponseFormat(format, kept, 'The office is in Lisbon.')).toBe(kept);
    expect(enforceResponseFormat(format, answer('{"city":"Lisbon","note":"sunny all year"}'), 'The office is in Lisbon.').content).toBe('{"city":"Lisbon"}');
  });

  it('without a source (the local provider) checks only the schema', () => {
    const out = answer('{"city":"Paris"}');
    expect(enforceResponseFormat(format, out)).toBe(out);
  });

  it('the source is the user, system, developer and tool messages and the grounding, not the assistant’s turns', () => {
    const source = groundingSourceOf({
      messages: [
        { role: 'system', content: 'Extract the place.' },
        { role: 'assistant', content: 'It is Paris.' },
        { role: 'user', content: 'Where is the office?' },
      ],
      grounding: { memory: [{ id: 'm1', subject: 'office', content: 'The office is in Lisbon.' }], document: 'Opened in 2019.' },
    });
    expect(source).toBe('Extract the place.\nWhere is the office?\noffice. The office is in Lisbon.\nOpened in 2019.');
    expect(enforceResponseFormat(format, answer('{"city":"Paris"}'), source).refusal).toBe(ungroundedRefusal(['city']));
    expect(enforceResponseFormat(format, answer('{"city":"Lisbon"}'), source).refusal).toBeNull();
  });
});
