// Which model providers this deployment has, and which one serves a model alias that a tenant's
// routing policy does not name. The embedded provider exists when its model file does: a missing
// file is reported, not fatal, unless the operator asked for the embedded provider by name.
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Provider } from '../domain/pricing.ts';
import { ConfigError } from './config-error.ts';

export interface EmbeddedModelConfig {
  /** The GGUF file. */
  modelPath: string;
  /** The file's name without `.gguf`: what GET /v1/providers and a run's record show. */
  name: string;
  contextSize: number;
  threads: number;
  /** Requests answered at once, each on a context of its own over the one loaded model (contextSize tokens each). */
  parallel: number;
  /** Requests that may wait for the model beyond the `parallel` it is answering; more get 429. */
  queueMax: number;
  /** The model is unloaded after this long without a request, and loaded again on the next. */
  idleUnloadMs: number;
}

export interface ModelsConfig {
  /** The provider for a model alias that a tenant has no routing policy for. */
  defaultProvider: Provider;
  embedded?: EmbeddedModelConfig;
  /** Why there is no embedded provider (for the start message and GET /v1/providers). */
  embeddedAbsent?: string;
}

export interface ModelsEnv {
  DEFAULT_PROVIDER: 'auto' | Provider;
  EMBEDDED_MODEL_PATH: string;
  EMBEDDED_CONTEXT_SIZE: number;
  EMBEDDED_THREADS: number;
  EMBEDDED_PARALLEL: number;
  EMBEDDED_QUEUE_MAX: number;
  EMBEDDED_IDLE_UNLOAD_SECONDS: number;
}

export function modelsConfig(e: ModelsEnv, upstreamConfigured: boolean): ModelsConfig {
  const off = e.EMBEDDED_MODEL_PATH === 'off';
  const modelPath = path.resolve(e.EMBEDDED_MODEL_PATH);
  const present = !off && existsSync(modelPath);
  const embedded: EmbeddedModelConfig | undefined = present
    ? {
        modelPath,
        name: path.basename(modelPath).replace(/\.gguf$/i, ''),
        contextSize: e.EMBEDDED_CONTEXT_SIZE,
        threads: e.EMBEDDED_THREADS,
        parallel: e.EMBEDDED_PARALLEL,
        queueMax: e.EMBEDDED_QUEUE_MAX,
        idleUnloadMs: e.EMBEDDED_IDLE_UNLOAD_SECONDS * 1000,
      }
    : undefined;
  const embeddedAbsent = off
    ? 'EMBEDDED_MODEL_PATH=off'
    : present
      ? undefined
      : `no model file at ${modelPath} (npm run model:install fetches the default one)`;
  if (e.DEFAULT_PROVIDER === 'embedded' && !embedded) throw new ConfigError([`DEFAULT_PROVIDER: embedded, but ${embeddedAbsent}`]);
  if (e.DEFAULT_PROVIDER === 'upstream' && !upstreamConfigured) throw new ConfigError(['DEFAULT_PROVIDER: upstream, but UPSTREAM_BASE_URL is not set']);
  const defaultProvider: Provider = e.DEFAULT_PROVIDER === 'auto' ? (embedded ? 'embedded' : 'local') : e.DEFAULT_PROVIDER;
  return { defaultProvider, ...(embedded ? { embedded } : { embeddedAbsent }) };
}
