// An OpenAI-compatible upstream, configured by environment: base URL, the name
// of the variable holding its key (a reference, never the value in config),
// and a model mapping. Its failures become ProviderErrors with no identity.
import { EventSourceParserStream } from 'eventsource-parser/stream';
import { type ChatOutput, type ChatProvider, type ChatRequest, type ChatStreamEvent, ProviderError } from '../../../domain/chat/types.ts';

export interface UpstreamConfig {
  baseUrl: string;
  apiKeyEnv?: string;
  modelMap: Record<string, string>;
  timeoutMs: number;
}

interface UpstreamReply {
  choices?: { message?: { content?: string | null; refusal?: string | null }; finish_reason?: string }[];
}

interface UpstreamChunk {
  choices?: { delta?: { content?: string | null; refusal?: string | null }; finish_reason?: string | null }[];
}

function finishOf(reason: string | null | undefined): ChatOutput['finishReason'] {
  return reason === 'length' || reason === 'content_filter' ? reason : 'stop';
}

/** POSTs the request upstream; transport and HTTP failures become ProviderErrors without identity. */
async function post(config: UpstreamConfig, request: ChatRequest, signal: AbortSignal, stream: boolean): Promise<Response> {
  const key = config.apiKeyEnv ? process.env[config.apiKeyEnv] : undefined;
  let res: Response;
  try {
    res = await fetch(`${config.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
      body: JSON.stringify({
        model: config.modelMap[request.model] ?? request.model,
        messages: [
          ...(request.grounding.memory.length || request.grounding.document ? [{ role: 'system', content: groundingPrompt(request.grounding) }] : []),
          ...request.messages,
        ],
        max_tokens: request.maxTokens,
        stream,
        ...(request.responseFormat ? { response_format: { type: 'json_schema', json_schema: { ...request.responseFormat, strict: true } } } : {}),
      }),
      signal: AbortSignal.any([signal, AbortSignal.timeout(config.timeoutMs)]),
    });
  } catch (err) {
    if (signal.aborted) throw err;
    throw new ProviderError('unavailable');
  }
  if (res.status === 429) {
    const retry = Number(res.headers.get('retry-after'));
    throw new ProviderError('rate_limited', Number.isFinite(retry) && retry > 0 ? Math.ceil(retry) : 1);
  }
  if (!res.ok) throw new ProviderError('unavailable');
  return res;
}

export function upstreamProvider(config: UpstreamConfig): ChatProvider {
  return {
    id: 'upstream',
    async complete(request, signal) {
      const res = await post(config, request, signal, false);
      let reply: UpstreamReply;
      try {
        reply = (await res.json()) as UpstreamReply;
      } catch {
        throw new ProviderError('unavailable');
      }
      const choice = reply.choices?.[0];
      if (!choice?.message) throw new ProviderError('unavailable');
      return { content: choice.message.content ?? null, refusal: choice.message.refusal ?? null, finishReason: finishOf(choice.finish_reason) };
    },

    async *stream(request, signal): AsyncIterable<ChatStreamEvent> {
      const res = await post(config, request, signal, true);
      if (!res.body) throw new ProviderError('unavailable');
      const events = res.body.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream());
      let finished = false;
      for await (const event of events) {
        if (event.data === '[DONE]') break;
        let chunk: UpstreamChunk;
        try {
          chunk = JSON.parse(event.data) as UpstreamChunk;
        } catch {
          throw new ProviderError('unavailable');
        }
        const choice = chunk.choices?.[0];
        if (choice?.delta?.content) yield { type: 'content', text: choice.delta.content };
        if (choice?.delta?.refusal) yield { type: 'refusal', text: choice.delta.refusal };
        if (choice?.finish_reason) {
          finished = true;
          yield { type: 'finish', reason: finishOf(choice.finish_reason) };
        }
      }
      if (!finished) {
        if (signal.aborted) throw signal.reason;
        throw new ProviderError('unavailable');
      }
    },
  };
}

function groundingPrompt(g: { memory: { subject: string; content: string }[]; document: string | null }): string {
  const parts = ['Ground your answer in this customer context.'];
  for (const m of g.memory) parts.push(`Memory - ${m.subject}: ${m.content}`);
  if (g.document) parts.push(`Linked document: ${g.document}`);
  return parts.join('\n');
}
