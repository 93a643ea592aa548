import { z } from 'zod';
import { FutureDateTime } from '../contract/common.ts';
import { SCHEMA_SUBSET_DESCRIPTION } from '../../domain/chat/schema-subset.ts';
import { MODEL_IDS } from '../../domain/models.ts';

/** What the sampling parameters do here: forwarded to an upstream as sent, read by no local provider. */
const SAMPLING_NOTE = "Forwarded to an upstream provider as sent (OpenAI's bounds); the local provider is deterministic and ignores it.";

const TextPart = z.strictObject({ type: z.literal('text'), text: z.string().max(100_000) });

/** A function name as OpenAI admits it in `tools` and `tool_choice`. */
const FunctionName = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,64}$/)
  .meta({ description: '1 to 64 letters, digits, underscores or hyphens.' });
const TOOL_PARAMETERS_MAX_BYTES = 16_384;

const MessageToolCall = z
  .looseObject({
    id: z.string().min(1).max(256),
    type: z.literal('function'),
    function: z.looseObject({ name: z.string().min(1).max(256), arguments: z.string().max(100_000) }),
  })
  .meta({
    id: 'ChatMessageToolCall',
    description:
      "A tool call of an earlier assistant turn, as the completion returned it (`arguments` is a JSON string). Other fields, such as a client's `parsed_arguments`, are ignored.",
  });

export const ChatMessage = z
  .looseObject({
    role: z.enum(['system', 'developer', 'user', 'assistant', 'tool']),
    content: z.union([z.string().max(100_000), z.array(TextPart).min(1).max(64), z.null()]),
    name: z.string().max(64).optional(),
    tool_calls: z.array(MessageToolCall).min(1).max(128).optional().meta({
      description:
        'Assistant messages only: the tool calls that turn made (its content may then be null). The tool messages right after it answer every call, one each; else 400 naming this field.',
    }),
    tool_call_id: z.string().min(1).max(256).optional().meta({
      description: 'Required for role tool, read only there: the id of the call, in the assistant message before it, that this tool result answers.',
    }),
  })
  .meta({
    id: 'ChatMessage',
    description:
      "OpenAI's message shape; content is a string or an array of text parts (or null for an assistant turn that only called tools). An assistant message may carry tool_calls; a tool message carries its result as content and the tool_call_id it answers.",
  });

export const ChatTool = z
  .strictObject({
    type: z.literal('function').meta({ description: 'Function tools only.' }),
    function: z.strictObject({
      name: FunctionName,
      description: z.string().max(8_192).optional(),
      parameters: z
        .record(z.string(), z.unknown())
        .superRefine((schema, ctx) => {
          if (Buffer.byteLength(JSON.stringify(schema)) > TOOL_PARAMETERS_MAX_BYTES) {
            ctx.addIssue({ code: 'custom', message: `must be at most ${TOOL_PARAMETERS_MAX_BYTES} bytes as JSON` });
          } else if ('type' in schema && schema.type !== 'object') {
            ctx.addIssue({ code: 'custom', message: 'the arguments are an object: the schema\'s top-level type must be "object"', path: ['type'] });
          }
        })
        .optional()
        .meta({
          description: `A JSON Schema of the arguments object (top-level type "object" when stated), at most ${TOOL_PARAMETERS_MAX_BYTES} bytes as JSON; passed to the upstream unchanged. Omitted: a function without arguments.`,
        }),
      strict: z.boolean().optional().meta({ description: 'Passed to the upstream: true asks it to hold the arguments to the schema exactly.' }),
    }),
  })
  .meta({ id: 'ChatTool', description: "A function the model may call, in OpenAI's `tools` wire format." });

const ToolChoice = z
  .union([z.enum(['none', 'auto', 'required']), z.strictObject({ type: z.literal('function'), function: z.strictObject({ name: FunctionName }) })])
  .meta({
    id: 'ChatToolChoice',
    description:
      'none: answer in text, call no tool. auto (the default with tools): the model decides. required: it must call at least one tool (needs tools). {type: "function", function: {name}}: it must call that function, which must be one of tools; else 400 with param tool_choice.',
  });

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
    model: z
      .string()
      .min(1)
      .max(100)
      .meta({ description: `One of ${MODEL_IDS.join(', ')}; any other id is 404 not_found.` }),
    messages: z.array(ChatMessage).min(1).max(64),
    stream: z.boolean().default(false),
    stream_options: z.strictObject({ include_usage: z.boolean().optional() }).optional(),
    context_url: z.url().optional().meta({ description: 'Fetched only from allow-listed hosts, bounded in size and time; else 400 with param context_url.' }),
    memory: z.union([z.boolean(), MemoryOptions]).optional().meta({
      description: 'true: recall from the vault. Object: recall/remember/limit/subject/expires_at. Absent or false: the vault is neither read nor written.',
    }),
    response_format: z
      .discriminatedUnion('type', [
        z.strictObject({ type: z.literal('text') }).meta({ id: 'ChatResponseFormatText', description: 'A text answer (the default).' }),
        z.strictObject({ type: z.literal('json_object') }).meta({
          id: 'ChatResponseFormatJsonObject',
          description:
            'An answer whose content is a JSON object. The local provider answers {"answer": "<its text answer>"}; the embedded model a flat object keyed after the question, else {"answer": …}, within max_tokens; an upstream gets json_object. An answer that is not a JSON object becomes a refusal (finish_reason stop, message.refusal set, content null).',
        }),
        z
          .strictObject({
            type: z.literal('json_schema'),
            json_schema: z.strictObject({
              name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/),
              description: z.string().max(1000).optional(),
              schema: z.record(z.string(), z.unknown()).meta({ description: SCHEMA_SUBSET_DESCRIPTION }),
              strict: z.boolean().optional(),
            }),
          })
          .meta({
            id: 'ChatResponseFormatJsonSchema',
            description: 'An answer whose content validates against the schema, or a refusal; never an invented value.',
          }),
      ])
      .optional(),
    max_tokens: z.int().min(1).max(16_384).optional(),
    max_completion_tokens: z.int().min(1).max(16_384).optional(),
    temperature: z.number().min(0).max(2).optional().meta({ description: SAMPLING_NOTE }),
    top_p: z.number().min(0).max(1).optional().meta({ description: SAMPLING_NOTE }),
    stop: z
      .union([z.string().min(1).max(256), z.array(z.string().min(1).max(256)).min(1).max(4)])
      .optional()
      .meta({ description: `Up to 4 sequences where the upstream stops generating. ${SAMPLING_NOTE}` }),
    presence_penalty: z.number().min(-2).max(2).optional().meta({ description: SAMPLING_NOTE }),
    frequency_penalty: z.number().min(-2).max(2).optional().meta({ description: SAMPLING_NOTE }),
    n: z
      .literal(1, { error: 'only n=1 is supported (one choice per request); omit n or send 1, and send separate requests for more choices' })
      .optional()
      .meta({ description: 'Number of choices: only 1 is supported. Any other value is 400 invalid_request with param n; nothing is charged.' }),
    seed: z.int().min(Number.MIN_SAFE_INTEGER).max(Number.MAX_SAFE_INTEGER).optional().meta({ description: SAMPLING_NOTE }),
    user: z
      .string()
      .max(256)
      .optional()
      .meta({ description: `An id of the end user, forwarded to an upstream for its abuse monitoring; never logged. ${SAMPLING_NOTE}` }),
    tools: z.array(ChatTool).max(128).optional().meta({
      description:
        'Functions the model may call, passed to an upstream provider unchanged; names are unique. The local provider cannot call tools: with tools (an empty array is none) and a tool_choice other than "none" it answers 400 tools_not_supported with param tools, holding and charging nothing; with tool_choice "none" it answers in text and the tools are not read. The legacy `functions` and `function_call` are 400 unsupported_parameter: use tools and tool_choice.',
    }),
    tool_choice: ToolChoice.optional(),
    parallel_tool_calls: z
      .boolean()
      .optional()
      .meta({ description: 'Whether the model may call several tools in one turn; passed to the upstream with tools, else ignored.' }),
  })
  .superRefine((body, ctx) => {
    const issue = (path: (string | number)[], message: string) => ctx.addIssue({ code: 'custom', message, path });
    const names = new Map<string, number>();
    for (const [i, tool] of (body.tools ?? []).entries()) {
      const first = names.get(tool.function.name);
      if (first !== undefined) return issue(['tools', i, 'function', 'name'], `repeats the name of tools[${first}]; function names must be unique`);
      names.set(tool.function.name, i);
    }
    const choice = body.tool_choice;
    if (choice === 'required' && names.size === 0) return issue(['tool_choice'], '"required" needs at least one function in tools');
    if (typeof choice === 'object' && !names.has(choice.function.name)) return issue(['tool_choice'], 'names a function that is not one of tools');
    // OpenAI's conversation rule: the tool messages right after an assistant turn with tool_calls answer each of its calls once.
    let open = new Set<string>();
    let openAt = -1;
    for (const [i, m] of body.messages.entries()) {
      if (m.tool_calls && m.role !== 'assistant') return issue(['messages', i, 'tool_calls'], 'only an assistant message carries tool_calls');
      if (m.role === 'tool') {
        if (m.tool_call_id === undefined) return issue(['messages', i, 'tool_call_id'], 'a tool message needs the tool_call_id of the call it answers');
        if (!open.delete(m.tool_call_id)) {
          return issue(['messages', i, 'tool_call_id'], 'answers no unanswered call of the assistant tool_calls message right before it');
        }
        continue;
      }
      if (open.size > 0) break;
      open = new Set(m.tool_calls?.map((c) => c.id));
      openAt = i;
    }
    if (open.size > 0) issue(['messages', openAt, 'tool_calls'], 'has calls that no tool message right after it answers');
  })
  .meta({ id: 'ChatCompletionRequest' });

const Usage = z.object({ prompt_tokens: z.int(), completion_tokens: z.int(), total_tokens: z.int() }).meta({
  id: 'ChatUsage',
  description:
    'The tokens charged: as the upstream provider reported them (streamed calls ask for its usage), or, when it reports none (and on the local provider), the byte-count estimate (one token per 4 UTF-8 bytes). The charge in GET /v1/usage says which (usage_basis).',
});
const FinishReason = z.enum(['stop', 'length', 'content_filter', 'tool_calls']).meta({
  description:
    'tool_calls: the model called tools (message.tool_calls, or the streamed delta.tool_calls); run them and send the results back as tool messages. content_filter is the stop signal of a policy refusal. A structured-output refusal (no grounded value for a required field, or an answer that does not validate) finishes stop, with message.refusal set and content null.',
});

const ToolCall = z
  .object({
    id: z.string(),
    type: z.literal('function'),
    function: z.object({
      name: z.string(),
      arguments: z.string().meta({ description: 'The arguments as a JSON string, as the model wrote them: parse and check them before running the function.' }),
    }),
  })
  .meta({ id: 'ChatToolCall', description: 'A call the model made; answer it with a tool message carrying this id as tool_call_id.' });

const ToolCallDelta = z
  .object({
    index: z.int().min(0).meta({ description: 'Which call of this answer the fragment belongs to.' }),
    id: z.string().optional(),
    type: z.literal('function').optional(),
    function: z.object({ name: z.string().optional(), arguments: z.string().optional() }).optional(),
  })
  .meta({
    id: 'ChatToolCallDelta',
    description:
      "A piece of a streamed tool call, as OpenAI streams it: the first for an index carries id, type and function.name, later ones fragments of function.arguments; concatenate them in order (the official clients' stream helpers do).",
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
        message: z.object({
          role: z.literal('assistant'),
          content: z.string().nullable(),
          refusal: z.string().nullable(),
          tool_calls: z
            .array(ToolCall)
            .optional()
            .meta({ description: 'Present when the model called tools (finish_reason tool_calls); content is then usually null.' }),
        }),
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
        delta: z.object({
          role: z.literal('assistant').optional(),
          content: z.string().optional(),
          refusal: z.string().optional(),
          tool_calls: z.array(ToolCallDelta).optional(),
        }),
        finish_reason: FinishReason.nullable(),
        logprobs: z.null(),
      }),
    ),
    usage: Usage.nullable().optional(),
  })
  .meta({
    id: 'ChatCompletionChunk',
    description:
      'One server-sent event `data:` line. The first delta carries the role, the last chunk with choices carries finish_reason; tool calls arrive as delta.tool_calls, as OpenAI streams them (ChatToolCallDelta), and finish tool_calls; with stream_options.include_usage a final chunk with empty choices carries usage; the stream ends with `data: [DONE]`. Lines starting with `:` are keep-alive comments.',
  });
