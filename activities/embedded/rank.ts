// Ranking candidates by the embedded model's own likelihood, as one charged model call: what the
// adapter's choices (plan-by-choice.ts) and its answers taken from a tool's result (answer-lines.ts)
// are made of. The lead of the likeliest candidate over the next is the adapter's measure of confidence.
import type { ChatMessage } from '../../domain/chat/types.ts';
import type { LoopStop } from '../../domain/runs/run-types.ts';
import { estimateTokens } from '../../domain/tokens.ts';
import { type AgentDeps, type CallContext, callModel } from '../model-call.ts';

export type RankStopped = { kind: 'stopped'; stop: LoopStop };

/** Each candidate's log-likelihood after `messages` (and `prefix`), in the order given. */
export async function rankScores(
  deps: AgentDeps,
  c: CallContext,
  callKey: string,
  messages: ChatMessage[],
  candidates: string[],
  prefix = '',
): Promise<number[] | RankStopped> {
  const worstCase = candidates.reduce((sum, x) => sum + estimateTokens(x) + 8, estimateTokens(prefix));
  const request = {
    model: c.model,
    messages,
    grounding: { memory: [], document: null },
    responseFormat: null,
    maxTokens: worstCase,
    sampling: { temperature: 0 },
  };
  const called = await callModel(deps, c, callKey, request, [], async (provider, signal) => {
    if (!provider.rank) throw new Error('this provider cannot rank choices');
    const ranked = await provider.rank({ messages, candidates, prefix }, signal);
    return { content: JSON.stringify(ranked.scores), refusal: null, finishReason: 'stop', usage: ranked.usage };
  });
  if (called.kind === 'stopped') return called;
  return JSON.parse(called.output.content ?? '[]') as number[];
}

/** The index of the highest score and its lead over the next highest (Infinity when it stands alone). */
export function leader(scores: number[]): { best: number; lead: number } {
  let best = 0;
  scores.forEach((s, i) => {
    if (s > scores[best]!) best = i;
  });
  const others = scores.filter((_, i) => i !== best);
  return { best, lead: others.length ? scores[best]! - Math.max(...others) : Number.POSITIVE_INFINITY };
}
