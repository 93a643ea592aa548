// The one place that reads the environment. Every setting is validated here so
// a bad value stops start-up with a message naming the variable, instead of
// surfacing later as a confusing runtime failure.
import { createHash } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import type { UpstreamServer } from '../domain/agent/protocol-tools.ts';
import { type AgentLimits, PROVIDERS, type PricingTable } from '../domain/pricing.ts';
import { ConfigError } from './config-error.ts';
import { withHidden } from './hidden.ts';
import { connectionSettings, type TemporalConnectionSettings } from './temporal-connection-settings.ts';
import { resolveTemporalConnection } from './temporal-profile.ts';
import { type ModelsConfig, modelsConfig } from './models.ts';
import { defaultEmbeddedModelPath } from './paths.ts';
import { loadToolServers, type ToolServerSpec } from './tool-servers.ts';

const port = z.coerce.number().int().min(0).max(65535);
const positiveInt = z.coerce.number().int().positive();
const flag = z.enum(['true', 'false', '1', '0', 'yes', 'no']).transform((v) => v === 'true' || v === '1' || v === 'yes');
const KEY_ID = /^[A-Za-z0-9._-]{1,64}$/;
const keyId = z.string().regex(KEY_ID, 'must be 1 to 64 of A-Z a-z 0-9 . _ -');
/** Standard base64 that decodes to exactly 32 bytes (an AES-256 key). */
function aes256Key(v: string): Buffer | null {
  if (!/^[A-Za-z0-9+/]{43}=$/.test(v.trim())) return null;
  const bytes = Buffer.from(v.trim(), 'base64');
  return bytes.length === 32 ? bytes : null;
}
const payloadKey = z.string().transform((v, ctx) => {
  const bytes = aes256Key(v);
  if (bytes) return bytes;
  ctx.addIssue({ code: 'custom', message: 'must be the base64 of 32 random bytes (openssl rand -base64 32)' });
  return z.NEVER;
});
const previousPayloadKeys = z.string().transform((v, ctx) => {
  const keys: { id: string; bytes: Buffer }[] = [];
  for (const item of v
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean)) {
    const colon = item.indexOf(':');
    const id = colon > 0 ? item.slice(0, colon) : '';
    const bytes = colon > 0 ? aes256Key(item.slice(colon + 1)) : null;
    if (!KEY_ID.test(id) || !bytes) {
      ctx.addIssue({ code: 'custom', message: 'must be a comma-separated list of id:base64 (each key the base64 of 32 bytes)' });
      return z.NEVER;
    }
    keys.push({ id, bytes });
  }
  return keys;
});

/**
 * Requests the embedded model answers at once by default, each on a context of its own (one
 * EMBEDDED_CONTEXT_SIZE window each). On this project's 2 cores, 4 callers got their first token in
 * 0.4 s with 4 contexts, against 1.9 s with 2 and 4 s with 1, and 1.8-2x the tokens/s of one caller;
 * with both cores busy, more contexts would add memory (about 95 MB each here), not speed
 * (docs/models.md). At least 2, so a chat is not wholly behind a run's long answer even on one core.
 */
const defaultEmbeddedParallel = Math.min(4, Math.max(2, os.availableParallelism() * 2));

/** Environment variables, their defaults and meaning (docs/configuration.md lists them; tests/configuration-doc.test.ts checks it). */
export const envSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  HOST: z.string().min(1).default('127.0.0.1'),
  PORT: port.default(8080),
  PUBLIC_BASE_URL: z.url().optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  BUILD_DATE: z.string().min(1).optional(),

  DATA_DIR: z.string().min(1).default('./data'),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL')
    .optional(),
  DATABASE_POOL_SIZE: positiveInt.default(10),
  MIGRATE_ON_START: flag.default(true),

  // TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_TLS_*, TEMPORAL_PROFILE…: config/temporal-profile.ts.
  TASK_QUEUE: z.string().min(1).default('governed-workspace'),
  TEMPORAL_CLI: z.string().min(1).optional(),
  TEMPORAL_DEV_PORT: port.default(7233),
  TEMPORAL_UI_PORT: port.default(8233),
  WORKFLOW_BUNDLE_PATH: z.string().min(1).default('./dist/workflow-bundle.js'),
  WORKER_VERSIONING: flag.default(true),
  WORKER_DEPLOYMENT_NAME: z
    .string()
    .min(1)
    .max(200)
    .regex(/^[^:'"\\]+$/, 'must not contain ":", quotes or backslashes (it goes into visibility queries)')
    .default('governed-workspace'),
  WORKER_BUILD_ID: z
    .string()
    .min(1)
    .max(200)
    .regex(/^[^:'"\\]+$/, 'must not contain ":", quotes or backslashes (it goes into visibility queries)')
    .optional(),

  BODY_LIMIT_BYTES: positiveInt.default(1_048_576),
  RATE_LIMIT_POINTS: positiveInt.default(600),
  RATE_LIMIT_WINDOW_SECONDS: positiveInt.default(60),
  TRIAL_RATE_LIMIT_POINTS: positiveInt.default(20),
  TRIAL_RATE_LIMIT_WINDOW_SECONDS: positiveInt.default(60),
  TRUST_PROXY: flag.default(false),
  CHECK_RESPONSES: flag.optional(),
  // Shared rate-limit counters (services/rate-limiters.ts); unset: Postgres (UNLOGGED table) or, on PGlite, memory.
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\//, 'must be a redis:// or rediss:// URL')
    .optional(),
  REDIS_KEY_PREFIX: z.string().min(1).default('gws:'),
  // How long an API process trusts a key it looked up (services/key-cache.ts); 0 looks every request up.
  KEY_CACHE_TTL_MS: z.coerce.number().int().min(0).max(300_000).default(10_000),
  // How long an API process trusts a routing policy it read (services/routing.ts); 0 reads it every time.
  ROUTE_CACHE_TTL_MS: z.coerce.number().int().min(0).max(300_000).default(10_000),
  SHUTDOWN_TIMEOUT_MS: positiveInt.default(15_000),
  // How long start-up waits, in all, for a database or Temporal that is unreachable (runtime/startup.ts).
  STARTUP_TIMEOUT_MS: positiveInt.default(300_000),
  WORKER_SHUTDOWN_GRACE_MS: positiveInt.default(10_000),
  // The worker's sticky cache. Under Node 20 every cached workflow's AsyncLocalStorage tags every promise the
  // workflow thread makes, so memory and time per step grow with the cache (temporalio/sdk-typescript#1432):
  // 40 holds twice the runs moving at c=20; a waiting run is evicted and replays on its decision (docs/performance.md).
  WORKER_MAX_CACHED_WORKFLOWS: z.coerce.number().int().min(2).default(40),

  PRICE_CREDITS_PER_1K_TOKENS: positiveInt.default(2),
  PRICE_CREDITS_PER_1K_TOKENS_FAST: positiveInt.default(1),
  PRICE_CREDITS_PER_1K_TOKENS_QUALITY: positiveInt.default(4),
  PRICE_MEMORY_RECALL: z.coerce.number().int().min(0).default(1),
  PRICE_TEXT_ANALYSIS: z.coerce.number().int().min(0).default(1),
  PRICE_WEBHOOK_DELIVERY: z.coerce.number().int().min(0).default(5),
  PRICE_SERVER_TOOL_CALL: z.coerce.number().int().min(0).default(2),
  OUTPUT_TOKENS_PER_STEP: positiveInt.default(256),
  APPROVAL_TIMEOUT_SECONDS: positiveInt.default(86_400),
  WEBHOOK_TIMEOUT_MS: positiveInt.default(10_000),
  RUN_MAX_MODEL_TURNS: z.coerce.number().int().min(1).max(32).default(6),
  RUN_TURN_MAX_TOKENS: z.coerce.number().int().min(16).max(16_384).default(1024),
  RUN_MAX_TOOL_CALLS: z.coerce.number().int().min(1).max(32).default(8),
  JOURNEY_RETENTION_DAYS: positiveInt.default(30),
  RECONCILE_INTERVAL_SECONDS: positiveInt.default(60),
  RECONCILE_GRACE_SECONDS: positiveInt.default(30),
  DEV_STARTING_CREDITS: z.coerce.number().int().min(0).default(10_000),

  CHAT_MAX_TOKENS_DEFAULT: positiveInt.default(1024),
  CHAT_KEEPALIVE_MS: positiveInt.default(15_000),
  STREAMS_PER_PROCESS: positiveInt.default(5_000),
  STREAMS_PER_KEY: positiveInt.default(1_000),
  CHAT_REFUSAL_TERMS: z.string().default('build a bomb,make a weapon,synthesize nerve agent,steal credit card numbers'),
  CONTEXT_URL_ALLOWED_HOSTS: z.string().default(''),
  CONTEXT_URL_MAX_BYTES: positiveInt.default(262_144),
  CONTEXT_URL_TIMEOUT_MS: positiveInt.default(5_000),
  // Chat holds of an API process that died are released once its lease (renewed every third of it)
  // lapses, by the sweeper every API process runs on start and at this interval.
  INSTANCE_LEASE_MS: positiveInt.default(30_000),
  HOLD_SWEEP_INTERVAL_MS: positiveInt.default(60_000),
  // Tool servers (MCP) the operator configures: the file's shape is config/tool-servers.ts.
  TOOL_SERVERS_FILE: z.string().optional(),
  // Below the tool activity's 2-minute limit (workflows/run-activities.ts).
  TOOL_CALL_TIMEOUT_MS: z.coerce.number().int().min(100).max(110_000).default(60_000),
  TOOL_RESULT_MAX_CHARS: positiveInt.default(16_384),
  // All the tool results one tool-calling run shows its model, together: what its hold is sized by (docs/billing.md).
  RUN_TOOL_RESULTS_MAX_CHARS: positiveInt.default(32_768),
  UPSTREAM_BASE_URL: z.url().optional(),
  // How an upstream model plans and acts: tool_calls (the whole catalog as OpenAI tools, the model's report accounts for the request) or plan (the plan schema of runs before it).
  UPSTREAM_PROTOCOL: z.enum(['tool_calls', 'plan']).default('tool_calls'),
  // Servers that refuse tools and response_format in one request: false asks for the report in a call of its own.
  UPSTREAM_REPORT_WITH_TOOLS: z
    .enum(['true', 'false'])
    .default('true')
    .transform((v) => v === 'true'),
  // Servers that cap how many tools one request may carry: the rest are not shown, and the run says which.
  UPSTREAM_MAX_TOOLS: z.coerce.number().int().min(8).max(1_024).default(128),
  UPSTREAM_API_KEY_ENV: z
    .string()
    .regex(/^[A-Z_][A-Z0-9_]*$/, 'must name an environment variable')
    .optional(),
  UPSTREAM_MODEL_MAP: z
    .string()
    .default('{}')
    .transform((v, ctx) => {
      try {
        const parsed = JSON.parse(v) as unknown;
        if (parsed && typeof parsed === 'object' && !Array.isArray(parsed) && Object.values(parsed).every((x) => typeof x === 'string')) {
          return parsed as Record<string, string>;
        }
      } catch {}
      ctx.addIssue({ code: 'custom', message: 'must be a JSON object of model alias to upstream model name' });
      return z.NEVER;
    }),
  UPSTREAM_TIMEOUT_MS: positiveInt.default(60_000),
  // Prometheus metrics (runtime/metrics-server.ts): off unless set (0: off); npm run api and npm run worker in production default to 9464 and 9465.
  METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  METRICS_HOST: z.string().optional(),
  // Where a worker's Temporal SDK (Core) serves its own metrics, which /metrics appends (default METRICS_PORT + 100).
  TEMPORAL_METRICS_PORT: z.coerce.number().int().min(1).max(65535).optional(),
  // The provider for a model alias a tenant has no routing policy for (config/models.ts); npm start uses auto.
  DEFAULT_PROVIDER: z.enum(['auto', ...PROVIDERS]).default('local'),
  // The embedded provider (node-llama-cpp, in-process, CPU): its GGUF file, or `off`.
  EMBEDDED_MODEL_PATH: z.string().default(defaultEmbeddedModelPath),
  EMBEDDED_CONTEXT_SIZE: z.coerce.number().int().min(512).max(131_072).default(4096),
  EMBEDDED_THREADS: z.coerce.number().int().min(1).max(256).default(1),
  EMBEDDED_PARALLEL: z.coerce.number().int().min(1).max(16).default(defaultEmbeddedParallel),
  EMBEDDED_QUEUE_MAX: z.coerce.number().int().min(0).max(1000).default(8),
  EMBEDDED_IDLE_UNLOAD_SECONDS: positiveInt.default(600),

  SANDBOX_JOBS_ENABLED: flag.default(false),
  PATCH_CANDIDATES_ENABLED: flag.default(true),

  // Encryption of what Temporal stores (runtime/payload-codec.ts). Unset: `npm start` (and the api and
  // worker outside production) use a key generated once in DATA_DIR/payload-key.json; production requires it.
  PAYLOAD_KEY: payloadKey.optional(),
  PAYLOAD_KEY_ID: keyId.optional(),
  PAYLOAD_KEYS_PREVIOUS: previousPayloadKeys.optional(),
  // The codec endpoint (POST /codec/decode, /codec/encode) the Temporal UI decodes through.
  CODEC_ENDPOINT_ENABLED: flag.optional(),
  CODEC_ENDPOINT_TOKEN: z.string().min(24, 'must be at least 24 characters').optional(),
  CODEC_ENDPOINT_CORS_ORIGINS: z.string().optional(),
});

export type Env = z.infer<typeof envSchema>;

/** Worker Versioning (runtime/worker-deployment.ts). */
export interface VersioningConfig {
  /** WORKER_VERSIONING: false runs the worker unversioned (every worker takes every task). */
  enabled: boolean;
  /** WORKER_DEPLOYMENT_NAME: the deployment every build of this service belongs to. */
  deploymentName: string;
  /** WORKER_BUILD_ID: set by a release (a commit, say); else derived from the workflow code. */
  buildId?: string;
}

export interface Config {
  env: Env['NODE_ENV'];
  http: {
    host: string;
    port: number;
    publicBaseUrl?: string;
    bodyLimitBytes: number;
    trustProxy: boolean;
    /** Each response checked against its declared schema (api/contract/router.ts): the tests' safety net. */
    checkResponses: boolean;
    /** Run event streams one API process holds open, in all and per key (services/stream-slots.ts). */
    streams: { perProcess: number; perKey: number };
  };
  logLevel: Env['LOG_LEVEL'];
  buildDate?: string;
  database: { url?: string; dataDir: string; poolSize: number; migrateOnStart: boolean };
  temporal: {
    /** An existing cluster is used (TEMPORAL_ADDRESS, or a temporal.toml profile's address); false: start the dev server. */
    external: boolean;
    /** How every process connects (its address and namespace too): to that cluster (TLS, API key, metadata as resolved), or to the dev server on devPort. */
    connection: TemporalConnectionSettings;
    taskQueue: string;
    cliPath?: string;
    devPort: number;
    uiPort: number;
    workflowBundlePath: string;
    /** Worker Versioning (runtime/worker-deployment.ts). */
    versioning: VersioningConfig;
  };
  rateLimits: {
    perKey: { points: number; windowSeconds: number };
    trial: { points: number; windowSeconds: number };
  };
  /** Redis for the rate-limit counters; `url` is not enumerable (it may hold a password). */
  redis: { url?: string; keyPrefix: string };
  /** In-process cache of authenticated keys; revocations reach it by LISTEN/NOTIFY (0: no cache). */
  keyCache: { ttlMs: number };
  /** In-process cache of routing policies; policy writes reach it by LISTEN/NOTIFY (0: no cache). */
  routeCache: { ttlMs: number };
  shutdownTimeoutMs: number;
  /** How long start-up waits, in all, for an unreachable dependency before the process exits 1 naming it. */
  startupTimeoutMs: number;
  /** How long a stopping worker lets in-flight activities finish before cancelling them. */
  workerShutdownGraceMs: number;
  /**
   * Workflows the worker keeps in its sticky cache (WORKER_MAX_CACHED_WORKFLOWS, 40). A run that waits for
   * a person has no work in flight: evicted, it costs the worker nothing until its decision arrives, when
   * its short history replays. Too small a cache for the runs in flight at once makes every step replay
   * its run (docs/performance.md, "Scale").
   */
  workerMaxCachedWorkflows: number;
  pricing: PricingTable;
  runs: {
    approvalTimeoutMs: number;
    webhookTimeoutMs: number;
    journeyRetentionDays: number;
    devStartingCredits: number;
    /** Tool servers (MCP): the operator's file (config/tool-servers.ts), read and checked here, a call's time limit, and how much of a result a model is shown. */
    toolServers: { servers: ToolServerSpec[]; callTimeoutMs: number; resultMaxChars: number };
    agent: AgentLimits;
    /** How an upstream model plans and acts (docs/runs.md, "The tool-calling protocol"). */
    upstreamProtocol: 'tool_calls' | 'plan';
    /** All the tool results a tool-calling run shows its model, in characters: the rest is withheld, so its hold covers every call. */
    toolResultsMaxChars: number;
    /** What the upstream server takes: the report's format beside the tools in one request, and how many tools. */
    upstreamServer: UpstreamServer;
    /** How often the reconcile Schedule looks for runs whose workflow never started, and how old such a row must be. */
    reconcileIntervalSeconds: number;
    reconcileGraceMs: number;
  };
  chat: {
    maxTokensDefault: number;
    keepAliveMs: number;
    refusalTerms: string[];
    contextUrl: { allowedHosts: string[]; maxBytes: number; timeoutMs: number };
    /** Chat holds' owner leases and their sweeper (services/hold-sweeper.ts). */
    holds: { leaseMs: number; sweepMs: number };
    /** The OpenAI-compatible upstream, when configured. The key is a reference: the name of the variable holding it. */
    upstream?: { baseUrl: string; apiKeyEnv?: string; modelMap: Record<string, string>; timeoutMs: number };
  };
  /** Prometheus metrics: off without a port; the worker's Temporal SDK metrics on their own port, appended to ours. */
  metrics?: { port: number; host: string; temporalPort: number };
  /** The model providers besides the upstream: the embedded model, and the default route (config/models.ts). */
  models: ModelsConfig;
  platform: { sandboxJobsEnabled: boolean; patchCandidatesEnabled: boolean };
  payload: {
    /** PAYLOAD_KEY with its id; unset means "the key kept in DATA_DIR" (runtime/payload-keys.ts). */
    key?: PayloadKey;
    /** Keys that only decrypt: what older histories were encrypted with (rotation). */
    previous: PayloadKey[];
  };
  codecEndpoint: {
    enabled: boolean;
    /** When set, a request must carry `Authorization: Bearer <token>`; unset, only loopback requests are served. */
    token?: string;
    /** Browser origins (the Temporal UI's) allowed to call it. */
    corsOrigins: string[];
  };
}

/** An AES-256 key for payloads. `bytes` is not enumerable, so logging or serialising the config never shows it. */
export interface PayloadKey {
  id: string;
  readonly bytes: Buffer;
}

export function payloadKeyOf(id: string, bytes: Buffer): PayloadKey {
  const key = { id } as PayloadKey;
  Object.defineProperty(key, 'bytes', { value: bytes, enumerable: false });
  return key;
}

/** The id a key gets when none is given: a short fingerprint, so two different keys never share an id. */
export function defaultPayloadKeyId(bytes: Buffer): string {
  return `k-${createHash('sha256').update(bytes).digest('hex').slice(0, 12)}`;
}

function listOf(csv: string): string[] {
  return csv
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
}

/** Reads and validates the environment; throws ConfigError naming each bad variable. */
export function loadConfig(source: NodeJS.ProcessEnv = process.env): Config {
  // Empty strings mean "unset" so `FOO= npm start` behaves like not setting FOO.
  const cleaned = Object.fromEntries(Object.keys(envSchema.shape).map((name) => [name, source[name] === '' ? undefined : source[name]]));
  const parsed = envSchema.safeParse(cleaned);
  // Temporal's own variables and temporal.toml, as the Temporal CLI reads them (empty values included).
  const temporal = resolveTemporalConnection(source);
  const problems = [...(parsed.success ? [] : parsed.error.issues.map((i) => `${String(i.path[0])}: ${i.message}`)), ...(temporal.ok ? [] : temporal.problems)];
  if (!parsed.success || !temporal.ok) throw new ConfigError(problems);
  const e = parsed.data;
  const resolvedTemporal = temporal.settings;
  if (e.WORKER_SHUTDOWN_GRACE_MS >= e.SHUTDOWN_TIMEOUT_MS) {
    throw new ConfigError([
      `WORKER_SHUTDOWN_GRACE_MS: must be less than SHUTDOWN_TIMEOUT_MS (${e.SHUTDOWN_TIMEOUT_MS}), or the process exits before in-flight activities finish`,
    ]);
  }
  const currentKey = e.PAYLOAD_KEY ? payloadKeyOf(e.PAYLOAD_KEY_ID ?? defaultPayloadKeyId(e.PAYLOAD_KEY), e.PAYLOAD_KEY) : undefined;
  const previousKeys = (e.PAYLOAD_KEYS_PREVIOUS ?? []).map((k) => payloadKeyOf(k.id, k.bytes));
  const keyProblems: string[] = [];
  if (e.PAYLOAD_KEY_ID && !e.PAYLOAD_KEY) keyProblems.push('PAYLOAD_KEY_ID: set it only together with PAYLOAD_KEY');
  const ids = [currentKey?.id, ...previousKeys.map((k) => k.id)].filter(Boolean);
  if (new Set(ids).size !== ids.length) keyProblems.push('PAYLOAD_KEYS_PREVIOUS: every key id must differ from the others and from PAYLOAD_KEY_ID');
  if (keyProblems.length) throw new ConfigError(keyProblems);
  return {
    env: e.NODE_ENV,
    http: {
      host: e.HOST,
      port: e.PORT,
      publicBaseUrl: e.PUBLIC_BASE_URL,
      bodyLimitBytes: e.BODY_LIMIT_BYTES,
      trustProxy: e.TRUST_PROXY,
      // The test suite checks every response; npm start serves at the speed production does.
      checkResponses: e.CHECK_RESPONSES ?? e.NODE_ENV === 'test',
      streams: { perProcess: e.STREAMS_PER_PROCESS, perKey: e.STREAMS_PER_KEY },
    },
    logLevel: e.LOG_LEVEL,
    buildDate: e.BUILD_DATE,
    database: {
      url: e.DATABASE_URL,
      dataDir: path.resolve(e.DATA_DIR),
      poolSize: e.DATABASE_POOL_SIZE,
      migrateOnStart: e.MIGRATE_ON_START,
    },
    temporal: {
      external: resolvedTemporal.address !== undefined,
      connection: connectionSettings(resolvedTemporal, `127.0.0.1:${e.TEMPORAL_DEV_PORT}`),
      taskQueue: e.TASK_QUEUE,
      cliPath: e.TEMPORAL_CLI,
      devPort: e.TEMPORAL_DEV_PORT,
      uiPort: e.TEMPORAL_UI_PORT,
      workflowBundlePath: path.resolve(e.WORKFLOW_BUNDLE_PATH),
      versioning: { enabled: e.WORKER_VERSIONING, deploymentName: e.WORKER_DEPLOYMENT_NAME, ...(e.WORKER_BUILD_ID ? { buildId: e.WORKER_BUILD_ID } : {}) },
    },
    rateLimits: {
      perKey: { points: e.RATE_LIMIT_POINTS, windowSeconds: e.RATE_LIMIT_WINDOW_SECONDS },
      trial: { points: e.TRIAL_RATE_LIMIT_POINTS, windowSeconds: e.TRIAL_RATE_LIMIT_WINDOW_SECONDS },
    },
    redis: withHidden({ keyPrefix: e.REDIS_KEY_PREFIX }, 'url', e.REDIS_URL),
    keyCache: { ttlMs: e.KEY_CACHE_TTL_MS },
    routeCache: { ttlMs: e.ROUTE_CACHE_TTL_MS },
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
    startupTimeoutMs: e.STARTUP_TIMEOUT_MS,
    workerShutdownGraceMs: e.WORKER_SHUTDOWN_GRACE_MS,
    workerMaxCachedWorkflows: e.WORKER_MAX_CACHED_WORKFLOWS,
    pricing: {
      version: 'v1',
      modelRates: {
        'svc-workspace': e.PRICE_CREDITS_PER_1K_TOKENS,
        'svc-workspace-fast': e.PRICE_CREDITS_PER_1K_TOKENS_FAST,
        'svc-workspace-quality': e.PRICE_CREDITS_PER_1K_TOKENS_QUALITY,
      },
      toolCredits: {
        memory_recall: e.PRICE_MEMORY_RECALL,
        text_analysis: e.PRICE_TEXT_ANALYSIS,
        // The exact analysis tools read text as key-phrase extraction does, and cost what it costs.
        count_list_items: e.PRICE_TEXT_ANALYSIS,
        find_contact_details: e.PRICE_TEXT_ANALYSIS,
        webhook_delivery: e.PRICE_WEBHOOK_DELIVERY,
        server_tool: e.PRICE_SERVER_TOOL_CALL,
      },
      outputTokensPerStep: e.OUTPUT_TOKENS_PER_STEP,
    },
    runs: {
      approvalTimeoutMs: e.APPROVAL_TIMEOUT_SECONDS * 1000,
      webhookTimeoutMs: e.WEBHOOK_TIMEOUT_MS,
      journeyRetentionDays: e.JOURNEY_RETENTION_DAYS,
      devStartingCredits: e.DEV_STARTING_CREDITS,
      toolServers: { servers: loadToolServers(e.TOOL_SERVERS_FILE), callTimeoutMs: e.TOOL_CALL_TIMEOUT_MS, resultMaxChars: e.TOOL_RESULT_MAX_CHARS },
      agent: { maxTurns: e.RUN_MAX_MODEL_TURNS, turnMaxTokens: e.RUN_TURN_MAX_TOKENS, maxToolCalls: e.RUN_MAX_TOOL_CALLS },
      upstreamProtocol: e.UPSTREAM_PROTOCOL,
      toolResultsMaxChars: e.RUN_TOOL_RESULTS_MAX_CHARS,
      upstreamServer: { reportWithTools: e.UPSTREAM_REPORT_WITH_TOOLS, maxTools: e.UPSTREAM_MAX_TOOLS },
      reconcileIntervalSeconds: e.RECONCILE_INTERVAL_SECONDS,
      reconcileGraceMs: e.RECONCILE_GRACE_SECONDS * 1000,
    },
    chat: {
      maxTokensDefault: e.CHAT_MAX_TOKENS_DEFAULT,
      keepAliveMs: e.CHAT_KEEPALIVE_MS,
      holds: { leaseMs: e.INSTANCE_LEASE_MS, sweepMs: e.HOLD_SWEEP_INTERVAL_MS },
      refusalTerms: listOf(e.CHAT_REFUSAL_TERMS).map((t) => t.toLowerCase()),
      contextUrl: {
        allowedHosts: listOf(e.CONTEXT_URL_ALLOWED_HOSTS).map((h) => h.toLowerCase()),
        maxBytes: e.CONTEXT_URL_MAX_BYTES,
        timeoutMs: e.CONTEXT_URL_TIMEOUT_MS,
      },
      upstream: e.UPSTREAM_BASE_URL
        ? {
            baseUrl: e.UPSTREAM_BASE_URL.replace(/\/+$/, ''),
            apiKeyEnv: e.UPSTREAM_API_KEY_ENV,
            modelMap: e.UPSTREAM_MODEL_MAP,
            timeoutMs: e.UPSTREAM_TIMEOUT_MS,
          }
        : undefined,
    },
    metrics: e.METRICS_PORT
      ? { port: e.METRICS_PORT, host: e.METRICS_HOST ?? e.HOST, temporalPort: e.TEMPORAL_METRICS_PORT ?? (e.METRICS_PORT + 100) % 65536 }
      : undefined,
    models: modelsConfig(e, e.UPSTREAM_BASE_URL !== undefined),
    platform: { sandboxJobsEnabled: e.SANDBOX_JOBS_ENABLED, patchCandidatesEnabled: e.PATCH_CANDIDATES_ENABLED },
    payload: { key: currentKey, previous: previousKeys },
    codecEndpoint: withHidden(
      {
        enabled: e.CODEC_ENDPOINT_ENABLED ?? e.NODE_ENV !== 'production',
        corsOrigins: e.CODEC_ENDPOINT_CORS_ORIGINS
          ? listOf(e.CODEC_ENDPOINT_CORS_ORIGINS).map((o) => o.replace(/\/+$/, ''))
          : [`http://127.0.0.1:${e.TEMPORAL_UI_PORT}`, `http://localhost:${e.TEMPORAL_UI_PORT}`],
      },
      'token',
      e.CODEC_ENDPOINT_TOKEN,
    ),
  };
}
