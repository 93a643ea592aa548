// One bench child for the embedded model (target 6): generates answers to the same prompts either
// through the service's embedded provider (services/chat/providers/embedded.ts, as chat and runs use
// it) or straight through node-llama-cpp (the anchor: the same model, context size, threads and
// number of contexts), and prints tokens per second of generation and the process's resident memory.
// Mode `chats` streams answers as chat does, from `clients` callers at once, each asking
// `answers` questions one after another: aggregate tokens per second over the whole phase, and the
// median time to the first token (from the call, so a wait for a free context counts).
//   node --import tsx scripts/bench/embedded.ts '{"mode":"service","answers":6,"maxTokens":64}'
//   node --import tsx scripts/bench/embedded.ts '{"mode":"chats","clients":4,"answers":3,"maxTokens":64}'
import { getLlama, LlamaChatSession, LlamaLogLevel } from 'node-llama-cpp';
import { loadConfig } from '../../config/env.ts';
import type { ChatRequest } from '../../domain/chat/types.ts';
import { buildProviders } from '../../services/model-layer.ts';
import { median } from './report.ts';

const args = JSON.parse(process.argv.at(-1)!) as { mode: 'service' | 'anchor' | 'chats'; answers: number; maxTokens: number; clients?: number };
const config = loadConfig({ ...process.env, NODE_ENV: 'development' });
const embedded = config.models.embedded;
if (!embedded) throw new Error(`no embedded model: ${config.models.embeddedAbsent}`);
const prompts = [
  'Describe a river in two sentences.',
  'Give three tips for writing clear emails.',
  'What does a lighthouse do?',
  'Why do leaves fall in autumn?',
];
const provider = buildProviders(undefined, embedded).embedded!;
const request = (content: string): ChatRequest => ({
  model: 'svc-workspace',
  messages: [{ role: 'user', content }],
  grounding: { memory: [], document: null },
  responseFormat: null,
  maxTokens: args.maxTokens,
  sampling: { temperature: 0 },
});

/** One streamed answer: its completion tokens, and the milliseconds to its first piece of text. */
async function streamed(content: string): Promise<{ tokens: number; firstMs: number }> {
  const started = performance.now();
  let firstMs = Number.NaN;
  let tokens = 0;
  for await (const event of provider.stream!(request(content), new AbortController().signal)) {
    if (event.type === 'content' && Number.isNaN(firstMs)) firstMs = performance.now() - started;
    if (event.type === 'usage') tokens = event.usage.completionTokens;
  }
  return { tokens, firstMs };
}

/** `clients` callers at once, each streaming `answers` answers in turn (caller i starts at prompt i). */
async function chats(clients: number) {
  await streamed('Hello'); // loads the model: not measured
  const firsts: number[] = [];
  let tokens = 0;
  const started = performance.now();
  const caller = async (i: number) => {
    for (let k = 0; k < args.answers; k++) {
      const out = await streamed(prompts[(i + k) % prompts.length]!);
      tokens += out.tokens;
      firsts.push(out.firstMs);
    }
  };
  await Promise.all(Array.from({ length: clients }, (_, i) => caller(i)));
  const ms = performance.now() - started;
  return { tokens_per_s: (tokens * 1000) / ms, ttft_ms: Math.round(median(firsts)), tokens };
}

if (args.mode === 'chats') {
  console.log(JSON.stringify({ ...(await chats(args.clients ?? 1)), rss_mb: Math.round(process.memoryUsage().rss / 1e6) }));
  process.exit(0);
}

let tokens = 0;
let generatingMs = 0;
if (args.mode === 'service') {
  const ask = (content: string) => provider.complete(request(content), new AbortController().signal);
  await ask('Hello'); // loads the model: not measured
  for (let i = 0; i < args.answers; i++) {
    const started = performance.now();
    const out = await ask(prompts[i % prompts.length]!);
    generatingMs += performance.now() - started;
    tokens += out.usage!.completionTokens;
  }
} else {
  const llama = await getLlama({ gpu: false, build: 'never', logLevel: LlamaLogLevel.error });
  const model = await llama.loadModel({ modelPath: embedded.modelPath });
  // As many contexts as the service holds (EMBEDDED_PARALLEL), so the memory compared is like for like; one answers.
  const contexts = [];
  for (let i = 0; i < embedded.parallel; i++) contexts.push(await model.createContext({ contextSize: embedded.contextSize, threads: embedded.threads }));
  const sequence = contexts[0]!.getSequence();
  for (let i = 0; i < args.answers; i++) {
    await sequence.clearHistory();
    const session = new LlamaChatSession({ contextSequence: sequence, autoDisposeSequence: false });
    const before = sequence.tokenMeter.getState().usedOutputTokens;
    const started = performance.now();
    await session.prompt(prompts[i % prompts.length]!, { maxTokens: args.maxTokens, temperature: 0 });
    generatingMs += performance.now() - started;
    tokens += sequence.tokenMeter.getState().usedOutputTokens - before;
    session.dispose({ disposeSequence: false });
  }
}
console.log(JSON.stringify({ tokens_per_s: (tokens * 1000) / generatingMs, rss_mb: Math.round(process.memoryUsage().rss / 1e6), tokens }));
process.exit(0);
