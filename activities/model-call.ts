// One model call of a run, whatever it asks (a plan, a choice, arguments, a turn, an answer part):
// refused when its worst case would pass the run's hold, made, then charged by the usage the
// provider reports and recorded once per call key, so a retried activity never charges twice.
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Db } from '../db/client.ts';
import { type ChatOutput, type ChatProvider, type ChatRequest, ProviderError } from '../domain/chat/types.ts';
import type { ModelId } from '../domain/models.ts';
import { creditsOfMicro, modelCostMicro, modelCredits, type PricingTable, type Provider, toolCalls, toolCredits } from '../domain/pricing.ts';
import type { LoopStop } from '../domain/runs/run-types.ts';
import { estimateTokens } from '../domain/tokens.ts';
import { modelCallSpan } from '../services/instrumentation.ts';
import type { Providers } from '../services/model-layer.ts';
import { heldFor, modelUsageOf, recordModelCall } from '../services/model-usage.ts';
import type { ToolServers } from '../services/tool-servers.ts';
import { HOLD_STEP } from './ledger.ts';

export interface AgentDeps {
  db: Db;
  pricing: PricingTable;
  providers: Providers;
  turnMaxTokens: number;
  toolServers: ToolServers;
}

export interface CallContext {
  runId: string;
  tenantId: string;
  model: ModelId;
  provider: Provider;
}

export type Called = { kind: 'output'; output: ChatOutput } | { kind: 'stopped'; stop: LoopStop };

/** How a call reaches the provider: its completion by default; a ranking call passes its own. */
export type Invoke = (provider: ChatProvider, signal: AbortSignal) => Promise<ChatOutput>;

const complete =
  (request: ChatRequest): Invoke =>
  (provider, signal) =>
    provider.complete(request, signal);

/**
 * One model call: refused if its worst case (the prompt's estimate plus `request.maxTokens`) would pass
 * the hold, charged by reported usage, recorded once.
 */
export async function callModel(
  deps: Pick<AgentDeps, 'db' | 'pricing' | 'providers'>,
  c: CallContext,
  callKey: string,
  request: ChatRequest,
  toolsRun: string[],
  invoke: Invoke = complete(request),
): Promise<Called> {
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
      const answered = await invoke(provider, Context.current().cancellationSignal);
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
