// POST /v1/chat/completions: OpenAI-compatible, JSON or server-sent events.
import { checkSchemaSubset } from '../../domain/chat/schema-subset.ts';
import type { ChatMessage, Sampling } from '../../domain/chat/types.ts';
import { errors } from '../../domain/errors.ts';
import { looksLikeSecret } from '../../domain/secrets.ts';
import type { ChatInput, MemoryOptions, PreparedChat } from '../../services/chat/completions.ts';
import { ErrorObject, retryAfterIfRetryableHeader, shouldRetryHeader } from '../contract/common.ts';
import { defineRoute } from '../contract/route.ts';
import { ChatCompletion, ChatCompletionChunk, ChatCompletionRequest } from '../schemas/chat.ts';
import { sseCompletion } from './chat-sse.ts';
import type { z } from 'zod';

export interface ChatService {
  prepare(input: ChatInput, signal: AbortSignal): Promise<PreparedChat>;
}

type Body = z.output<typeof ChatCompletionRequest>;

function messagesOf(body: Body): ChatMessage[] {
  return body.messages.map((m) => ({
    role: m.role,
    content: m.content === null ? '' : typeof m.content === 'string' ? m.content : m.content.map((p) => p.text).join('\n'),
    // The contract checked the pairing (api/schemas/chat.ts); only OpenAI's wire fields of a call go on.
    ...(m.role === 'assistant' && m.tool_calls
      ? { tool_calls: m.tool_calls.map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.function.name, arguments: c.function.arguments } })) }
      : {}),
    ...(m.role === 'tool' && m.tool_call_id !== undefined ? { tool_call_id: m.tool_call_id } : {}),
  }));
}

/** `text` (the default) asks for nothing: no response format. */
function responseFormatOf(format: Body['response_format']): ChatInput['responseFormat'] {
  if (format?.type === 'json_schema') {
    const { name, schema, description, strict } = format.json_schema;
    return { kind: 'json_schema', name, schema, ...(description !== undefined ? { description } : {}), ...(strict !== undefined ? { strict } : {}) };
  }
  if (format?.type === 'json_object') return { kind: 'json_object' };
  return null;
}

function memoryOf(memory: Body['memory']): MemoryOptions | null {
  if (memory === undefined || memory === false) return null;
  if (memory === true) return { recall: true, remember: false, limit: 3 };
  return {
    recall: memory.recall ?? true,
    remember: memory.remember ?? false,
    limit: memory.limit ?? 3,
    subject: memory.subject,
    expiresAt: memory.expires_at ? new Date(memory.expires_at) : undefined,
  };
}

export function chatRoutes(deps: { chat: ChatService; keepAliveMs: number }) {
  return [
    defineRoute({
      method: 'post',
      path: '/v1/chat/completions',
      operationId: 'createChatCompletion',
      summary: 'Chat completion (OpenAI-compatible)',
      description:
        'Works with the official openai client. With stream true the answer is server-sent events of chat.completion.chunk. Usage is reserved and settled through the ledger. A policy refusal is 200 with message.refusal and finish_reason content_filter, never a 5xx. ' +
        'Tools (tools, tool_choice, parallel_tool_calls) in the OpenAI wire format are passed to an upstream provider; its tool calls come back as message.tool_calls, or streamed as delta.tool_calls, with finish_reason tool_calls. The local provider cannot call tools (400 tools_not_supported unless tool_choice is "none").',
      tags: ['chat'],
      auth: 'core',
      request: { body: ChatCompletionRequest },
      responses: {
        200: {
          description: 'The completion (application/json), or its event stream (text/event-stream) when stream is true.',
          schema: ChatCompletion,
          alternatives: [{ contentType: 'text/event-stream', eventData: ChatCompletionChunk }],
        },
        400: {
          description:
            'Invalid request; `param` names the field (invalid_request, unsupported_parameter, e.g. the legacy functions and function_call). Code tools_not_supported (param tools): tools with a tool_choice other than "none" for a model the tenant\'s routing sends to the local provider, which cannot call tools; nothing was held or sent.',
          schema: ErrorObject,
        },
        404: { description: 'Unknown model id (code model_not_found).', schema: ErrorObject },
        409: {
          description:
            "The tenant's routing policy sends the model to a provider this deployment has not configured (code model_not_routable, param model). Nothing was held or sent. Not retryable (`x-should-retry: false`): change the routing policy or ask the operator to configure the provider.",
          schema: ErrorObject,
          headers: { 'x-should-retry': shouldRetryHeader },
        },
        429: {
          description:
            "Two kinds. Retryable: code rate_limit_exceeded (the per-key limit, the per-address limit of failed authentications, or the model service's own), with Retry-After: wait that long, then retry. " +
            'Not retryable: code insufficient_credits (the available credits cannot cover the request) or budget_exceeded (a budget policy leaves no room): no Retry-After, and `x-should-retry: false`, so clients (the official OpenAI ones included) do not retry a request that cannot succeed until credits are granted or the budget changes.',
          schema: ErrorObject,
          headers: { 'Retry-After': retryAfterIfRetryableHeader, 'x-should-retry': shouldRetryHeader.optional() },
        },
        502: { description: 'The model service failed (code upstream_unavailable). Opaque; no provider identity.', schema: ErrorObject },
      },
      async handler({ principal, body, ctx }) {
        // The schema is checked against the subset (and compiled) before anything is held.
        if (body.response_format?.type === 'json_schema') {
          const check = checkSchemaSubset(body.response_format.json_schema.schema);
          if (!check.ok) throw errors.invalidRequest(check.message, check.path);
        }
        // A URL with userinfo or a credential in its query would send (and log, at the far end) a secret.
        if (body.context_url && looksLikeSecret(body.context_url)) throw errors.credentialValueRefused('context_url');
        // A client that goes away aborts the work behind its request.
        const controller = new AbortController();
        ctx.res.once('close', () => {
          if (!ctx.res.writableFinished) controller.abort();
        });
        const prepared = await deps.chat.prepare(
          {
            tenantId: principal!.tenantId,
            model: body.model,
            messages: messagesOf(body),
            contextUrl: body.context_url,
            memory: memoryOf(body.memory),
            responseFormat: responseFormatOf(body.response_format),
            maxTokens: body.max_completion_tokens ?? body.max_tokens,
            sampling: samplingOf(body),
            ...(body.tools?.length ? { tools: body.tools, toolChoice: body.tool_choice, parallelToolCalls: body.parallel_tool_calls } : {}),
          },
          controller.signal,
        );
        if (body.stream) {
          ctx.req.socket.setNoDelay(true);
          return {
            status: 200,
            body: sseCompletion(prepared, {
              includeUsage: body.stream_options?.include_usage === true,
              keepAliveMs: deps.keepAliveMs,
              signal: controller.signal,
              requestId: ctx.state.requestId as string,
            }),
            headers: {
              'Content-Type': 'text/event-stream; charset=utf-8',
              'Cache-Control': 'no-cache, no-transform',
              Connection: 'keep-alive',
              'X-Accel-Buffering': 'no',
            },
          };
        }
        const { output, usage } = await prepared.finish(controller.signal);
        return {
          status: 200,
          body: {
            id: prepared.id,
            object: 'chat.completion',
            created: prepared.created,
            model: prepared.model,
            choices: [
              {
                index: 0,
                message: {
                  role: 'assistant',
                  content: output.content,
                  refusal: output.refusal,
                  ...(output.toolCalls?.length ? { tool_calls: output.toolCalls } : {}),
                },
                finish_reason: output.finishReason,
                logprobs: null,
              },
            ],
            usage,
          },
        };
      },
    }),
  ];
}

/** OpenAI's sampling parameters the request set, as they came (the contract checked their bounds). */
function samplingOf(body: Body): Sampling {
  const { temperature, top_p, seed, stop, presence_penalty, frequency_penalty, user } = body;
  const all: Sampling = { temperature, top_p, seed, stop, presence_penalty, frequency_penalty, user };
  return Object.fromEntries(Object.entries(all).filter(([, v]) => v !== undefined)) as Sampling;
}
