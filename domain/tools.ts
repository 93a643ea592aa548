// The server-managed tool catalog: what a plan step may call, its effect class
// and the JSON Schema of its arguments. The effect class of a step always comes
// from here, never from a planner or a model, so nothing can relabel an
// external effect as a read and skip approval.

export const TOOL_IDS = ['memory_recall', 'text_analysis', 'count_list_items', 'find_contact_details', 'webhook_delivery'] as const;
export type ToolId = (typeof TOOL_IDS)[number];
export type EffectClass = 'read' | 'external';

/**
 * A tool of an operator-configured tool server (MCP) is named `<server>__<tool>`. Its effect class
 * is the operator's (config/tool-servers.ts); one the operator did not classify is external.
 */
export function serverToolName(server: string, tool: string): string {
  return `${server}__${tool}`;
}

/** A server tool as a run's plan keeps it: what the service decided about it when the plan was made. */
export interface ServerToolRef {
  server: string;
  tool: string;
  effect: EffectClass;
  description: string;
  /** Its input schema (JSON Schema), against which arguments are checked, also when edited at approval. */
  parameters: Record<string, unknown>;
  /** False when the operator did not classify it (so it counts as external); absent in plans made before. */
  classified?: boolean;
  /** Arguments the operator fixed (`fixed_arguments`): left out of `parameters`, set on every call (domain/agent/fixed-arguments.ts). */
  fixed?: Record<string, string | number | boolean>;
}

/** The server tools a run may use, by name (a snapshot taken when it was planned). */
export type ServerToolCatalog = Record<string, ServerToolRef>;

/** The effect class of a tool: the built-in catalog's, or the operator's for a server tool; null for an unknown tool. */
export function effectOf(name: string, serverTools: ServerToolCatalog = {}): EffectClass | null {
  if (isToolId(name)) return TOOLS[name].effect;
  return Object.hasOwn(serverTools, name) ? serverTools[name]!.effect : null;
}

/**
 * What kind of requested action a tool can carry out (see domain/planning/requested-actions.ts).
 * preparation: it readies input for the work (key phrases, sentence counts) and carries out no
 * requested action itself: extracting key phrases is not summarising, reviewing or comparing.
 * analysis: it answers an analysis action exactly (a count, the addresses a text holds).
 */
export type ToolCapability = 'recall' | 'preparation' | 'analysis' | 'delivery';

export interface ToolSpec {
  id: ToolId;
  effect: EffectClass;
  capability: ToolCapability;
  description: string;
  /** What the tool does as a short verb phrase, for a small model choosing among tools. */
  doing: string;
  /** JSON Schema of the arguments a model passes in an OpenAI `tool_calls` entry. */
  parameters: Record<string, unknown>;
}

export const TOOLS: Record<ToolId, ToolSpec> = {
  memory_recall: {
    id: 'memory_recall',
    effect: 'read',
    capability: 'recall',
    description: 'Recalls the tenant memory entries most relevant to the run (only when memory is true).',
    doing: 'recall the memory',
    parameters: {
      type: 'object',
      additionalProperties: false,
      required: ['query'],
      properties: { query: { type: 'string', minLength: 1, maxLength: 200, description: 'What to look for in the tenant memory.' } },
    },
  },
  text_analysis: {
    id: 'text_analysis',
    effect: 'read',
    capability: 'preparation',
    description:
      'Extracts key phrases, constraints, quantities and open questions from one part of the input. It prepares input only: it does not summarise, review, compare or decide anything.',
    doing: 'extract key phrases',
    parameters: {
      type: 'object',
      additionalProperties: false,
      required: ['text'],
      properties: { text: { type: 'string', minLength: 1, maxLength: 4000, description: 'The part of the input to analyse.' } },
    },
  },
  count_list_items: {
    id: 'count_list_items',
    effect: 'read',
    capability: 'analysis',
    description:
      'Counts the items of the list a requested action gives (after its colon, or in quotes) and answers that action with the count and the items. Exact, and checked again by verification.',
    doing: 'count the items in the list',
    parameters: { type: 'object', additionalProperties: false, properties: {} },
  },
  find_contact_details: {
    id: 'find_contact_details',
    effect: 'read',
    capability: 'analysis',
    description:
      'Finds the email addresses, web addresses and phone numbers written in the input and answers the requested action with them. Exact, and checked again by verification.',
    doing: 'find the email addresses, web addresses and phone numbers in the text',
    parameters: { type: 'object', additionalProperties: false, properties: {} },
  },
  webhook_delivery: {
    id: 'webhook_delivery',
    effect: 'external',
    capability: 'delivery',
    description:
      'Sends a message to the webhook URL configured for the tenant, only after approval: the message the request gives (copied from it), or the result of an earlier action of the run.',
    doing: 'send a message to the team channel',
    parameters: {
      type: 'object',
      additionalProperties: false,
      properties: {
        message: { type: 'string', minLength: 1, maxLength: 4000, description: 'The text to send, as the request gives it; a person may edit it at approval.' },
      },
    },
  },
};

export function isToolId(name: string): name is ToolId {
  return (TOOL_IDS as readonly string[]).includes(name);
}
