// The embedded provider: the in-process model (services/embedded/embedded-model.ts) behind the same
// ChatProvider interface as an upstream. Structured output is constrained by a grammar made from the
// JSON schema, so it parses by construction. Tool calls are grammar-constrained too: offered tools
// make the answer a JSON object that either calls tools ({"tool_calls": [...]}, each call's
// arguments held to that tool's schema) or answers ({"content": "..."}); tool_choice narrows the
// choice. Usage is the model's own token count. Sampling parameters are applied; the client going
// away aborts the generation.
import { randomBytes } from 'node:crypto';
import type { ChatHistoryItem, LlamaChatResponse, LlamaGrammar } from 'node-llama-cpp';
import type {
  ChatMessage,
  ChatOutput,
  ChatProvider,
  ChatRequest,
  ChatStreamEvent,
  ReportedUsage,
  ToolCallRequest,
  ToolDefinition,
} from '../../../domain/chat/types.ts';
import { nonEmptyRequiredStrings } from '../../../domain/chat/grammar-schema.ts';
import type { EmbeddedModel, Loaded } from '../../embedded/embedded-model.ts';
import { rankContinuations } from '../../embedded/likelihood.ts';
import { groundingPrompt } from '../grounding-prompt.ts';

/** What the grammar of a tool-offering request lets the model say. */
interface ToolAnswer {
  content?: string;
  tool_calls?: { name: string; arguments: Record<string, unknown> }[];
}

const ANY_OBJECT = { type: 'object' } as const;

/** Any JSON object, with any properties (node-llama-cpp's additionalProperties is false unless set). */
const JSON_OBJECT = { type: 'object', additionalProperties: true } as const;

function callSchema(tool: ToolDefinition) {
  return {
    type: 'object',
    properties: { name: { const: tool.function.name }, arguments: tool.function.parameters ?? ANY_OBJECT },
    required: ['name', 'arguments'],
  };
}

/** The tools the request lets the model call: none, all, or the one tool_choice names. */
function callableTools(request: ChatRequest): ToolDefinition[] {
  const tools = request.tools ?? [];
  const choice = request.toolChoice;
  if (!tools.length || choice === 'none') return [];
  if (typeof choice === 'object') return tools.filter((t) => t.function.name === choice.function.name);
  return tools;
}

/** The answer's JSON schema when tools may be called: calls only (required, or a named tool), or calls or an answer (auto). */
function toolAnswerSchema(request: ChatRequest, tools: ToolDefinition[]): Record<string, unknown> {
  const items = tools.length === 1 ? callSchema(tools[0]!) : { oneOf: tools.map(callSchema) };
  const calls = {
    type: 'object',
    // A named tool_choice asks for that one call; parallel_tool_calls false for one call at most.
    properties: {
      tool_calls: { type: 'array', items, minItems: 1, maxItems: request.parallelToolCalls === false || typeof request.toolChoice === 'object' ? 1 : 4 },
    },
    required: ['tool_calls'],
  };
  if (request.toolChoice === 'required' || typeof request.toolChoice === 'object') return calls;
  return { oneOf: [{ type: 'object', properties: { content: { type: 'string' } }, required: ['content'] }, calls] };
}

function toolInstructions(tools: ToolDefinition[], mustCall: boolean): string {
  const lines = tools.map(
    (t) => `- ${t.function.name}: ${t.function.description ?? ''} Arguments (JSON schema): ${JSON.stringify(t.function.parameters ?? ANY_OBJECT)}`,
  );
  return [
    'You can call these tools:',
    ...lines,
    mustCall
      ? 'Answer with JSON: {"tool_calls": [{"name": "<tool>", "arguments": {...}}]}.'
      : 'To call tools, answer with JSON {"tool_calls": [{"name": "<tool>", "arguments": {...}}]}; to answer without a tool, {"content": "<your answer>"}.',
  ].join('\n');
}

/** The conversation as the model's chat history: tool calls and results as text, the grounding and tool list as system text. */
function historyOf(request: ChatRequest, tools: ToolDefinition[]): ChatHistoryItem[] {
  const system: string[] = [];
  if (request.grounding.memory.length || request.grounding.document) system.push(groundingPrompt(request.grounding));
  if (tools.length) system.push(toolInstructions(tools, request.toolChoice === 'required' || typeof request.toolChoice === 'object'));
  const items: ChatHistoryItem[] = system.length ? [{ type: 'system', text: system.join('\n\n') }] : [];
  for (const m of request.messages) items.push(itemOf(m));
  return items;
}

function itemOf(m: ChatMessage): ChatHistoryItem {
  switch (m.role) {
    case 'system':
    case 'developer':
      return { type: 'system', text: m.content };
    case 'user':
      return { type: 'user', text: m.content };
    case 'tool':
      return { type: 'user', text: `Result of tool call ${m.tool_call_id ?? ''}:\n${m.content}` };
    case 'assistant': {
      const calls = m.tool_calls?.map((c) => ({ name: c.function.name, arguments: safeJson(c.function.arguments) }));
      return { type: 'model', response: [calls?.length ? JSON.stringify({ tool_calls: calls }) : m.content] };
    }
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return {};
  }
}

type Generated = { text: string; stopReason: LlamaChatResponse['metadata']['stopReason'] | 'customStopTrigger'; usage: ReportedUsage };

/** The grammar the answer must follow, if any: the tool choice, a json_schema, or any JSON object. */
async function grammarOf(model: EmbeddedModel, loaded: Loaded, request: ChatRequest, tools: ToolDefinition[]): Promise<LlamaGrammar | undefined> {
  if (tools.length) return await model.grammarFor(loaded.llama, toolAnswerSchema(request, tools));
  const format = request.responseFormat;
  if (!format) return undefined;
  // JSON mode is a JSON object: node-llama-cpp's 'json' grammar would let the model answer any JSON value.
  if (format.kind === 'json_object') return await model.grammarFor(loaded.llama, JSON_OBJECT);
  try {
    return await model.grammarFor(loaded.llama, nonEmptyRequiredStrings(format.schema));
  } catch {
    // A schema the grammar builder does not take: any JSON; the chat layer checks the answer against the schema.
    return await loaded.llama.getGrammarFor('json');
  }
}

async function generate(
  model: EmbeddedModel,
  request: ChatRequest,
  signal: AbortSignal,
  onText?: (text: string) => void,
): Promise<Generated & { tools: boolean }> {
  const tools = callableTools(request);
  return await model.use(signal, async (loaded) => {
    const { LlamaChat } = await import('node-llama-cpp');
    const chat = new LlamaChat({ contextSequence: loaded.sequence, chatWrapper: loaded.chatWrapper });
    const before = loaded.sequence.tokenMeter.getState();
    try {
      const grammar = await grammarOf(model, loaded, request, tools);
      const s = request.sampling ?? {};
      const stops = s.stop === undefined ? [] : Array.isArray(s.stop) ? s.stop : [s.stop];
      const penalties = s.presence_penalty || s.frequency_penalty;
      const response = await chat.generateResponse(historyOf(request, tools), {
        ...(grammar ? { grammar } : {}),
        maxTokens: request.maxTokens,
        ...(s.temperature !== undefined ? { temperature: s.temperature } : {}),
        ...(s.top_p !== undefined ? { topP: s.top_p } : {}),
        ...(s.seed !== undefined ? { seed: s.seed } : {}),
        ...(stops.length ? { customStopTriggers: stops } : {}),
        ...(penalties ? { repeatPenalty: { presencePenalty: s.presence_penalty ?? 0, frequencyPenalty: s.frequency_penalty ?? 0 } } : {}),
        signal,
        // Text streams only when it is the answer itself; a grammar's JSON is sent whole at the end.
        ...(onText && !tools.length ? { onTextChunk: onText } : {}),
      });
      const after = loaded.sequence.tokenMeter.getState();
      return {
        text: response.response,
        stopReason: response.metadata.stopReason,
        tools: tools.length > 0,
        usage: { promptTokens: after.usedInputTokens - before.usedInputTokens, completionTokens: after.usedOutputTokens - before.usedOutputTokens },
      };
    } finally {
      chat.dispose({ disposeSequence: false });
    }
  });
}

const callId = () => `call_${randomBytes(9).toString('base64url')}`;

/** The answer as ChatOutput: a tool-offering answer's JSON becomes tool calls or content; a cut-off answer finishes `length`. */
function outputOf(g: Generated & { tools: boolean }): ChatOutput {
  const finish: ChatOutput['finishReason'] = g.stopReason === 'maxTokens' ? 'length' : 'stop';
  if (!g.tools) return { content: g.text, refusal: null, finishReason: finish, usage: g.usage };
  let answer: ToolAnswer | undefined;
  try {
    answer = JSON.parse(g.text) as ToolAnswer;
  } catch {} // cut off by max_tokens: what came is returned as content, finish length
  const calls = answer?.tool_calls;
  if (calls?.length) {
    const toolCalls: ToolCallRequest[] = calls.map((c) => ({
      id: callId(),
      type: 'function',
      function: { name: c.name, arguments: JSON.stringify(c.arguments ?? {}) },
    }));
    return { content: null, refusal: null, finishReason: 'tool_calls', toolCalls, usage: g.usage };
  }
  return { content: answer?.content ?? g.text, refusal: null, finishReason: finish, usage: g.usage };
}

export function embeddedProvider(model: EmbeddedModel): ChatProvider {
  return {
    id: 'embedded',
    callsTools: true,
    modelFor: () => model.name,
    async complete(request, signal) {
      return outputOf(await generate(model, request, signal));
    },

    async rank(request, signal) {
      return await model.use(signal, async (loaded) => {
        const before = loaded.sequence.tokenMeter.getState();
        const ranked = await rankContinuations(loaded, request.messages.map(itemOf), request.candidates, request.prefix);
        const after = loaded.sequence.tokenMeter.getState();
        return { scores: ranked.scores, usage: { promptTokens: after.usedInputTokens - before.usedInputTokens, completionTokens: 0 } };
      });
    },

    async *stream(request, signal): AsyncIterable<ChatStreamEvent> {
      // The generation pushes text chunks; this generator hands them on as they come.
      const pending: string[] = [];
      let wake: (() => void) | undefined;
      const onText = (text: string) => {
        if (!text) return;
        pending.push(text);
        wake?.();
      };
      let result: (Generated & { tools: boolean }) | undefined;
      let failure: { err: unknown } | undefined;
      const done = generate(model, request, signal, onText).then(
        (r) => {
          result = r;
          wake?.();
        },
        (err) => {
          failure = { err };
          wake?.();
        },
      );
      for (;;) {
        while (pending.length) yield { type: 'content', text: pending.shift()! };
        if (result || failure) break;
        await new Promise<void>((r) => (wake = r));
        wake = undefined;
      }
      await done;
      if (failure) throw failure.err;
      const output = outputOf(result!);
      if (result!.tools) {
        if (output.toolCalls) {
          yield {
            type: 'tool_calls',
            deltas: output.toolCalls.map((c, index) => ({
              index,
              id: c.id,
              type: 'function',
              function: { name: c.function.name, arguments: c.function.arguments },
            })),
          };
        } else if (output.content) yield { type: 'content', text: output.content };
      }
      yield { type: 'finish', reason: output.finishReason };
      yield { type: 'usage', usage: output.usage! };
    },
  };
}
