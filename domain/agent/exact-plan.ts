// The plan schema of one request: one entry per requested action, fixed in place
// (`action_1`, `action_2`, …, all required), each a union discriminated by `do`:
// a tool the action is offered (with that tool's own argument schema), the model's
// own `answer`, or `unresolved` with a reason. A model held to it (a grammar on the
// embedded model, strict json_schema upstream) cannot skip an action, name a tool
// it was not offered, or leave out a required argument.
import type { RequestedAction } from '../planning/requested-actions.ts';
import type { ServerToolCatalog } from '../tools.ts';
import { isToolId, TOOLS } from '../tools.ts';
import { ANSWER, type ActionOptions, UNRESOLVED } from './plan-options.ts';
import type { ModelPlan } from './plan-schema.ts';

type Schema = Record<string, unknown>;

/** Bounds that keep every plan inside a token budget. */
export const PLAN_TEXT_MAX = 160;
export const ARGUMENT_TEXT_MAX = 400;
const ARRAY_MAX = 8;

/** A tool's parameters schema. */
export function toolParameters(tool: string, serverTools: ServerToolCatalog): Schema {
  return isToolId(tool) ? TOOLS[tool].parameters : (serverTools[tool]?.parameters ?? { type: 'object', properties: {} });
}

/**
 * A tool's argument schema, bounded: its required properties only (a grammar writes every property
 * it is given), strings and arrays capped, unsupported keywords left out. Every value it admits has
 * the required shape of the tool's own schema, which still checks the arguments (Ajv) afterwards.
 * Null for a schema it cannot bound (a $ref, a bare `type` list).
 */
export function boundedArguments(schema: Schema): Schema | null {
  if (!schema || typeof schema !== 'object' || '$ref' in schema) return null;
  if ('const' in schema) return { const: schema.const };
  if (Array.isArray(schema.enum)) return { enum: schema.enum };
  const union = (schema.oneOf ?? schema.anyOf) as Schema[] | undefined;
  if (Array.isArray(union)) {
    const branches = union.map(boundedArguments);
    return branches.every((b) => b !== null) ? { oneOf: branches } : null;
  }
  switch (schema.type) {
    case 'string': {
      const max = Math.min(typeof schema.maxLength === 'number' ? schema.maxLength : ARGUMENT_TEXT_MAX, ARGUMENT_TEXT_MAX);
      return { type: 'string', minLength: typeof schema.minLength === 'number' ? schema.minLength : 1, maxLength: max };
    }
    case 'number':
    case 'integer':
    case 'boolean':
    case 'null':
      return { type: schema.type };
    case 'array': {
      const items = schema.items ? boundedArguments(schema.items as Schema) : null;
      if (!items) return null;
      const min = typeof schema.minItems === 'number' ? schema.minItems : 0;
      const max = Math.min(typeof schema.maxItems === 'number' ? schema.maxItems : ARRAY_MAX, Math.max(ARRAY_MAX, min));
      return { type: 'array', items, minItems: min, maxItems: max };
    }
    case 'object':
    case undefined: {
      const props = (schema.properties ?? {}) as Record<string, Schema>;
      const required = Array.isArray(schema.required) ? (schema.required as string[]).filter((k) => Object.hasOwn(props, k)) : [];
      const bounded: Record<string, Schema> = {};
      for (const key of required) {
        const b = boundedArguments(props[key]!);
        if (!b) return null;
        bounded[key] = b;
      }
      return { type: 'object', properties: bounded, required, additionalProperties: false };
    }
    default:
      return null;
  }
}

/**
 * An upper bound on the tokens of any JSON value of a bounded schema: one token a character (no
 * token is shorter), a string's characters at two each (an escape), plus its structure.
 */
export function maxJsonTokens(schema: Schema): number {
  if ('const' in schema) return JSON.stringify(schema.const).length;
  if (Array.isArray(schema.enum)) return Math.max(...schema.enum.map((v) => JSON.stringify(v).length));
  const union = (schema.oneOf ?? schema.anyOf) as Schema[] | undefined;
  if (Array.isArray(union)) return Math.max(...union.map(maxJsonTokens));
  switch (schema.type) {
    case 'string':
      return 2 + 2 * (schema.maxLength as number);
    case 'number':
    case 'integer':
      return 24;
    case 'boolean':
    case 'null':
      return 5;
    case 'array':
      return 2 + (schema.maxItems as number) * (maxJsonTokens(schema.items as Schema) + 2);
    default: {
      const props = Object.entries((schema.properties ?? {}) as Record<string, Schema>);
      return 2 + props.reduce((sum, [key, value]) => sum + key.length + 6 + maxJsonTokens(value), 0);
    }
  }
}

const text = (max: number) => ({ type: 'string', minLength: 1, maxLength: max });

/** One choice of one action as a branch of its union; null for a tool whose arguments cannot be bounded. */
export function entrySchema(option: string, serverTools: ServerToolCatalog): Schema | null {
  const entry = (properties: Record<string, Schema>) => ({ type: 'object', properties, required: Object.keys(properties), additionalProperties: false });
  if (option === ANSWER) return entry({ do: { const: ANSWER } });
  if (option === UNRESOLVED) return entry({ do: { const: UNRESOLVED }, reason: text(PLAN_TEXT_MAX) });
  const args = boundedArguments(toolParameters(option, serverTools));
  return args ? entry({ do: { const: option }, arguments: args, purpose: text(PLAN_TEXT_MAX) }) : null;
}

/** The options whose branch can be built (a tool whose schema cannot be bounded is not offered). */
export function buildableOptions(options: ActionOptions[], serverTools: ServerToolCatalog): ActionOptions[] {
  return options.map((o) => ({ ...o, options: o.options.filter((x) => entrySchema(x, serverTools) !== null) }));
}

const key = (n: number) => `action_${n}`;

/**
 * The request's plan schema. `union` is `anyOf` for OpenAI's strict json_schema (which takes no
 * oneOf) and `oneOf` for node-llama-cpp's grammar (which takes no anyOf); the branches are
 * discriminated by `do`, so both mean the same.
 */
export function exactPlanSchema(options: ActionOptions[], serverTools: ServerToolCatalog, union: 'anyOf' | 'oneOf' = 'anyOf'): Schema {
  const properties: Record<string, Schema> = {};
  for (const o of buildableOptions(options, serverTools)) {
    const branches = o.options.map((x) => entrySchema(x, serverTools)!);
    properties[key(o.action)] = branches.length === 1 ? branches[0]! : { [union]: branches };
  }
  return { type: 'object', properties, required: Object.keys(properties), additionalProperties: false };
}

/** Whether a model's answer is in the per-request form (rather than the earlier steps/answer/unresolved form). */
export function isExactForm(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).some((k) => /^action_\d+$/.test(k));
}

/** The per-request form as the plan the checks read: a step per tool entry, the answered and the unresolved actions. */
export function fromExactForm(value: Record<string, unknown>, actions: RequestedAction[], options: ActionOptions[]): { plan: ModelPlan; problems: string[] } {
  const plan: ModelPlan = { steps: [], answer: [], unresolved: [] };
  const problems: string[] = [];
  const offered = new Map(options.map((o) => [o.action, o.options]));
  for (const a of actions) {
    const entry = value[key(a.n)] as { do?: unknown; arguments?: unknown; purpose?: unknown; reason?: unknown } | undefined;
    const choice = typeof entry?.do === 'string' ? entry.do : null;
    if (!entry || choice === null) {
      problems.push(`${key(a.n)}: missing; every action needs an entry.`);
    } else if (!(offered.get(a.n) ?? []).includes(choice)) {
      problems.push(`${key(a.n)}.do: "${choice.slice(0, 64)}" is not a choice offered for this action.`);
    } else if (choice === ANSWER) {
      plan.answer.push(a.n);
    } else if (choice === UNRESOLVED) {
      plan.unresolved.push({ action: a.n, reason: typeof entry.reason === 'string' && entry.reason.trim() ? entry.reason : 'no reason given' });
    } else {
      const args =
        entry.arguments && typeof entry.arguments === 'object' && !Array.isArray(entry.arguments) ? (entry.arguments as Record<string, unknown>) : {};
      const purpose = typeof entry.purpose === 'string' && entry.purpose.trim() ? entry.purpose : `Carries out action ${a.n}.`;
      plan.steps.push({ tool: choice, arguments: args, purpose: purpose.slice(0, 300), covers: [a.n] });
    }
  }
  return { plan, problems };
}
