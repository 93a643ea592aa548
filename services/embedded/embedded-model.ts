// The one embedded model of this process (node-llama-cpp, CPU only, never built or downloaded at
// run time): loaded on first use, shared by chat and runs, and unloaded after a configurable idle
// time. Up to `parallel` requests are answered at once, each on a context of its own over the one
// loaded model (the weights are shared; each context holds its own contextSize-token window), and
// more wait in one bounded FIFO queue, chat and runs alike. A context's sequence is emptied before
// each request, so nothing of one conversation is in the next (no prompt cache across tenants), and
// its token counts are the model's own (the sequence's token meter).
//
// Why contexts and not sequences of one context (node-llama-cpp batches those into one decode):
// measured here (docs/models.md), batching gave 1.0-1.2x the tokens/s of one request, as this small
// model's CPU kernels cost about as much per token in a batch as alone; and node-llama-cpp 3.21 holds
// a context's lock for as long as two or more of its sequences keep generating, so emptying a third
// sequence for a new request waited until they had finished (10 s with three generating). Separate
// contexts decode on separate cores and are emptied at once: 1.8-2x the tokens/s with 4 callers on 2 cores.
// A mix (two contexts of two sequences, a batch a core) measured between the two: 1.7x.
import type { ChatWrapper, Llama, LlamaContext, LlamaContextSequence, LlamaGrammar, LlamaModel } from 'node-llama-cpp';
import type { EmbeddedModelConfig } from '../../config/models.ts';
import { ProviderError } from '../../domain/chat/types.ts';

/** What one request works with: the shared model, and a sequence that is its own until it ends. */
export interface Loaded {
  llama: Llama;
  model: LlamaModel;
  /** The model's chat format, resolved once per load: a LlamaChat left to resolve it spends about a second of the event loop on it. */
  chatWrapper: ChatWrapper;
  sequence: LlamaContextSequence;
}

export type ModelState = 'unloaded' | 'loading' | 'loaded';

interface Waiter {
  start: () => void;
  fail: (err: unknown) => void;
}

/** One load of the model: its `parallel` contexts, and the sequences (one a context) no request holds now. */
interface Engine {
  llama: Llama;
  model: LlamaModel;
  chatWrapper: ChatWrapper;
  contexts: LlamaContext[];
  free: LlamaContextSequence[];
}

/** Seconds a caller turned away by a full queue is told to wait. */
const RETRY_AFTER_SECONDS = 2;

// No download, no compilation: the prebuilt binary from the platform package, or an error.
process.env.NODE_LLAMA_CPP_SKIP_DOWNLOAD ??= 'true';

export class EmbeddedModel {
  private loading: Promise<Engine> | undefined;
  private llama: Llama | undefined;
  /** Requests holding a place now (at most `config.parallel`), each with a context's sequence once loaded. */
  private active = 0;
  private readonly waiting: Waiter[] = [];
  private idleTimer: NodeJS.Timeout | undefined;
  private readonly grammars = new Map<string, Promise<LlamaGrammar>>();
  private stateNow: ModelState = 'unloaded';

  constructor(readonly config: EmbeddedModelConfig) {}

  get name(): string {
    return this.config.name;
  }

  state(): ModelState {
    return this.stateNow;
  }

  /** Requests being answered now, and waiting for a context (GET /v1/providers shows both). */
  occupancy(): { inUse: number; queued: number } {
    return { inUse: this.active, queued: this.waiting.length };
  }

  /**
   * Runs `work` on a context of its own when one is free: at once, or after the requests queued
   * before it. A full queue refuses at once (rate_limited, with a Retry-After); an aborted signal
   * leaves the queue; any other failure (the file does not load, the engine fails) is `unavailable`.
   */
  async use<T>(signal: AbortSignal, work: (loaded: Loaded) => Promise<T>): Promise<T> {
    await this.acquire(signal);
    let held: { engine: Engine; sequence: LlamaContextSequence } | undefined;
    try {
      signal.throwIfAborted();
      held = await this.takeSequence();
      const { llama, model, chatWrapper } = held.engine;
      return await work({ llama, model, chatWrapper, sequence: held.sequence });
    } catch (err) {
      if (signal.aborted || err instanceof ProviderError) throw err;
      // A model that would not load or answer is unavailable (chat: 503, runs: retried); its error
      // stays here, as a message from the engine may quote the prompt.
      throw new ProviderError('unavailable');
    } finally {
      // Back to the load it came from: after close() that load is gone, and the sequence with it.
      if (held) held.engine.free.push(held.sequence);
      this.release();
    }
  }

  /** A grammar for a JSON schema, made once per schema (making one costs more than a short answer). */
  grammarFor(llama: Llama, schema: Record<string, unknown>): Promise<LlamaGrammar> {
    const key = JSON.stringify(schema);
    let grammar = this.grammars.get(key);
    if (!grammar) {
      grammar = llama.createGrammarForJsonSchema(schema as never) as Promise<LlamaGrammar>;
      grammar.catch(() => this.grammars.delete(key));
      if (this.grammars.size >= 64) this.grammars.delete(this.grammars.keys().next().value!);
      this.grammars.set(key, grammar);
    }
    return grammar;
  }

  async close(): Promise<void> {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    for (const w of this.waiting.splice(0)) w.fail(new ProviderError('unavailable'));
    await this.unload();
    await this.llama?.dispose();
    this.llama = undefined;
  }

  /** A place among the `parallel` requests served at once, or in the queue behind the ones waiting already. */
  private acquire(signal: AbortSignal): Promise<void> {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    // Nobody may pass the queue: a free place with waiters is theirs (release hands it over).
    if (this.active < this.config.parallel && this.waiting.length === 0) {
      this.active++;
      return Promise.resolve();
    }
    if (this.waiting.length >= this.config.queueMax) return Promise.reject(new ProviderError('rate_limited', RETRY_AFTER_SECONDS));
    if (signal.aborted) return Promise.reject(signal.reason); // an abort that came first would never fire: no queue slot for it
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        start: () => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        },
        fail: (err) => {
          signal.removeEventListener('abort', onAbort);
          reject(err);
        },
      };
      const onAbort = () => {
        const i = this.waiting.indexOf(waiter);
        if (i >= 0) this.waiting.splice(i, 1);
        reject(signal.reason);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(waiter);
    });
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next) {
      next.start(); // the place passes straight to the longest waiter: `active` stays as it is
      return;
    }
    this.active--;
    if (this.active > 0) return;
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => void this.unloadIfIdle(), this.config.idleUnloadMs);
    this.idleTimer.unref();
  }

  /** A free sequence of the loaded model, emptied: nothing of the request it served before is seen by this one. */
  private async takeSequence(): Promise<{ engine: Engine; sequence: LlamaContextSequence }> {
    const engine = await this.load();
    // There is one: a request takes a sequence only while it holds one of the `parallel` places.
    // A context of its own, so this does not wait for another request's generation.
    const sequence = engine.free.pop()!;
    try {
      await sequence.clearHistory();
    } catch (err) {
      engine.free.push(sequence);
      throw err;
    }
    return { engine, sequence };
  }

  private async load(): Promise<Engine> {
    this.loading ??= this.loadOnce();
    try {
      return await this.loading;
    } catch (err) {
      this.loading = undefined;
      this.stateNow = 'unloaded';
      throw err;
    }
  }

  private async loadOnce(): Promise<Engine> {
    this.stateNow = 'loading';
    const { getLlama, LlamaLogLevel, resolveChatWrapper } = await import('node-llama-cpp');
    this.llama ??= await getLlama({ gpu: false, build: 'never', logLevel: LlamaLogLevel.error });
    const model = await this.llama.loadModel({ modelPath: this.config.modelPath });
    const { contextSize, threads, parallel } = this.config;
    const contexts: LlamaContext[] = [];
    try {
      // All at load, not on demand: the memory a full load needs shows (or fails) on the first request, not under load.
      for (let i = 0; i < parallel; i++) contexts.push(await model.createContext({ contextSize, threads, sequences: 1 }));
    } catch (err) {
      for (const context of contexts) await context.dispose();
      await model.dispose();
      throw err;
    }
    this.stateNow = 'loaded';
    const free = contexts.map((context) => context.getSequence());
    return { llama: this.llama, model, chatWrapper: resolveChatWrapper(model), contexts, free };
  }

  private async unloadIfIdle(): Promise<void> {
    if (this.active > 0) return;
    await this.unload();
  }

  private async unload(): Promise<void> {
    const loading = this.loading;
    this.loading = undefined;
    this.grammars.clear();
    this.stateNow = 'unloaded';
    if (!loading) return;
    const engine = await loading.catch(() => undefined);
    for (const context of engine?.contexts ?? []) await context.dispose();
    await engine?.model.dispose();
  }
}

const shared = new Map<string, EmbeddedModel>();

/** This process's model for `config`: one per configuration, whoever asks (the API and the worker of npm start share it). */
export function sharedEmbeddedModel(config: EmbeddedModelConfig): EmbeddedModel {
  const key = JSON.stringify(config);
  let model = shared.get(key);
  if (!model) {
    model = new EmbeddedModel(config);
    shared.set(key, model);
  }
  return model;
}
