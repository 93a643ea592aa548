// The embedded provider: the in-process model (services/embedded/embedded-model.ts) behind the same
// ChatProvider interface as an upstream. Structured output is constrained by a grammar made from the
// JSON schema, so it parses by construction. Tool calls are grammar-constrained too: offered tools
// make the answer a JSON object that either calls tools ({"tool_calls": [...]}, each call's
// arguments held to that tool's schema) or answers ({"content": "..."}); tool_choice narrows the
// choice. JSON mode (json_object) asks for an object with the keys the question implies and, when the
// model does not close one in half the budget, for {"answer": ...} in the rest. Usage is the model's
// own token count. Sampling parameters are applied; the client going away aborts the generation.
import { randomBytes } from 'node:crypto';
import type { ChatHistoryItem, LlamaChatResponse, LlamaGrammar } from 'node-llama-cpp';
import type {
  ChatMessage,
  ChatOutput,
  ChatProvider,
  ChatRequest,
  ChatStreamEvent,
  ReportedUsage,
  Sampling,
  ToolCallRequest,
  ToolDefinition,
} from '../../../domain/chat/types.ts';
import { nonEmptyRequiredStrings } from '../../../domain/chat/grammar-schema.ts';
import type { EmbeddedModel, Loaded } from '../../embedded/embedded-model.ts';
import { rankContinuations } from '../../embedded/likelihood.ts';
import { groundingPrompt } from '../grounding-prompt.ts';
import { jsonObjectOf } from '../structured-output.ts';

/** What the grammar of a tool-offering request lets the model say. */
interface ToolAnswer {
  content?: string;
  tool_calls?: { name: string; arguments: Record<string, unknown> }[];
}

const ANY_OBJECT = { type: 'object' } as const;

/** A JSON value a plain question's answer takes: a string, number or boolean, or a list of them. */
const SCALAR = { oneOf: [{ type: 'string' }, { type: 'number' }, { type: 'boolean' }] } as const;
const ANSWER_VALUE = { oneOf: [...SCALAR.oneOf, { type: 'array', items: SCALAR }] } as const;

/**
 * JSON mode's object: at least one key (the model otherwise often writes `{}`), each a plain value.
 * No nested objects: under any-JSON the model nests keys on keys until max_tokens cuts it off.
 * (node-llama-cpp's additionalProperties is false unless set, and minProperties needs it set.)
 */
const KEYED_OBJECT = { type: 'object', additionalProperties: ANSWER_VALUE, minProperties: 1 } as const;

/** JSON mode's fallback object: the model's answer under the one key "answer". It closes in a few tokens. */
const ANSWER_OBJECT = { type: 'object', properties: { answer: ANSWER_VALUE } } as const;

/** Without it the model names its keys after whole sentences, or runs a list on until it is cut off. */
const JSON_MODE_INSTRUCTION =
  'Answer with one JSON object. Name each key after what the question asks for; when nothing fits, use the key "answer". Keep it short.';

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
  else if (request.responseFormat?.kind === 'json_object') system.push(JSON_MODE_INSTRUCTION);
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

/** The grammar the answer must follow, if any: the tool choice or a json_schema (json_object has its own, in jsonObjectAnswer). */
async function grammarOf(model: EmbeddedModel, loaded: Loaded, request: ChatRequest, tools: ToolDefinition[]): Promise<LlamaGrammar | undefined> {
  if (tools.length) return await model.grammarFor(loaded.llama, toolAnswerSchema(request, tools));
  const format = request.responseFormat;
  if (!format || format.kind === 'json_object') return undefined;
  try {
    return await model.grammarFor(loaded.llama, nonEmptyRequiredStrings(format.schema));
  } catch {
    // A schema the grammar builder does not take: any JSON; the chat layer checks the answer against the schema.
    return await loaded.llama.getGrammarFor('json');
  }
}

/** What one generation is asked for; the request gives the sampling. */
interface Turn {
  history: ChatHistoryItem[];
  grammar: LlamaGrammar | undefined;
  maxTokens: number;
  /** A multiplicative penalty on the tokens of the last 64 (node-llama-cpp applies none unless given one). */
  repeatPenalty?: number;
  onText?: (text: string) => void;
}

/** node-llama-cpp's repeat penalty: the client's presence and frequency penalties, and the turn's own. */
function repeatPenaltyOf(s: Sampling, penalty: number | undefined) {
  if (!s.presence_penalty && !s.frequency_penalty && !penalty) return undefined;
  return { ...(penalty ? { penalty } : {}), presencePenalty: s.presence_penalty ?? 0, frequencyPenalty: s.frequency_penalty ?? 0 };
}

/** One generation on the request's sequence; usage is what the sequence's token meter counted for it. */
async function respond(loaded: Loaded, request: ChatRequest, turn: Turn, signal: AbortSignal): Promise<Generated> {
  const { LlamaChat } = await import('node-llama-cpp');
  const chat = new LlamaChat({ contextSequence: loaded.sequence, chatWrapper: loaded.chatWrapper });
  const before = loaded.sequence.tokenMeter.getState();
  try {
    const s = request.sampling ?? {};
    const stops = s.stop === undefined ? [] : Array.isArray(s.stop) ? s.stop : [s.stop];
    const repeatPenalty = repeatPenaltyOf(s, turn.repeatPenalty);
    const response = await chat.generateResponse(turn.history, {
      ...(turn.grammar ? { grammar: turn.grammar } : {}),
      maxTokens: turn.maxTokens,
      ...(s.temperature !== undefined ? { temperature: s.temperature } : {}),
      ...(s.top_p !== undefined ? { topP: s.top_p } : {}),
      ...(s.seed !== undefined ? { seed: s.seed } : {}),
      ...(stops.length ? { customStopTriggers: stops } : {}),
      ...(repeatPenalty ? { repeatPenalty } : {}),
      signal,
      ...(turn.onText ? { onTextChunk: turn.onText } : {}),
    });
    const after = loaded.sequence.tokenMeter.getState();
    return {
      text: response.response,
      stopReason: response.metadata.stopReason,
      usage: { promptTokens: after.usedInputTokens - before.usedInputTokens, completionTokens: after.usedOutputTokens - before.usedOutputTokens },
    };
  } finally {
    chat.dispose({ disposeSequence: false });
  }
}

/**
 * JSON mode's penalty on repeated tokens. Greedy, this model runs on inside an object (a list of one
 * colour, one sentence or key over and over) until max_tokens cuts it off. Measured on 18 plain
 * questions: without it 8 ran on and one of those did not close as {"answer": ...} either; with
 * 1.05 to 1.15 all 18 closed, 16 or 17 of them with keys of their own.
 */
const JSON_MODE_REPEAT_PENALTY = 1.1;

/**
 * JSON mode: an object with the keys the question implies, in half of max_tokens; if the model does
 * not close one there, {"answer": ...} in what is left (it closes in a few tokens). Both tries are
 * billed as the model counted them, and together stay within max_tokens; if neither closes, the
 * cut-off text goes on and the chat layer refuses it.
 */
async function jsonObjectAnswer(model: EmbeddedModel, loaded: Loaded, request: ChatRequest, signal: AbortSignal): Promise<Generated> {
  const history = historyOf(request, []);
  const turn = async (schema: Record<string, unknown>, maxTokens: number) => {
    const grammar = await model.grammarFor(loaded.llama, schema);
    return await respond(loaded, request, { history, grammar, maxTokens, repeatPenalty: JSON_MODE_REPEAT_PENALTY }, signal);
  };
  const keyed = await turn(KEYED_OBJECT, Math.ceil(request.maxTokens / 2));
  const left = request.maxTokens - keyed.usage.completionTokens;
  if (jsonObjectOf(keyed.text) || left <= 0) return keyed;
  const answer = await turn(ANSWER_OBJECT, left);
  return {
    ...answer,
    usage: {
      promptTokens: keyed.usage.promptTokens + answer.usage.promptTokens,
      completionTokens: keyed.usage.completionTokens + answer.usage.completionTokens,
    },
  };
}

async function generate(
  model: EmbeddedModel,
  request: ChatRequest,
  signal: AbortSignal,
  onText?: (text: string) => void,
): Promise<Generated & { tools: boolean }> {
  const tools = callableTools(request);
  return await model.use(signal, async (loaded) => {
    if (!tools.length && request.responseFormat?.kind === 'json_object') return { ...(await jsonObjectAnswer(model, loaded, request, signal)), tools: false };
    const grammar = await grammarOf(model, loaded, request, tools);
    // Text streams only when it is the answer itself; a grammar's JSON is sent whole at the end.
    const turn: Turn = { history: historyOf(request, tools), grammar, maxTokens: request.maxTokens, ...(onText && !tools.length ? { onText } : {}) };
    const generated = await respond(loaded, request, turn, signal);
    return { ...generated, tools: tools.length > 0 };
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
