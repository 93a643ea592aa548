// Arguments the operator fixes for a server's tools (`fixed_arguments` in the tool servers file): a
// repository's path, an account id. A tool whose input schema names such a property is shown to
// models without it, and every call of it carries the operator's value, whatever a model wrote
// there; the approver sees the whole call, fixed values included, and its digest covers them.
import type { ServerToolCatalog, ServerToolRef } from '../tools.ts';

export type FixedArguments = Record<string, string | number | boolean>;

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A tool's input schema as models see it, without the properties the operator fixed, and the fixed
 * values that apply to it (those its schema names as properties; the others are not its arguments).
 */
export function withoutFixedProperties(schema: Record<string, unknown>, fixed: FixedArguments): { schema: Record<string, unknown>; fixed: FixedArguments } {
  const properties = isRecord(schema.properties) ? schema.properties : {};
  const applies = Object.fromEntries(Object.entries(fixed).filter(([name]) => Object.hasOwn(properties, name)));
  if (Object.keys(applies).length === 0) return { schema, fixed: {} };
  const shown: Record<string, unknown> = {
    ...schema,
    properties: Object.fromEntries(Object.entries(properties).filter(([name]) => !Object.hasOwn(applies, name))),
  };
  if (Array.isArray(schema.required)) shown.required = schema.required.filter((name) => !Object.hasOwn(applies, name));
  return { schema: shown, fixed: applies };
}

function fixedOf(tool: string, serverTools: ServerToolCatalog): FixedArguments {
  const ref: ServerToolRef | undefined = Object.hasOwn(serverTools, tool) ? serverTools[tool] : undefined;
  return (ref?.fixed ?? {}) as FixedArguments;
}

/** The arguments a caller gave, without those the operator fixed: what the tool's shown schema checks. */
export function givenArguments(tool: string, args: unknown, serverTools: ServerToolCatalog): unknown {
  const fixed = fixedOf(tool, serverTools);
  if (!isRecord(args) || Object.keys(fixed).length === 0) return args;
  return Object.fromEntries(Object.entries(args).filter(([name]) => !Object.hasOwn(fixed, name)));
}

/** The call as it runs and as the approver sees it: the arguments given, with the operator's fixed values in place. */
export function callArguments(tool: string, args: Record<string, unknown>, serverTools: ServerToolCatalog): Record<string, unknown> {
  const fixed = fixedOf(tool, serverTools);
  return Object.keys(fixed).length === 0 ? args : { ...(givenArguments(tool, args, serverTools) as Record<string, unknown>), ...fixed };
}

/** The fixed arguments `args` gives another value than the operator's (a person's edit may not change them). */
export function changedFixedArguments(tool: string, args: Record<string, unknown>, serverTools: ServerToolCatalog): string[] {
  const fixed = fixedOf(tool, serverTools);
  return Object.keys(fixed).filter((name) => Object.hasOwn(args, name) && args[name] !== fixed[name]);
}
