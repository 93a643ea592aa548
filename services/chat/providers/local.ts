// The default provider: local, account-free and deterministic. It answers from
// the conversation and the grounding (recalled vault entries, fetched context),
// and fills a JSON schema from the same material. It cannot call tools: chat
// refuses tools for it before anything is held (tools_not_supported) or, with
// tool_choice "none", does not send them. Tool calls and results in the
// conversation are history it reads past: it answers the user's messages.
import { fillSchema } from '../../../domain/chat/fill-schema.ts';
import { groundingTexts } from '../../../domain/chat/grounded-values.ts';
import { errors } from '../../../domain/errors.ts';
import type { ChatOutput, ChatProvider, ChatRequest } from '../../../domain/chat/types.ts';
import { estimateTokens } from '../../../domain/tokens.ts';
import { analyzeObjective, truncate } from '../../../domain/text/analyze.ts';
import { ungroundedRefusal } from '../structured-output.ts';

function lastUserText(request: ChatRequest): string {
  return [...request.messages].reverse().find((m) => m.role === 'user')?.content ?? '';
}

function answerText(request: ChatRequest): string {
  const question = lastUserText(request);
  const facts = analyzeObjective(question);
  const terms = facts.keyTerms.slice(0, 5).map((k) => k.term);
  const lines: string[] = [];
  lines.push(terms.length ? `You asked about ${terms.join(', ')}.` : 'You sent a message without a clear topic.');
  if (request.grounding.memory.length > 0) {
    lines.push('From your workspace memory:');
    for (const m of request.grounding.memory) lines.push(`- ${m.subject}: ${truncate(m.content, 240)}`);
  }
  if (request.grounding.document) {
    lines.push(`From the linked context: ${truncate(analyzeObjective(request.grounding.document).sentences.slice(0, 2).join(' '), 400)}`);
  }
  if (request.model !== 'svc-workspace-fast') {
    if (facts.constraints.length) lines.push(`Constraints you stated: ${facts.constraints.join('; ')}.`);
    if (facts.questions.length) lines.push(`Open questions: ${facts.questions.join(' ')}`);
  }
  if (request.model === 'svc-workspace-quality') {
    const turns = request.messages.filter((m) => m.role === 'user').length;
    lines.push(`This answer considers ${turns} message(s) of yours in this conversation.`);
  }
  if (request.grounding.memory.length === 0 && !request.grounding.document) {
    lines.push('No workspace memory or linked context was used; the answer rests on your message alone.');
  }
  return lines.join('\n');
}

/** Cuts the answer to the token budget (byte-count estimate), reporting `length` when it had to. */
function bounded(text: string, maxTokens: number): ChatOutput {
  if (estimateTokens(text) <= maxTokens) return { content: text, refusal: null, finishReason: 'stop' };
  let cut = text.slice(0, maxTokens * 4);
  while (estimateTokens(cut) > maxTokens) cut = cut.slice(0, -1);
  return { content: cut, refusal: null, finishReason: 'length' };
}

export const localProvider: ChatProvider = {
  id: 'local',
  callsTools: false,
  // Its structured answers are filled from the text itself (fill-schema.ts): the chat layer does not check them again.
  groundsValues: true,
  async complete(request) {
    // Never a made-up call, whoever asks.
    if (request.tools?.length && request.toolChoice !== 'none') throw errors.toolsNotSupported(request.model);
    // json_object: the same answer as text, as {"answer": "..."}; nothing added to it.
    if (request.responseFormat?.kind === 'json_object') {
      const answer = bounded(answerText(request), request.maxTokens);
      return { ...answer, content: JSON.stringify({ answer: answer.content }) };
    }
    if (request.responseFormat) {
      const grounding = [lastUserText(request), ...groundingTexts(request.grounding)].join('\n');
      const filled = fillSchema(request.responseFormat.schema, grounding, request.responseFormat.name);
      // A refusal rather than a guessed value; 'stop' so the client's parse() surfaces message.refusal.
      if (!filled.ok) return { content: null, refusal: ungroundedRefusal(filled.missing), finishReason: 'stop' };
      return { content: JSON.stringify(filled.value), refusal: null, finishReason: 'stop' };
    }
    return bounded(answerText(request), request.maxTokens);
  },
};
