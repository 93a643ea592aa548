// One bench child for the embedded model (target 6): generates answers to the same prompts either
// through the service's embedded provider (services/chat/providers/embedded.ts, as chat and runs use
// it) or straight through node-llama-cpp (the anchor: the same model, context size and threads), and
// prints tokens per second of generation and the process's resident memory.
//   node --import tsx scripts/bench/embedded.ts '{"mode":"service","answers":6,"maxTokens":64}'
import { getLlama, LlamaChatSession, LlamaLogLevel } from 'node-llama-cpp';
import { loadConfig } from '../../config/env.ts';
import { buildProviders } from '../../services/model-layer.ts';

const args = JSON.parse(process.argv.at(-1)!) as { mode: 'service' | 'anchor'; answers: number; maxTokens: number };
const config = loadConfig({ ...process.env, NODE_ENV: 'development' });
const embedded = config.models.embedded;
if (!embedded) throw new Error(`no embedded model: ${config.models.embeddedAbsent}`);
const prompts = ['Describe a river in two sentences.', 'Give three tips for writing clear emails.', 'What does a lighthouse do?'];

let tokens = 0;
let generatingMs = 0;
if (args.mode === 'service') {
  const provider = buildProviders(undefined, embedded).embedded!;
  const ask = (content: string) =>
    provider.complete(
      {
        model: 'svc-workspace',
        messages: [{ role: 'user', content }],
        grounding: { memory: [], document: null },
        responseFormat: null,
        maxTokens: args.maxTokens,
        sampling: { temperature: 0 },
      },
      new AbortController().signal,
    );
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
  const context = await model.createContext({ contextSize: embedded.contextSize, threads: embedded.threads, sequences: 1 });
  const sequence = context.getSequence();
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
