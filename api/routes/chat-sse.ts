// Writes a prepared chat completion as server-sent events in the shape the
// OpenAI client reads: role first, content deltas, finish_reason, optional
// usage chunk, `data: [DONE]`, with keep-alive comments while waiting.
import { PassThrough } from 'node:stream';
import { ApiError, errors, toErrorBody } from '../../domain/errors.ts';
import type { PreparedChat } from '../../services/chat/completions.ts';

/** Splits text into small deltas (about three words each), keeping every character. */
export function deltasOf(text: string): string[] {
  const words = text.match(/\s*\S+\s*/g) ?? (text ? [text] : []);
  const deltas: string[] = [];
  for (let i = 0; i < words.length; i += 3) deltas.push(words.slice(i, i + 3).join(''));
  return deltas;
}

export function sseCompletion(
  prepared: PreparedChat,
  options: { includeUsage: boolean; keepAliveMs: number; signal: AbortSignal; requestId: string },
): PassThrough {
  const out = new PassThrough();
  const base = { id: prepared.id, object: 'chat.completion.chunk', created: prepared.created, model: prepared.model };
  const send = (payload: unknown) => out.write(`data: ${JSON.stringify(payload)}\n\n`);
  const chunk = (delta: Record<string, string>, finish: string | null = null) =>
    send({ ...base, choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }] });

  chunk({ role: 'assistant', content: '' });
  const keepAlive = setInterval(() => out.write(': keep-alive\n\n'), options.keepAliveMs);
  void (async () => {
    try {
      const { output, usage } = await prepared.finish(options.signal);
      if (output.refusal) chunk({ refusal: output.refusal });
      else for (const piece of deltasOf(output.content ?? '')) chunk({ content: piece });
      chunk({}, output.finishReason);
      if (options.includeUsage) send({ ...base, choices: [], usage });
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
