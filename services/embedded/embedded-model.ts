// The one embedded model of this process (node-llama-cpp, CPU only, never built or downloaded at
// run time): loaded on first use, shared by chat and runs, answering one request at a time from a
// bounded queue, and unloaded after a configurable idle time. Each request starts from an empty
// context, so nothing of one conversation is in the next (no prompt cache across tenants), and its
// token counts are the model's own (the context's token meter).
import type { Llama, LlamaContext, LlamaContextSequence, LlamaGrammar, LlamaModel } from 'node-llama-cpp';
import type { EmbeddedModelConfig } from '../../config/models.ts';
import { ProviderError } from '../../domain/chat/types.ts';

export interface Loaded {
  llama: Llama;
  model: LlamaModel;
  sequence: LlamaContextSequence;
}

export type ModelState = 'unloaded' | 'loading' | 'loaded';

interface Waiter {
  start: () => void;
  fail: (err: unknown) => void;
}

/** Seconds a caller turned away by a full queue is told to wait. */
const RETRY_AFTER_SECONDS = 2;

// No download, no compilation: the prebuilt binary from the platform package, or an error.
process.env.NODE_LLAMA_CPP_SKIP_DOWNLOAD ??= 'true';

export class EmbeddedModel {
  private loading: Promise<Loaded & { context: LlamaContext }> | undefined;
  private llama: Llama | undefined;
  private busy = false;
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

  /**
   * Runs `work` with the model when it is free: at once, or after the requests queued before it.
   * A full queue refuses at once (rate_limited, with a Retry-After); an aborted signal leaves the queue;
   * any other failure (the file does not load, the engine fails) is `unavailable`.
   */
  async use<T>(signal: AbortSignal, work: (loaded: Loaded) => Promise<T>): Promise<T> {
    await this.acquire(signal);
    try {
      signal.throwIfAborted();
      const loaded = await this.load();
      return await work(loaded);
    } catch (err) {
      if (signal.aborted || err instanceof ProviderError) throw err;
      // A model that would not load or answer is unavailable (chat: 503, runs: retried); its error
      // stays here, as a message from the engine may quote the prompt.
      throw new ProviderError('unavailable');
    } finally {
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

  private acquire(signal: AbortSignal): Promise<void> {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    if (!this.busy) {
      this.busy = true;
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
      next.start(); // the model stays busy: it passes straight to the next request
      return;
    }
    this.busy = false;
    this.idleTimer = setTimeout(() => void this.unloadIfIdle(), this.config.idleUnloadMs);
    this.idleTimer.unref();
  }

  private async load(): Promise<Loaded> {
    this.loading ??= this.loadOnce();
    try {
      const loaded = await this.loading;
      await loaded.sequence.clearHistory(); // nothing of the previous request is seen by this one
      return loaded;
    } catch (err) {
      this.loading = undefined;
      this.stateNow = 'unloaded';
      throw err;
    }
  }

  private async loadOnce() {
    this.stateNow = 'loading';
    const { getLlama, LlamaLogLevel } = await import('node-llama-cpp');
    this.llama ??= await getLlama({ gpu: false, build: 'never', logLevel: LlamaLogLevel.error });
    const model = await this.llama.loadModel({ modelPath: this.config.modelPath });
    const context = await model.createContext({ contextSize: this.config.contextSize, threads: this.config.threads, sequences: 1 });
    this.stateNow = 'loaded';
    return { llama: this.llama, model, context, sequence: context.getSequence() };
  }

  private async unloadIfIdle(): Promise<void> {
    if (this.busy) return;
    await this.unload();
  }

  private async unload(): Promise<void> {
    const loading = this.loading;
    this.loading = undefined;
    this.grammars.clear();
    this.stateNow = 'unloaded';
    if (!loading) return;
    const loaded = await loading.catch(() => undefined);
    await loaded?.context.dispose();
    await loaded?.model.dispose();
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
