// JSON schemas written by the structured-output tests.
export type Schema = Record<string, unknown>;

/** An object schema, every property required unless `required` says otherwise, no other properties. */
export const object = (properties: Record<string, Schema>, required = Object.keys(properties)): Schema => ({
  type: 'object',
  properties,
  required,
  additionalProperties: false,
});
