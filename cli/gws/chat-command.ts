// `gws chat "…" [--model M] [--system S] [--memory] [--no-stream]`: POST /v1/chat/completions with
// stream true, writing each content delta to stdout as it arrives (--json: each chunk as a JSON line).
import type { ChatCompletionChunk, ChatCompletionRequest } from '../../client/index.ts';
import { type CommandContext, writeJson, writeLine } from './context.ts';
import { ApiError, unwrap } from './errors.ts';
import { EXIT } from './exit-codes.ts';
import { readSse } from './sse.ts';

export const DEFAULT_CHAT_MODEL = 'svc-workspace';

export interface ChatOptions {
  model?: string;
  system?: string;
  memory?: boolean;
  stream?: boolean;
}

export async function chatCommand(ctx: CommandContext, prompt: string, options: ChatOptions): Promise<number> {
  const body: ChatCompletionRequest = {
    model: options.model ?? DEFAULT_CHAT_MODEL,
    messages: [...(options.system ? [{ role: 'system' as const, content: options.system }] : []), { role: 'user', content: prompt }],
    ...(options.memory ? { memory: true } : {}),
  };
  if (options.stream === false) {
    const completion = unwrap(await ctx.client.POST('/v1/chat/completions', { body: { ...body, stream: false } }));
    if (ctx.mode === 'json') writeJson(ctx.out, completion);
    else {
      const message = completion.choices[0]?.message;
      if (message?.content) writeLine(ctx.out, message.content);
      if (message?.refusal) writeLine(ctx.err, `refusal: ${message.refusal}`);
    }
    return EXIT.ok;
  }

  const result = await ctx.client.POST('/v1/chat/completions', { body: { ...body, stream: true }, parseAs: 'stream', signal: ctx.signal });
  unwrap(result);
  let wrote = false;
  let refusal = '';
  await readSse(result.response, (message) => {
    if (message.data === '[DONE]') return 'stop';
    const chunk = JSON.parse(message.data) as ChatCompletionChunk | { error?: { code?: string; message?: string; request_id?: string } };
    // The stream's headers were sent: a failure after them arrives as an error event.
    if ('error' in chunk && chunk.error) {
      throw new ApiError(
        result.response.status,
        chunk.error.code ?? 'stream_error',
        chunk.error.message ?? '',
        chunk.error.request_id ?? result.response.headers.get('x-request-id'),
      );
    }
    if (ctx.mode === 'json') {
      writeJson(ctx.out, chunk);
      return;
    }
    const delta = (chunk as ChatCompletionChunk).choices[0]?.delta;
    if (delta?.content) {
      ctx.out.write(delta.content);
      wrote = true;
    }
    if (delta?.refusal) refusal += delta.refusal;
  });
  if (wrote) ctx.out.write('\n');
  if (refusal) writeLine(ctx.err, `refusal: ${refusal}`);
  return EXIT.ok;
}
