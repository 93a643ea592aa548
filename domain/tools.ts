// The server-managed tool catalog: what a plan step may call, and its effect class.

export const TOOL_IDS = ['memory_recall', 'text_analysis', 'webhook_delivery'] as const;
export type ToolId = (typeof TOOL_IDS)[number];
export type EffectClass = 'read' | 'external';

export interface ToolSpec {
  id: ToolId;
  effect: EffectClass;
  description: string;
}

export const TOOLS: Record<ToolId, ToolSpec> = {
  memory_recall: {
    id: 'memory_recall',
    effect: 'read',
    description: 'Recalls the tenant memory entries most relevant to the run (only when memory is true).',
  },
  text_analysis: {
    id: 'text_analysis',
    effect: 'read',
    description: 'Extracts key phrases, constraints, quantities and open questions from one part of the input.',
  },
  webhook_delivery: {
    id: 'webhook_delivery',
    effect: 'external',
    description: "Delivers the run's result to the webhook URL configured for the tenant, only after approval.",
  },
};
