// Model calls of an upstream run: planning (structured output against the
// service's plan schema, validated with Ajv) and each turn of the execute
// loop (OpenAI tools / tool_calls). Every call is one activity, checked
// against the hold before it is made and charged by the usage the provider
// reports, recorded once per call key so a retry never charges twice.
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Db } from '../db/client.ts';
import type { ProposedCall } from '../domain/agent/admission.ts';
import { assessPlan, type PlanProposal, proposalOf } from '../domain/agent/plan-check.ts';
import { argumentProblems, isKnownTool, serverSchemaValidator } from '../domain/agent/tool-args.ts';
import { executionInstructions, planningInstructions, planSchemaFor } from '../domain/agent/plan-schema.ts';
import { digestOf } from '../domain/digest.ts';
import { type ChatMessage, type ChatOutput, type ChatRequest, ProviderError, type ToolDefinition } from '../domain/chat/types.ts';
import type { ModelId } from '../domain/models.ts';
import type { Plan } from '../domain/planning/plan.ts';
import { requestedActions } from '../domain/planning/requested-actions.ts';
import { creditsOfMicro, modelCostMicro, modelCredits, PLAN_ATTEMPTS, type PricingTable, type Provider, toolCalls, toolCredits } from '../domain/pricing.ts';
import type { LoopStop } from '../domain/runs/run-types.ts';
import { estimateTokens } from '../domain/tokens.ts';
import { type ServerToolCatalog, TOOL_IDS, TOOLS } from '../domain/tools.ts';

export type { PlanProposal };
import type { Providers } from '../services/model-layer.ts';
import { recallableEntries } from '../services/memory.ts';
import { heldFor, modelUsageOf, recordModelCall } from '../services/model-usage.ts';
import { modelCallSpan } from '../services/instrumentation.ts';
import { tenantById } from '../services/tenants.ts';
import type { ToolServers } from '../services/tool-servers.ts';
import { HOLD_STEP } from './ledger.ts';

export interface AgentDeps {
  db: Db;
  pricing: PricingTable;
  providers: Providers;
  turnMaxTokens: number;
  toolServers: ToolServers;
}

interface CallContext {
  runId: string;
  tenantId: string;
  model: ModelId;
  provider: Provider;
}

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

/** Bounds on what a run carries of the server tools (it travels in the plan, through Temporal, and in each prompt). */
const MAX_SERVER_TOOLS = 64;
const MAX_SCHEMA_CHARS = 16_384;

/**
 * The server tools a tenant's run may use now: those available to the tenant whose input schema the
 * service can check, at most MAX_SERVER_TOOLS of them by name, each schema at most MAX_SCHEMA_CHARS.
 * Their effect class is the operator's; the server's hints play no part.
 */
async function serverToolsFor(deps: AgentDeps, tenantId: string): Promise<ServerToolCatalog> {
  const tenant = await tenantById(deps.db, tenantId);
  const offered = deps.toolServers
    .forTenant(tenant)
    .filter(
      (t) => t.status === 'available' && JSON.stringify(t.tool.inputSchema).length <= MAX_SCHEMA_CHARS && serverSchemaValidator(t.tool.inputSchema) !== null,
    )
    .sort((a, b) => (a.tool.name < b.tool.name ? -1 : 1))
    .slice(0, MAX_SERVER_TOOLS);
  return Object.fromEntries(
    offered.map(({ tool }) => [
      tool.name,
      { server: tool.server, tool: tool.tool, effect: tool.effect, description: tool.description.slice(0, 1_000), parameters: tool.inputSchema },
    ]),
  );
}

type Called = { kind: 'output'; output: ChatOutput } | { kind: 'stopped'; stop: LoopStop };

/** One model call: refused if its worst case would pass the hold, charged by reported usage, recorded once. */
async function callModel(deps: AgentDeps, c: CallContext, callKey: string, request: ChatRequest, toolsRun: string[]): Promise<Called> {
  const provider = deps.providers[c.provider];
  if (!provider)
    return { kind: 'stopped', stop: { code: 'model_unavailable', message: `No provider is configured for ${c.model}; nothing was sent to a model.` } };
  const hold = await heldFor(deps.db, c.runId, HOLD_STEP);
  const before = (await modelUsageOf(deps.db, c.runId, callKey)).costMicro;
  const tools = toolCredits(toolCalls(toolsRun), deps.pricing);
  const spent = creditsOfMicro(before) + tools;
  const promptTokens = estimateTokens(JSON.stringify([request.messages, request.tools ?? [], request.responseFormat ?? null]));
  const worstCase = modelCredits(promptTokens + request.maxTokens, c.model, deps.pricing);
  if (creditsOfMicro(before + modelCostMicro(promptTokens + request.maxTokens, c.model, deps.pricing)) + tools > hold) {
    return {
      kind: 'stopped',
      stop: {
        code: 'hold_exhausted',
        message: `The next model call could cost up to ${worstCase} credits; ${hold - spent} of the ${hold} held remain. It was not made.`,
      },
    };
  }
  let output: ChatOutput;
  try {
    output = await modelCallSpan(c.provider, c.model, async (usage) => {
      const answered = await provider.complete(request, Context.current().cancellationSignal);
      if (answered.usage) usage(answered.usage.promptTokens, answered.usage.completionTokens);
      return answered;
    });
  } catch (err) {
    if (err instanceof ProviderError && err.kind === 'rate_limited') {
      // After the provider's Retry-After, not the retry policy's own interval (retryable()'s extra arguments are details, not options).
      throw ApplicationFailure.create({ message: 'model rate limited', type: 'ModelRateLimited', nextRetryDelay: `${err.retryAfterSeconds ?? 1}s` });
    }
    throw err; // a failed call reports no usage and charges nothing; Temporal retries it
  }
  // The provider's usage when it reports it; the byte-count estimate only when it reports none, and recorded as such.
  const completion = output.content ?? output.refusal ?? JSON.stringify(output.toolCalls ?? []);
  const usage = output.usage ?? { promptTokens, completionTokens: estimateTokens(completion) };
  const costMicro = modelCostMicro(usage.promptTokens + usage.completionTokens, c.model, deps.pricing);
  await recordModelCall(deps.db, {
    tenantId: c.tenantId,
    runId: c.runId,
    callKey,
    model: c.model,
    ...usage,
    costMicro,
    usageBasis: output.usage ? 'reported' : 'estimated',
  });
  const credits = creditsOfMicro(costMicro);
  if (creditsOfMicro(before + costMicro) + tools > hold) {
    return {
      kind: 'stopped',
      stop: {
        code: 'hold_exhausted',
        message: `The model reported usage of ${credits} credits for one call, past the ${hold} held; the run stopped and is charged no more than the hold.`,
      },
    };
  }
  return { kind: 'output', output };
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
    return {
      id: call.id,
      name,
      arguments: problem === null ? (args as Record<string, unknown>) : null,
      problem,
      digest: problem === null ? digestOf(args) : null,
    };
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

export type TurnOutcome =
  | { kind: 'answer'; content: string }
  | { kind: 'tool_calls'; assistant: ChatMessage; calls: ProposedCall[] }
  | { kind: 'stopped'; stop: LoopStop };

export function agentActivities(deps: AgentDeps) {
  return {
    /** Asks the model for a plan; `problems` from an earlier attempt are shown to it once. */
    async proposePlan(p: CallContext & { input: string; attempt: number; problems: string[] }): Promise<PlanProposal> {
      const actions = requestedActions(p.input);
      const serverTools = await serverToolsFor(deps, p.tenantId);
      const messages: ChatMessage[] = [
        { role: 'system', content: planningInstructions(actions, serverTools) },
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
        responseFormat: { name: 'run_plan', schema: planSchemaFor([...TOOL_IDS, ...Object.keys(serverTools)]) },
        maxTokens: deps.turnMaxTokens,
      };
      const called = await callModel(deps, p, `plan:${p.attempt}`, request, []);
      if (called.kind === 'stopped') return called;
      if (called.output.refusal) return { kind: 'stopped', stop: { code: 'model_refused', message: 'The model declined to plan this request.' } };
      return proposalOf(assessPlan(called.output.content, actions, serverTools), p.attempt >= PLAN_ATTEMPTS, serverTools);
    },

    /** One turn of the execute loop: the model sees the approved plan, the input and the tool results so far (recalled text read now). */
    async modelTurn(t: CallContext & { input: string; plan: Plan; transcript: ChatMessage[]; turn: number; toolsRun: string[] }): Promise<TurnOutcome> {
      const actions = requestedActions(t.input);
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
      if (output.toolCalls?.length) {
        return {
          kind: 'tool_calls',
          assistant: { role: 'assistant', content: output.content ?? '', tool_calls: output.toolCalls },
          calls: proposedCalls(output, t.plan.serverTools ?? {}),
        };
      }
      if (output.refusal || output.content === null) return { kind: 'stopped', stop: { code: 'model_refused', message: 'The model declined to answer.' } };
      return { kind: 'answer', content: output.content };
    },
  };
}
