// Grounded extraction for chat structured output: values come only from what
// the text states; a required field without one is reported missing, never guessed.
import { describe, expect, it } from 'vitest';
import { fillSchema } from '../domain/chat/fill-schema.ts';

type Schema = Record<string, unknown>;

const object = (properties: Record<string, Schema>, required = Object.keys(properties)): Schema => ({
  type: 'object',
  properties,
  required,
  additionalProperties: false,
});

const priority = { type: 'string', enum: ['low', 'medium', 'high'] };

describe('no value is invented', () => {
  it('an enum the text does not mention is missing, not its first value', () => {
    expect(fillSchema(object({ priority }), 'Please fix the login bug on the settings page.')).toEqual({ ok: false, missing: ['priority'] });
  });

  it('a number the text does not state is missing, not 0', () => {
    expect(fillSchema(object({ budget: { type: 'number' } }), 'We want to move the staging cluster to a cheaper region.')).toEqual({ ok: false, missing: ['budget'] });
  });

  it('"3pm" is not an hour: numbers glued to letters do not count', () => {
    const schema = object({ hour: { type: 'integer', minimum: 0, maximum: 23 } });
    expect(fillSchema(schema, "Let's meet at 3pm")).toEqual({ ok: false, missing: ['hour'] });
    expect(fillSchema(object({ version: { type: 'integer' }, cores: { type: 'integer' } }), 'The version is v2 and cores run on x86.')).toEqual({ ok: false, missing: ['version', 'cores'] });
  });

  it('a number in a sentence that does not name the field, or in a question, is not the field', () => {
    expect(fillSchema(object({ hour: { type: 'integer' } }), 'We have 3 rooms. Let us meet then.')).toEqual({ ok: false, missing: ['hour'] });
    expect(fillSchema(object({ budget: { type: 'integer' }, priority }), 'Is the budget 2000 EUR? Or is it high priority?')).toEqual({ ok: false, missing: ['budget', 'priority'] });
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
    expect(fillSchema({ type: 'string', minLength: 5, maxLength: 2 }, 'Compare the hosting costs.', 'impossible')).toEqual({ ok: false, missing: ['impossible'] });
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
    const text = 'Compare the hosting costs of our staging cluster; budget is 2,000 USD per month. Which regions are cheapest? This is high priority. Regions: Frankfurt, Dublin and Paris.';
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
    expect(fillSchema(schema, "The job is remote. This isn't urgent. Approved: yes.")).toEqual({ ok: true, value: { remote: true, urgent: false, approved: true } });
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
      value: { summary: 'We need to migrate the billing service', key_phrases: ['billing service', 'team owns', 'postgres'], questions: ['Which team owns the invoices?'] },
    });
  });

  it('meets a minLength with more of the real text, not with padding', () => {
    const text = 'Ship it. The billing service moves to Postgres.';
    expect(fillSchema(object({ summary: { type: 'string', minLength: 20 } }), text)).toEqual({ ok: true, value: { summary: text } });
  });

  it('gives an empty list when nothing is grounded and no minItems asks for more', () => {
    expect(fillSchema(object({ tags: { type: 'array', items: priority } }), 'Fix the login bug.')).toEqual({ ok: true, value: { tags: [] } });
    expect(fillSchema(object({ tags: { type: 'array', items: priority } }), 'Low effort, high impact.')).toEqual({ ok: true, value: { tags: ['low', 'high'] } });
  });

  it('ignores statements inside questions and negated statements', () => {
    const schema = object({ region: { type: 'string' } });
    expect(fillSchema(schema, 'Which region is cheapest? The region is not decided.')).toEqual({ ok: false, missing: ['region'] });
    expect(fillSchema(schema, 'The region is eu-west-1, for now.')).toEqual({ ok: true, value: { region: 'eu-west-1' } });
  });
});
