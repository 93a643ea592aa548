// Checking a tool call's arguments against its tool's JSON Schema (Ajv): the built-in catalog's,
// or a server tool's input schema as the plan recorded it. Used for a model's plan, its tool calls,
// and arguments a person edits at approval, so all three are held to the same schema. The schema
// is the one models see: the operator's fixed arguments are not part of it, and not checked here.
import Ajv, { type ValidateFunction } from 'ajv';
import { digestOf } from '../digest.ts';
import { isToolId, type ServerToolCatalog, TOOL_IDS, TOOLS } from '../tools.ts';
import { givenArguments } from './fixed-arguments.ts';
import { isProtocolTool, PROTOCOL_TOOL_IDS, PROTOCOL_TOOLS } from './protocol-tools.ts';

const ajv = new Ajv.default({ strict: false, allErrors: true, validateFormats: false });
const builtin = new Map<string, ValidateFunction>(TOOL_IDS.map((id) => [id, ajv.compile(TOOLS[id].parameters)]));
/** Server tools' validators, by the digest of their schema (a schema seen once is compiled once). */
const compiled = new Map<string, ValidateFunction | null>();

/** A validator for a server tool's schema, or null when Ajv cannot use the schema. */
export function serverSchemaValidator(parameters: Record<string, unknown>): ValidateFunction | null {
  const key = digestOf(parameters);
  if (!compiled.has(key)) {
    // `$schema` names a draft Ajv's default build may not carry; the keywords themselves are what is checked.
    const { $schema: _, ...schema } = parameters;
    try {
      compiled.set(key, ajv.compile(schema));
    } catch {
      compiled.set(key, null);
    }
  }
  return compiled.get(key)!;
}

function validatorOf(tool: string, serverTools: ServerToolCatalog): ValidateFunction | null {
  if (isToolId(tool)) return builtin.get(tool)!;
  const ref = Object.hasOwn(serverTools, tool) ? serverTools[tool] : undefined;
  return ref ? serverSchemaValidator(ref.parameters) : null;
}

/** Whether `tool` is a tool the run may use: built-in, or one of its server tools. */
export function isKnownTool(tool: string, serverTools: ServerToolCatalog): boolean {
  return isToolId(tool) || Object.hasOwn(serverTools, tool);
}

/** What is wrong with `args` for `tool`, in words a model or a person can fix; null when they are valid. */
export function argumentProblems(tool: string, args: unknown, serverTools: ServerToolCatalog): string | null {
  const validate = validatorOf(tool, serverTools);
  if (!validate) return `${tool} is not a tool this run can use`;
  if (validate(givenArguments(tool, args, serverTools))) return null;
  return (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message}`).join('; ') || 'invalid';
}

const protocolBuiltin = new Map<string, ValidateFunction>(PROTOCOL_TOOL_IDS.map((id) => [id, ajv.compile(PROTOCOL_TOOLS[id].parameters)]));

/** As argumentProblems, for a tool-calling run: the protocol's built-ins (domain/agent/protocol-tools.ts) or a server tool. */
export function protocolArgumentProblems(tool: string, args: unknown, serverTools: ServerToolCatalog): string | null {
  const validate = isProtocolTool(tool)
    ? protocolBuiltin.get(tool)!
    : Object.hasOwn(serverTools, tool)
      ? serverSchemaValidator(serverTools[tool]!.parameters)
      : null;
  if (!validate) return `${tool.slice(0, 64)} is not a tool of this run's catalog`;
  if (validate(givenArguments(tool, args, serverTools))) return null;
  return (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message}`).join('; ') || 'invalid';
}
