// Catalogs built from the live configuration and code, never from static
// blobs: what chat admits, which providers and tools are really available,
// what adapters can do, and what the sandbox and control plane offer.
import { type EmbeddedModel, sharedEmbeddedModel } from '../embedded/embedded-model.ts';
import type { ToolAvailability } from '../tool-servers.ts';
import type { Config } from '../../config/env.ts';
import { SCHEMA_LIMITS, SUPPORTED_KEYWORDS } from '../../domain/chat/schema-subset.ts';
import { digestOf } from '../../domain/digest.ts';
import { ERROR_CONTRACT_ID } from '../../domain/errors.ts';
import { MODEL_DESCRIPTIONS, MODEL_IDS } from '../../domain/models.ts';
import { MAX_PLAN_STEPS } from '../../domain/planning/local-planner.ts';
import { RUN_STATES } from '../../domain/runs/states.ts';
import { PROTOCOL_TOOL_IDS, PROTOCOL_TOOLS } from '../../domain/agent/protocol-tools.ts';

export const ADAPTER_CAPABILITIES = ['chat.completions', 'chat.streaming', 'chat.structured_output', 'chat.refusal', 'memory.grounding'] as const;
export const REQUIRED_CAPABILITIES = ['chat.completions'] as const;

export const SKILL_TYPES = {
  plan: { tool: null, effect: 'read', description: 'Turn an objective into a bounded plan.' },
  analyze: { tool: 'text_analysis', effect: 'read', description: 'Extract key phrases, constraints and questions.' },
  recall: { tool: 'memory_recall', effect: 'read', description: 'Recall tenant memory (workspace vault).' },
  deliver: { tool: 'webhook_delivery', effect: 'external', description: 'Deliver a result; needs explicit approval.' },
} as const;
export const SKILL_LIMITS = { maxSteps: MAX_PLAN_STEPS, maxNameLength: 64, maxCompositions: 1 };

/** The suites as data: their cases are what an evaluation run must cover, one result per case. */
const SUITES = [
  {
    id: 'trial-determinism',
    description: 'The same trial request yields the same result and digests.',
    cases: ['bounded_work_plan twice', 'decision_brief_outline twice', 'research_question_map twice'],
  },
  {
    id: 'structured-output-conformance',
    description: 'Answers with response_format validate against their schema, or refuse without inventing a value.',
    cases: ['stated values fill the schema', 'a missing required value refuses', 'an enum value is mentioned or missing', 'a nested object validates'],
  },
  {
    id: 'refusal-policy',
    description: 'Declined requests refuse with 200 and finish_reason content_filter; others are answered.',
    cases: ['a declined phrase refuses', 'an ordinary request is answered'],
  },
];

export const EVALUATION_SUITES = SUITES.map((s) => ({ id: s.id, description: s.description, cases: s.cases.length, case_names: s.cases, digest: digestOf(s) }));

/** What is wrong with an evaluation run for `suiteId`, or null: the suite must exist and every one of its cases be reported once. */
export function evaluationRunProblem(run: {
  suite_id: string;
  descriptor: { suite_id: string; cases: unknown[] };
  results?: { passed: number; failed: number };
}) {
  const suite = EVALUATION_SUITES.find((s) => s.id === run.suite_id);
  if (!suite) return { param: 'suite_id', message: `Unknown suite '${run.suite_id}'; see GET /v1/evaluations.` };
  if (run.descriptor.suite_id !== run.suite_id) return { param: 'descriptor.suite_id', message: 'The descriptor is for another suite.' };
  if (run.descriptor.cases.length !== suite.cases)
    return { param: 'descriptor.cases', message: `The suite has ${suite.cases} cases; the descriptor lists ${run.descriptor.cases.length}.` };
  if (run.results && run.results.passed + run.results.failed !== suite.cases) {
    return { param: 'results', message: `passed + failed must equal the suite's ${suite.cases} cases.` };
  }
  return null;
}

export const SANDBOX_PROFILES = [
  { id: 'restricted', network: 'none', max_runtime_seconds: 300, max_memory_mb: 512, secrets: 'none', artifacts: 'returned only' },
  {
    id: 'standard',
    network: 'allow-listed egress',
    max_runtime_seconds: 900,
    max_memory_mb: 2048,
    secrets: 'references resolved inside the sandbox',
    artifacts: 'returned only',
  },
];

function loadOf(model: EmbeddedModel) {
  const { inUse, queued } = model.occupancy();
  return { in_use: inUse, queued };
}

export function providerCatalog(config: Config) {
  const upstream = config.chat.upstream;
  const embedded = config.models.embedded;
  const isDefault = (id: string) => config.models.defaultProvider === id;
  return [
    {
      id: 'local',
      kind: 'account_free',
      status: 'available',
      default: isDefault('local'),
      model: null,
      models: [...MODEL_IDS],
      credential_boundary: { requires_credential: false, reference: null },
    },
    {
      id: 'upstream',
      kind: 'openai_compatible',
      status: upstream ? 'available' : 'not_configured',
      default: isDefault('upstream'),
      models: upstream ? Object.keys(upstream.modelMap).filter((m) => (MODEL_IDS as readonly string[]).includes(m)) : [],
      credential_boundary: {
        requires_credential: true,
        // The name of the variable only: the value never leaves the environment.
        reference: upstream?.apiKeyEnv ? `env:${upstream.apiKeyEnv}` : null,
      },
    },
    {
      id: 'embedded',
      kind: 'embedded',
      status: embedded ? 'available' : 'not_configured',
      reason: embedded ? null : (config.models.embeddedAbsent ?? null),
      default: isDefault('embedded'),
      // The GGUF file's name, and whether it is in memory now (it loads on first use and unloads when idle).
      model: embedded?.name ?? null,
      state: embedded ? sharedEmbeddedModel(embedded).state() : null,
      // Requests it is answering now (at most runtime.parallel) and requests waiting (at most runtime.queue_max).
      load: embedded ? loadOf(sharedEmbeddedModel(embedded)) : null,
      runtime: embedded
        ? {
            engine: 'llama.cpp (node-llama-cpp)',
            device: 'cpu',
            context_size: embedded.contextSize,
            threads: embedded.threads,
            parallel: embedded.parallel,
            queue_max: embedded.queueMax,
          }
        : null,
      models: embedded ? [...MODEL_IDS] : [],
      credential_boundary: { requires_credential: false, reference: null },
    },
  ];
}

export function adapterCatalog(config: Config) {
  return providerCatalog(config).map((p) => ({
    provider: p.id,
    status: p.status,
    capabilities: [...ADAPTER_CAPABILITIES],
    structured_output: { keywords: [...SUPPORTED_KEYWORDS], limits: SCHEMA_LIMITS },
    streaming: 'server-sent events',
  }));
}

export function modelCatalog() {
  return MODEL_IDS.map((id) => ({ id, description: MODEL_DESCRIPTIONS[id] }));
}

/**
 * GET /v1/tools: the built-in tools (as a tool-calling run offers them: domain/agent/protocol-tools.ts)
 * and the operator's server tools, each with its status for the tenant. A server tool's effect and approval come from the operator's configuration; the server's
 * own hints are shown (server_hints) and play no part.
 */
export function toolCatalog(webhookConfigured: boolean, servers: ToolAvailability[] = []) {
  const builtin = PROTOCOL_TOOL_IDS.map((id) => ({
    id,
    source: 'builtin' as const,
    effect: PROTOCOL_TOOLS[id].effect,
    requires_approval: PROTOCOL_TOOLS[id].effect === 'external',
    description: PROTOCOL_TOOLS[id].description,
    input_schema: PROTOCOL_TOOLS[id].parameters,
    status: id === 'webhook_delivery' && !webhookConfigured ? ('not_configured' as const) : ('available' as const),
    reason: id === 'webhook_delivery' && !webhookConfigured ? 'No webhook URL is configured for this tenant.' : null,
  }));
  const fromServers = servers.map(({ tool, status, reason }) => ({
    id: tool.name,
    source: 'server' as const,
    server: tool.server,
    server_tool: tool.tool,
    effect: tool.effect,
    requires_approval: tool.effect === 'external',
    classified: tool.classified,
    description: tool.description,
    input_schema: tool.inputSchema,
    ...(Object.keys(tool.fixedArguments).length ? { fixed_arguments: tool.fixedArguments } : {}),
    server_hints: tool.hints,
    status,
    reason,
  }));
  return [...builtin, ...fromServers];
}

export function protocolCapabilities(config: Config, routeCount: number) {
  return {
    api_version: 'current',
    openapi: '3.1.0',
    error_contract: ERROR_CONTRACT_ID,
    auth: { core: 'bearer core key', workspace: 'bearer workspace key (vault only)' },
    streaming: { chat: 'text/event-stream', keep_alive_ms: config.chat.keepAliveMs },
    runs: { states: [...RUN_STATES], approval: ['update', 'signal'], idempotency: 'Idempotency-Key header' },
    rate_limits: { per_key: config.rateLimits.perKey, trial: config.rateLimits.trial, headers: ['RateLimit', 'RateLimit-Policy', 'Retry-After'] },
    sandbox_jobs: config.platform.sandboxJobsEnabled ? 'enabled' : 'disabled',
    routes: routeCount,
  };
}
