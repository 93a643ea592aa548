// Writes a prepared chat completion as server-sent events in the shape the
// OpenAI client reads: role first, content deltas, finish_reason, optional
// usage chunk, `data: [DONE]`, with keep-alive comments while waiting. Tool
// calls go out as `delta.tool_calls`, chunk for chunk as the provider streamed them.
import { PassThrough } from 'node:stream';
import { ApiError, errors, toErrorBody } from '../../domain/errors.ts';
import type { PreparedChat } from '../../services/chat/completions.ts';

export function sseCompletion(
  prepared: PreparedChat,
  options: { includeUsage: boolean; keepAliveMs: number; signal: AbortSignal; requestId: string },
): PassThrough {
  const out = new PassThrough();
  const base = { id: prepared.id, object: 'chat.completion.chunk', created: prepared.created, model: prepared.model };
  const send = (payload: unknown) => out.write(`data: ${JSON.stringify(payload)}\n\n`);
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
    send({ ...base, choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }] });

  chunk({ role: 'assistant', content: '' });
  const keepAlive = setInterval(() => out.write(': keep-alive\n\n'), options.keepAliveMs);
  void (async () => {
    try {
      for await (const delta of prepared.stream(options.signal)) {
        if (delta.kind === 'done') {
          chunk({}, delta.finishReason);
          if (options.includeUsage) send({ ...base, choices: [], usage: delta.usage });
        } else if (delta.kind === 'tool_calls') {
          chunk({ tool_calls: delta.toolCalls });
        } else {
          chunk({ [delta.kind]: delta.text });
        }
      }
      out.write('data: [DONE]\n\n');
    } catch (err) {
      // Headers are gone: the failure travels as an error event, then the stream ends.
      if (!options.signal.aborted) send(toErrorBody(err instanceof ApiError ? err : errors.internal(), options.requestId));
    } finally {
      clearInterval(keepAlive);
      out.end();
    }
  })();
  return out;
}
