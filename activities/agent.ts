// Model calls of a run planned by a model: planning (structured output against the request's own
// plan schema, domain/agent/exact-plan.ts; on the embedded model, action by action in
// plan-by-choice.ts), each answer part of a plan run step by step (answer-part.ts), and each turn of
// an upstream model's execute loop (OpenAI tools / tool_calls). Every call is one activity, made
// through callModel (model-call.ts): checked against the hold, charged by reported usage, once.
import type { Db } from '../db/client.ts';
import type { ProposedCall } from '../domain/agent/admission.ts';
import { callArguments } from '../domain/agent/fixed-arguments.ts';
import { assessPlan, type PlanProposal, proposalOf } from '../domain/agent/plan-check.ts';
import { argumentProblems, isKnownTool } from '../domain/agent/tool-args.ts';
import { buildableOptions, exactPlanSchema, maxJsonTokens } from '../domain/agent/exact-plan.ts';
import { actionOptions } from '../domain/agent/plan-options.ts';
import { exactPlanningInstructions, executionInstructions } from '../domain/agent/plan-schema.ts';
import { digestOf } from '../domain/digest.ts';
import type { ChatMessage, ChatOutput, ChatRequest, ToolDefinition } from '../domain/chat/types.ts';
import { withDeliveryMessages } from '../domain/planning/delivery-steps.ts';
import { actionsOf, type Plan } from '../domain/planning/plan.ts';
import { type RequestedAction, requestedActions } from '../domain/planning/requested-actions.ts';
import { PLAN_ATTEMPTS } from '../domain/pricing.ts';
import type { LoopStop, StepResult } from '../domain/runs/run-types.ts';
import { type ServerToolCatalog, TOOL_IDS, TOOLS } from '../domain/tools.ts';

export type { PlanProposal };
import { recallableEntries } from '../services/memory.ts';
import { offeredServerTools } from '../services/tool-catalog.ts';
import { type AgentDeps, type CallContext, callModel } from './model-call.ts';
import { type AnswerPartOutcome, answerPart } from './embedded/answer-part.ts';
import { planByChoice } from './embedded/plan-by-choice.ts';

/** The catalog in OpenAI's `tools` wire format: the built-in tools and the run's server tools, as GET /v1/tools lists them. */
export function catalogTools(serverTools: ServerToolCatalog = {}): ToolDefinition[] {
  return [
    ...TOOL_IDS.map((id) => ({ type: 'function' as const, function: { name: id, description: TOOLS[id].description, parameters: TOOLS[id].parameters } })),
    ...Object.entries(serverTools).map(([name, t]) => ({
      type: 'function' as const,
      function: { name, description: t.description, parameters: t.parameters },
    })),
  ];
}

/** The server tools a tenant's run may use now (services/tool-catalog.ts). */
async function serverToolsFor(deps: Pick<AgentDeps, 'db' | 'toolServers'>, tenantId: string): Promise<ServerToolCatalog> {
  return (await offeredServerTools(deps.db, deps.toolServers, tenantId)).serverTools;
}

/** Parses and validates each tool call's arguments against the catalog (the workflow decides admission). */
function proposedCalls(output: ChatOutput, serverTools: ServerToolCatalog): ProposedCall[] {
  return (output.toolCalls ?? []).map((call) => {
    const name = call.function.name;
    let args: unknown;
    try {
      args = JSON.parse(call.function.arguments || '{}');
    } catch {
      return { id: call.id, name, arguments: null, problem: 'arguments are not JSON' };
    }
    if (!isKnownTool(name, serverTools)) return { id: call.id, name, arguments: null, problem: null };
    const problem = argumentProblems(name, args, serverTools);
    if (problem !== null) return { id: call.id, name, arguments: null, problem, digest: null };
    const called = callArguments(name, args as Record<string, unknown>, serverTools);
    return { id: call.id, name, arguments: called, problem, digest: digestOf(called) };
  });
}

const NO_LONGER_IN_MEMORY = 'This entry is no longer in the tenant memory (forgotten, quarantined or expired since it was recalled).';

/**
 * The transcript as the model reads it. memory_recall results travel through the workflow
 * (and so its history) as references: id, version, digest. Their text is read from the vault
 * here, at the time of the call, and goes to the model only; an entry forgotten since is not
 * there any more, and the model is told so.
 */
export async function withRecalledText(db: Db, tenantId: string, transcript: ChatMessage[]): Promise<ChatMessage[]> {
  const toolOf = new Map(transcript.flatMap((m) => m.tool_calls ?? []).map((c) => [c.id, c.function.name]));
  type Recall = { output?: { entries?: { id?: unknown; digest?: unknown }[] } };
  const recalls = new Map<number, Recall>();
  transcript.forEach((m, i) => {
    if (m.role !== 'tool' || !m.tool_call_id || toolOf.get(m.tool_call_id) !== 'memory_recall') return;
    try {
      const parsed = JSON.parse(m.content) as Recall;
      if (Array.isArray(parsed?.output?.entries)) recalls.set(i, parsed);
    } catch {} // not a result of ours: passed on as it is
  });
  if (recalls.size === 0) return transcript;
  const ids = [...recalls.values()].flatMap((r) => r.output!.entries!.map((e) => e.id)).filter((id): id is string => typeof id === 'string');
  const current = await recallableEntries(db, tenantId, ids);
  return transcript.map((m, i) => {
    const recall = recalls.get(i);
    if (!recall) return m;
    const entries = recall.output!.entries!.map((ref) => {
      const entry = typeof ref.id === 'string' ? current.get(ref.id) : undefined;
      if (!entry) return { id: ref.id, unavailable: NO_LONGER_IN_MEMORY };
      const changed = typeof ref.digest === 'string' && digestOf(entry.content) !== ref.digest;
      return {
        id: ref.id,
        subject: entry.subject,
        content: entry.content,
        ...(changed ? { note: 'Corrected since it was recalled: this is the current version.' } : {}),
      };
    });
    return { ...m, content: JSON.stringify({ ...recall, output: { ...recall.output, entries } }) };
  });
}

/** A turn that called tools: the assistant message as the transcript keeps it, and its calls as checked. */
export function toolCallsTurn(output: ChatOutput, calls: ProposedCall[]) {
  return { kind: 'tool_calls' as const, assistant: { role: 'assistant' as const, content: output.content ?? '', tool_calls: output.toolCalls }, calls };
}

export type TurnOutcome =
  | { kind: 'answer'; content: string }
  | { kind: 'tool_calls'; assistant: ChatMessage; calls: ProposedCall[] }
  | { kind: 'stopped'; stop: LoopStop };

export function agentActivities(deps: AgentDeps) {
  return {
    /** Asks the model for a plan; `problems` from an earlier attempt are shown to it once. */
    async proposePlan(p: CallContext & { input: string; memory?: boolean; attempt: number; problems: string[] }): Promise<PlanProposal> {
      const actions = requestedActions(p.input, { memory: p.memory ?? false });
      const proposal = await proposePlanFor(p, actions);
      // The actions are recorded in the plan, and every delivery's message fixed from them.
      return proposal.kind === 'planned' ? { kind: 'planned', plan: withDeliveryMessages(proposal.plan, actions) } : proposal;
    },

    /** The model's answer to one action of a plan the service runs step by step. */
    async writeAnswerPart(
      t: CallContext & { input: string; action: number; results: StepResult[]; actions?: RequestedAction[]; readBy?: string },
    ): Promise<AnswerPartOutcome> {
      return await answerPart(deps, t);
    },

    /** One turn of the execute loop: the model sees the approved plan, the input and the tool results so far (recalled text read now). */
    async modelTurn(t: CallContext & { input: string; plan: Plan; transcript: ChatMessage[]; turn: number; toolsRun: string[] }): Promise<TurnOutcome> {
      const actions = actionsOf(t.plan, t.input);
      const planLines = t.plan.steps.map((s) => `${s.id}: ${s.tool} - ${s.purpose}${s.arguments ? ` ${JSON.stringify(s.arguments)}` : ''}`);
      const transcript = await withRecalledText(deps.db, t.tenantId, t.transcript);
      const request: ChatRequest = {
        model: t.model,
        messages: [{ role: 'system', content: executionInstructions(actions, planLines) }, { role: 'user', content: t.input }, ...transcript],
        grounding: { memory: [], document: null },
        responseFormat: null,
        maxTokens: deps.turnMaxTokens,
        tools: catalogTools(t.plan.serverTools),
      };
      const called = await callModel(deps, t, `turn:${t.turn}`, request, t.toolsRun);
      if (called.kind === 'stopped') return called;
      const { output } = called;
      if (output.toolCalls?.length) return toolCallsTurn(output, proposedCalls(output, t.plan.serverTools ?? {}));
      if (output.refusal || output.content === null) return { kind: 'stopped', stop: { code: 'model_refused', message: 'The model declined to answer.' } };
      return { kind: 'answer', content: output.content };
    },
  };

  /** A plan for `actions`: chosen action by action on the embedded model, else in one structured answer. */
  async function proposePlanFor(p: CallContext & { input: string; attempt: number; problems: string[] }, actions: RequestedAction[]): Promise<PlanProposal> {
    const serverTools = await serverToolsFor(deps, p.tenantId);
    if (p.provider === 'embedded') return await planByChoice(deps, p, actions, serverTools);
    // The request's own plan schema: one entry per action, each from the options it may take.
    const options = buildableOptions(actionOptions(actions, serverTools, false), serverTools);
    const schema = exactPlanSchema(options, serverTools, 'anyOf');
    const messages: ChatMessage[] = [
      { role: 'system', content: exactPlanningInstructions(actions, options, serverTools) },
      { role: 'user', content: p.input },
      ...(p.problems.length
        ? [
            {
              role: 'user' as const,
              content: `Your previous plan was not valid:\n${p.problems.map((x) => `- ${x}`).join('\n')}\nAnswer again with a valid plan.`,
            },
          ]
        : []),
    ];
    const request: ChatRequest = {
      model: p.model,
      messages,
      grounding: { memory: [], document: null },
      responseFormat: { name: 'run_plan', schema },
      // Room for the largest plan the schema admits, so no plan is cut off.
      maxTokens: Math.max(deps.turnMaxTokens, maxJsonTokens(schema)),
    };
    const called = await callModel(deps, p, `plan:${p.attempt}`, request, []);
    if (called.kind === 'stopped') return called;
    if (called.output.refusal) return { kind: 'stopped', stop: { code: 'model_refused', message: 'The model declined to plan this request.' } };
    return proposalOf(assessPlan(called.output.content, actions, serverTools, options), p.attempt >= PLAN_ATTEMPTS, serverTools);
  }
}
