// The JSON Schema the service owns for a model's plan, and the instructions
// that go with it. The model chooses tools and arguments; the service decides
// each step's effect class from the catalog, so the optional `effect` a model
// may write is never read.
import type { RequestedAction } from '../planning/requested-actions.ts';
import { type ServerToolCatalog, TOOL_IDS, TOOLS } from '../tools.ts';

export const MAX_MODEL_PLAN_STEPS = 8;

export const PLAN_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['steps', 'answer', 'unresolved'],
  properties: {
    steps: {
      type: 'array',
      maxItems: MAX_MODEL_PLAN_STEPS,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['tool', 'arguments', 'purpose', 'covers'],
        properties: {
          tool: { type: 'string', description: 'A tool of the catalog, by its name.' },
          arguments: { type: 'object', description: "The tool's arguments, per its parameters schema." },
          purpose: { type: 'string', minLength: 1, maxLength: 300, description: 'Why the step exists, for the person who approves it.' },
          covers: {
            type: 'array',
            minItems: 1,
            items: { type: 'integer', minimum: 1 },
            description: 'Numbers of the requested actions this step carries out (at least one).',
          },
          effect: { type: 'string', description: 'Ignored: the service takes the effect class from the catalog.' },
        },
      },
    },
    answer: {
      type: 'array',
      items: { type: 'integer', minimum: 1 },
      description: 'Numbers of the requested actions you will carry out yourself in your final answer (analysis and writing on the given text).',
    },
    unresolved: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['action', 'reason'],
        properties: { action: { type: 'integer', minimum: 1 }, reason: { type: 'string', minLength: 1, maxLength: 300 } },
      },
      description: 'Requested actions that no tool can carry out, with the reason.',
    },
  },
} as const;

/** The plan schema a model is given: its tool names limited to the tools it is offered. */
export function planSchemaFor(toolNames: string[]): Record<string, unknown> {
  const steps = PLAN_SCHEMA.properties.steps;
  return {
    ...PLAN_SCHEMA,
    properties: {
      ...PLAN_SCHEMA.properties,
      steps: { ...steps, items: { ...steps.items, properties: { ...steps.items.properties, tool: { ...steps.items.properties.tool, enum: toolNames } } } },
    },
  };
}

export interface ModelPlan {
  steps: { tool: string; arguments: Record<string, unknown>; purpose: string; covers: number[]; effect?: string }[];
  answer: number[];
  unresolved: { action: number; reason: string }[];
}

const effectWords = (effect: 'read' | 'external') => (effect === 'external' ? "external effect, needs a person's approval" : 'read only');

function catalogLines(serverTools: ServerToolCatalog): string[] {
  return [
    ...TOOL_IDS.map((id) => `- ${id} (${effectWords(TOOLS[id].effect)}): ${TOOLS[id].description} Arguments: ${JSON.stringify(TOOLS[id].parameters)}`),
    ...Object.entries(serverTools).map(
      ([name, t]) => `- ${name} (${effectWords(t.effect)}; from the tool server ${t.server}): ${t.description} Arguments: ${JSON.stringify(t.parameters)}`,
    ),
  ];
}

export function actionLines(actions: RequestedAction[]): string[] {
  return actions.map((a) => `${a.n}. ${a.clause}`);
}

export function planningInstructions(actions: RequestedAction[], serverTools: ServerToolCatalog = {}): string {
  return [
    'You plan work for a governed workspace service. Answer only with JSON that matches the given schema.',
    'Tools you may use (no others exist):',
    ...catalogLines(serverTools),
    'The request, split into numbered actions:',
    ...actionLines(actions),
    "Account for every action exactly: by steps that carry it out (its number in the step's `covers`; every step covers at least one action), in `answer` when you will do it yourself in your final answer, or in `unresolved` with the reason.",
    'Analysis and writing based on the given text need no tool: list them in `answer`. An action that changes something outside (deleting, paying, emailing, deploying, booking, buying...) that no tool above performs must go to `unresolved`, as must an action on material you were not given (an attachment, a document not in the request).',
    'An empty plan is never valid.',
  ].join('\n');
}

/** The final answer's shape: one part per requested action, so each action's outcome rests on its own part. */
export const ANSWER_FORMAT =
  'Give your final answer as JSON only: {"actions":[{"action":<number>,"status":"performed","result":"<your complete work for that action>"},{"action":<number>,"status":"unresolved","reason":"<why it was not done>"}]}, one entry per requested action. Mark an action unresolved when its material was not given or no tool result shows it was done; never invent content.';

export function executionInstructions(actions: RequestedAction[], planLines: string[]): string {
  return [
    'You carry out an approved plan for a governed workspace service.',
    'Approved steps:',
    ...planLines,
    'Requested actions:',
    ...actionLines(actions),
    'Call the tools of the approved steps through tool calls. A tool call outside the approved plan is refused.',
    'Never say an action was done unless a tool result shows it was, or you did it yourself in your answer.',
    ANSWER_FORMAT,
  ].join('\n');
}
