// The schema an embedded model's json_schema answer is decoded under: required free strings are never empty.
import { describe, expect, it } from 'vitest';
import { nonEmptyRequiredStrings } from '../domain/chat/grammar-schema.ts';

describe('nonEmptyRequiredStrings', () => {
  it('gives required free strings a minLength of at least 1, at any depth, and leaves everything else as asked', () => {
    const schema = {
      type: 'object',
      properties: {
        city: { type: 'string' },
        note: { type: 'string' },
        code: { type: 'string', minLength: 3 },
        day: { type: 'string', format: 'date' },
        size: { type: 'string', enum: ['s', 'm'] },
        place: { type: 'object', properties: { street: { type: 'string' } }, required: ['street'] },
        stops: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } },
        kind: { oneOf: [{ type: 'object', properties: { tag: { type: 'string' } }, required: ['tag'] }] },
      },
      required: ['city', 'code', 'day', 'size', 'place', 'stops', 'kind'],
    };
    const before = structuredClone(schema);
    const out = nonEmptyRequiredStrings(schema) as typeof schema & { properties: Record<string, Record<string, unknown>> };
    expect(out.properties.city).toEqual({ type: 'string', minLength: 1 });
    expect(out.properties.note).toEqual({ type: 'string' });
    expect(out.properties.code).toEqual({ type: 'string', minLength: 3 });
    expect(out.properties.day).toEqual({ type: 'string', format: 'date' });
    expect(out.properties.size).toEqual({ type: 'string', enum: ['s', 'm'] });
    expect(out.properties.place).toMatchObject({ properties: { street: { type: 'string', minLength: 1 } } });
    expect(out.properties.stops).toMatchObject({ items: { properties: { name: { type: 'string', minLength: 1 } } } });
    expect(out.properties.kind).toMatchObject({ oneOf: [{ properties: { tag: { type: 'string', minLength: 1 } } }] });
    // The request's own schema is untouched: the answer is still checked against it.
    expect(schema).toEqual(before);
  });
});
