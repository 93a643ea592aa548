// The JSON Schema the service owns for a model's plan, and the instructions
// that go with it. The model chooses tools and arguments; the service decides
// each step's effect class from the catalog, so the optional `effect` a model
// may write is never read.
import type { RequestedAction } from '../planning/requested-actions.ts';
import { ANSWER, type ActionOptions, UNRESOLVED } from './plan-options.ts';
import { type ServerToolCatalog, TOOL_IDS, TOOLS } from '../tools.ts';

export const MAX_MODEL_PLAN_STEPS = 8;

/** The earlier, request-independent plan form (steps, answer, unresolved); answers in it are still read. */
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

/** Instructions for a plan in the request's own schema (exact-plan.ts): one entry per action, from the options it is offered. */
export function exactPlanningInstructions(actions: RequestedAction[], options: ActionOptions[], serverTools: ServerToolCatalog = {}): string {
  const choices = (o: ActionOptions) => o.options.map((x) => (x === ANSWER || x === UNRESOLVED ? `"${x}"` : x)).join(', ');
  return [
    'You plan work for a governed workspace service. Answer only with JSON that matches the given schema.',
    'Tools you may use (no others exist):',
    ...catalogLines(serverTools),
    'The request, split into numbered actions:',
    ...actionLines(actions),
    'Give one entry per action, `action_N`, saying what it becomes:',
    '- {"do": "<tool>", "arguments": {...}, "purpose": "<why, for the person who approves it>"}: a tool offered for it carries it out, with exactly the arguments to send;',
    `- {"do": "${ANSWER}"}: analysis or writing on the given text, which you will do yourself in your final answer;`,
    `- {"do": "${UNRESOLVED}", "reason": "..."}: no offered tool can do it (paying, booking, deleting, emailing...), or it works on material you were not given.`,
    'What each action may become:',
    ...options.map((o) => `${o.action}: ${choices(o)}`),
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
