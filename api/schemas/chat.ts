import { z } from 'zod';
import { FutureDateTime } from '../contract/common.ts';
import { SUPPORTED_KEYWORDS } from '../../domain/chat/schema-subset.ts';
import { MODEL_IDS } from '../../domain/models.ts';

const TextPart = z.strictObject({ type: z.literal('text'), text: z.string().max(100_000) });

export const ChatMessage = z
  .looseObject({
    role: z.enum(['system', 'developer', 'user', 'assistant', 'tool']),
    content: z.union([z.string().max(100_000), z.array(TextPart).min(1).max(64), z.null()]),
    name: z.string().max(64).optional(),
    tool_call_id: z.string().optional(),
  })
  .meta({ id: 'ChatMessage', description: "OpenAI's message shape; content is a string or an array of text parts." });

const MemoryOptions = z
  .strictObject({
    recall: z.boolean().optional().meta({ description: 'Recall matching vault entries into the context (default true).' }),
    remember: z.boolean().optional().meta({ description: 'Remember this exchange in the vault (default false).' }),
    limit: z.int().min(1).max(10).optional().meta({ description: 'How many entries to recall (default 3).' }),
    subject: z.string().min(1).max(200).optional().meta({ description: 'Focus recall on this subject; the subject of a remembered exchange.' }),
    expires_at: FutureDateTime.optional().meta({ description: 'Expiry of a remembered exchange; in the future.' }),
  })
  .meta({ id: 'ChatMemoryOptions' });

export const ChatCompletionRequest = z
  .strictObject({
    model: z.string().min(1).max(100).meta({ description: `One of ${MODEL_IDS.join(', ')}; any other id is 404 not_found.` }),
    messages: z.array(ChatMessage).min(1).max(64),
    stream: z.boolean().default(false),
    stream_options: z.strictObject({ include_usage: z.boolean().optional() }).optional(),
    context_url: z.url().optional().meta({ description: 'Fetched only from allow-listed hosts, bounded in size and time; else 400 with param context_url.' }),
    memory: z.union([z.boolean(), MemoryOptions]).optional().meta({
      description: 'true: recall from the vault. Object: recall/remember/limit/subject/expires_at. Absent or false: the vault is neither read nor written.',
    }),
    response_format: z
      .strictObject({
        type: z.literal('json_schema'),
        json_schema: z.strictObject({
          name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/),
          description: z.string().max(1000).optional(),
          schema: z.record(z.string(), z.unknown()).meta({
            description: `A bounded JSON Schema subset: keywords ${SUPPORTED_KEYWORDS.join(', ')}; at most 5 levels, 64 properties, 100 enum values. Anything else is 400 with param naming the keyword.`,
          }),
          strict: z.boolean().optional(),
        }),
      })
      .optional(),
    max_tokens: z.int().min(1).max(16_384).optional(),
    max_completion_tokens: z.int().min(1).max(16_384).optional(),
    temperature: z.number().min(0).max(2).optional(),
    top_p: z.number().min(0).max(1).optional(),
    n: z.literal(1).optional(),
    seed: z.int().optional(),
    user: z.string().max(256).optional(),
  })
  .meta({ id: 'ChatCompletionRequest' });

const Usage = z.object({ prompt_tokens: z.int(), completion_tokens: z.int(), total_tokens: z.int() }).meta({
  id: 'ChatUsage',
  description: 'Byte-count token estimate (one token per 4 UTF-8 bytes), the basis of the credits reserved and settled.',
});
const FinishReason = z.enum(['stop', 'length', 'content_filter']).meta({
  description:
    'content_filter is the stop signal of a policy refusal. A structured-output refusal (no grounded value for a required field, or an answer that does not validate) finishes stop, with message.refusal set and content null.',
});

export const ChatCompletion = z
  .object({
    id: z.string(),
    object: z.literal('chat.completion'),
    created: z.int(),
    model: z.enum(MODEL_IDS),
    choices: z.array(
      z.object({
        index: z.literal(0),
        message: z.object({ role: z.literal('assistant'), content: z.string().nullable(), refusal: z.string().nullable() }),
        finish_reason: FinishReason,
        logprobs: z.null(),
      }),
    ),
    usage: Usage,
  })
  .meta({ id: 'ChatCompletion' });

export const ChatCompletionChunk = z
  .object({
    id: z.string(),
    object: z.literal('chat.completion.chunk'),
    created: z.int(),
    model: z.enum(MODEL_IDS),
    choices: z.array(
      z.object({
        index: z.literal(0),
        delta: z.object({ role: z.literal('assistant').optional(), content: z.string().optional(), refusal: z.string().optional() }),
        finish_reason: FinishReason.nullable(),
        logprobs: z.null(),
      }),
    ),
    usage: Usage.nullable().optional(),
  })
  .meta({
    id: 'ChatCompletionChunk',
    description:
      'One server-sent event `data:` line. The first delta carries the role, the last chunk with choices carries finish_reason; with stream_options.include_usage a final chunk with empty choices carries usage; the stream ends with `data: [DONE]`. Lines starting with `:` are keep-alive comments.',
  });
