// The built-in tools of the tool-calling protocol (docs/runs.md, "The tool-calling protocol"): what a
// model that plans with OpenAI tool calls is offered beside the operator's server tools. Each tool is
// described by its own description and JSON Schema, and does exactly what its arguments say: no
// tool here reads the request with word lists. The effect class is the service's, never a model's.
import type { ToolDefinition } from '../chat/types.ts';
import type { EffectClass, ServerToolCatalog } from '../tools.ts';

export const PROTOCOL_TOOL_IDS = ['memory_recall', 'text_analysis', 'count_list_items', 'find_contact_details', 'calculate', 'webhook_delivery'] as const;
export type ProtocolToolId = (typeof PROTOCOL_TOOL_IDS)[number];

export interface ProtocolTool {
  effect: EffectClass;
  description: string;
  parameters: Record<string, unknown>;
}

const text = (max: number, description: string) => ({ type: 'string', minLength: 1, maxLength: max, description });

export const PROTOCOL_TOOLS: Record<ProtocolToolId, ProtocolTool> = {
  memory_recall: {
    effect: 'read',
    description: 'Recalls the tenant memory entries most relevant to a query. Only in runs created with memory: true.',
    parameters: {
      type: 'object',
      additionalProperties: false,
      required: ['query'],
      properties: { query: text(200, 'What to look for in the tenant memory.') },
    },
  },
  text_analysis: {
    effect: 'read',
    description:
      'Extracts key phrases, constraints, quantities and open questions from a text. It prepares input only: it does not summarise, review or decide anything.',
    parameters: { type: 'object', additionalProperties: false, required: ['text'], properties: { text: text(4000, 'The text to analyse.') } },
  },
  count_list_items: {
    effect: 'read',
    description:
      'Counts the given items exactly and returns the count with the items. Each item must be written exactly as it appears in the request or in an earlier tool result.',
    parameters: {
      type: 'object',
      additionalProperties: false,
      required: ['items'],
      properties: { items: { type: 'array', minItems: 1, maxItems: 200, items: { type: 'string', minLength: 1, maxLength: 500 } } },
    },
  },
  find_contact_details: {
    effect: 'read',
    description: 'Finds the email addresses, web addresses and phone numbers written in a text, exactly.',
    parameters: {
      type: 'object',
      additionalProperties: false,
      required: ['text'],
      properties: { text: text(8000, 'The text to search, copied from the request or an earlier tool result.') },
    },
  },
  calculate: {
    effect: 'read',
    description:
      'Evaluates an arithmetic expression exactly in decimal arithmetic: + - * / ^, mod, parentheses, and the functions sum, mean, median, min, max, round, abs, sqrt, floor, ceil (write a percentage as a share: x * 15 / 100). Every number in it must appear in the request or in an earlier tool result (1 and 100 excepted, for shares and percentages). Returns the exact value as a decimal string.',
    parameters: {
      type: 'object',
      additionalProperties: false,
      required: ['expression'],
      properties: { expression: text(500, 'For example: sum(12, 30, 8) or (1200 - 950) / 1200 * 100') },
    },
  },
  webhook_delivery: {
    effect: 'external',
    description:
      "Sends a message to the tenant's configured webhook, labelled with the audience it is for. Runs only after a person approves the exact message and label.",
    parameters: {
      type: 'object',
      additionalProperties: false,
      required: ['to', 'message'],
      properties: {
        to: text(200, 'Who the message is for, as the request names them (for example: the support team, Dana). The receiver routes on it.'),
        message: text(4000, 'The exact text to send.'),
      },
    },
  },
};

/** What an upstream server takes of a tool-calling run's requests (UPSTREAM_REPORT_WITH_TOOLS, UPSTREAM_MAX_TOOLS). */
export interface UpstreamServer {
  /** false: the server refuses `tools` and `response_format` in one request, so the report is asked for in a call of its own. */
  reportWithTools: boolean;
  /** The most tools one request carries; the catalog's others are not shown, and named. */
  maxTools: number;
}

export const DEFAULT_UPSTREAM_SERVER: UpstreamServer = { reportWithTools: true, maxTools: 128 };

export function isProtocolTool(name: string): name is ProtocolToolId {
  return (PROTOCOL_TOOL_IDS as readonly string[]).includes(name);
}

/** The effect class of a tool in a tool-calling run: the built-in's, or the operator's; null for a tool the run does not have. */
export function protocolEffectOf(name: string, serverTools: ServerToolCatalog): EffectClass | null {
  if (isProtocolTool(name)) return PROTOCOL_TOOLS[name].effect;
  return Object.hasOwn(serverTools, name) ? serverTools[name]!.effect : null;
}

/** The run's catalog in OpenAI's `tools` wire format: every built-in of the protocol and every server tool offered. */
export function protocolCatalog(serverTools: ServerToolCatalog): ToolDefinition[] {
  return [
    ...PROTOCOL_TOOL_IDS.map((id) => ({
      type: 'function' as const,
      function: { name: id, description: PROTOCOL_TOOLS[id].description, parameters: PROTOCOL_TOOLS[id].parameters },
    })),
    ...Object.entries(serverTools).map(([name, t]) => ({
      type: 'function' as const,
      function: { name, description: t.description, parameters: t.parameters },
    })),
  ];
}
