// Catalog routes of the platform surface, each built from live config and code.
import { z } from 'zod';
import type { ToolAvailability } from '../../services/tool-servers.ts';
import type { Config } from '../../config/env.ts';
import {
  ADAPTER_CAPABILITIES,
  adapterCatalog,
  EVALUATION_SUITES,
  modelCatalog,
  protocolCapabilities,
  providerCatalog,
  REQUIRED_CAPABILITIES,
  SANDBOX_PROFILES,
  SKILL_LIMITS,
  SKILL_TYPES,
  toolCatalog,
} from '../../services/platform/catalogs.ts';
import type { Principal } from '../../services/keys.ts';
import { defineRoute } from '../contract/route.ts';
import { ConformanceDescriptor, OnboardingProfile } from '../schemas/platform.ts';

export interface TenantStatus {
  webhookConfigured: boolean;
  keys: { core: number; workspace: number };
  budgets: number;
  routingPolicies: number;
  traceExports: number;
  auditEvents: number;
  availableCredits: number;
}

export interface CatalogDeps {
  config: Config;
  tenantStatus(tenantId: string): Promise<TenantStatus>;
  routeCount(): number;
  /** The operator's server tools (MCP) with their status for a tenant. */
  serverTools(tenantId: string): Promise<ToolAvailability[]>;
}

const CatalogTool = z
  .object({
    id: z.string().meta({ description: 'The name a plan uses: a built-in tool, or `<server_id>__<tool_name>` for a server tool.' }),
    source: z.enum(['builtin', 'server']),
    server: z.string().optional().meta({ description: 'Server tools: the id of the tool server (the operator names it).' }),
    server_tool: z.string().optional().meta({ description: 'Server tools: the tool name on its server.' }),
    effect: z.enum(['read', 'external']).meta({ description: "The operator's class: external effects run only after a person approves them." }),
    requires_approval: z.boolean(),
    classified: z.boolean().optional().meta({ description: 'Server tools: false when the operator did not classify the tool, which makes it external.' }),
    description: z.string(),
    input_schema: z
      .record(z.string(), z.unknown())
      .meta({ description: "JSON Schema of the tool's arguments, as runs' models see it: without the arguments the operator fixed." }),
    fixed_arguments: z
      .record(z.string(), z.union([z.string(), z.number(), z.boolean()]))
      .optional()
      .meta({ description: 'Server tools (extension): the arguments the operator fixed for it; every call carries these values.' }),
    server_hints: z
      .record(z.string(), z.unknown())
      .nullable()
      .optional()
      .meta({ description: "The server's own annotations (readOnlyHint…), shown for information; never trusted, never used to decide approval." }),
    status: z.enum(['available', 'not_configured']),
    reason: z
      .string()
      .nullable()
      .meta({ description: 'Why the tool is not_configured (its server is down or not enabled for this tenant); null when available.' }),
  })
  .meta({ id: 'CatalogTool' });

const ToolCatalog = z
  .object({ object: z.literal('tool_catalog'), data: z.array(CatalogTool) })
  .meta({ id: 'ToolCatalog', description: 'Server-managed tool catalog with per-tool status (extension: server tools and their fields).' });

/** Opaque catalog envelope: `object` names it; the rest is documented per route. */
const envelope = (object: string, description: string) => z.looseObject({ object: z.literal(object) }).meta({ id: `Catalog_${object}`, description });

function catalogRoute(
  path: string,
  operationId: string,
  summary: string,
  object: string,
  build: (principal: Principal) => Promise<Record<string, unknown>> | Record<string, unknown>,
) {
  return defineRoute({
    method: 'get',
    path,
    operationId,
    summary,
    tags: ['platform'],
    auth: 'core',
    responses: { 200: { description: summary, schema: envelope(object, summary) } },
    handler: async ({ principal }) => ({ status: 200, body: { object, ...(await build(principal!)) } }),
  });
}

export function platformCatalogRoutes(deps: CatalogDeps) {
  const { config } = deps;
  return [
    catalogRoute('/v1/providers', 'listProviders', 'Provider catalog and credential boundary', 'provider_catalog', () => ({
      data: providerCatalog(config),
      credential_policy: 'Providers are configured with credential references (the name of a variable); values are never accepted, stored or returned.',
    })),
    catalogRoute('/v1/adapters', 'listAdapters', 'Provider-independent adapter capabilities', 'adapter_catalog', () => ({ data: adapterCatalog(config) })),
    catalogRoute(
      '/v1/account-free-adapters',
      'listAccountFreeAdapters',
      'Account-free local adapter packs and verification state',
      'account_free_adapter_catalog',
      () => ({
        data: [
          {
            id: 'local',
            pack: 'governed-workspace-local',
            models: modelCatalog(),
            verification: { state: 'verified', method: 'deterministic: the same request gives the same answer; covered by the service test suite' },
            requires_account: false,
            network: 'none',
          },
        ],
      }),
    ),
    catalogRoute('/v1/adapters/conformance', 'getAdapterConformance', 'Adapter conformance contract', 'adapter_conformance_contract', () => ({
      required_capabilities: [...REQUIRED_CAPABILITIES],
      optional_capabilities: ADAPTER_CAPABILITIES.filter((c) => !(REQUIRED_CAPABILITIES as readonly string[]).includes(c)),
      descriptor_schema: z.toJSONSchema(ConformanceDescriptor),
      rules: [
        'Credentials are references (env:NAME or secret://path), never values.',
        'Errors surface without provider identity.',
        'Streaming uses server-sent events.',
      ],
    })),
    catalogRoute('/v1/sandbox-profiles', 'listSandboxProfiles', 'Sandbox policy and profile catalog', 'sandbox_profile_catalog', () => ({
      enabled: config.platform.sandboxJobsEnabled,
      data: SANDBOX_PROFILES,
    })),
    catalogRoute(
      '/v1/sandbox-capabilities',
      'getSandboxCapabilities',
      'Sandbox lifecycle, network, secret and artifact boundaries',
      'sandbox_capabilities',
      () => ({
        enabled: config.platform.sandboxJobsEnabled,
        runner: 'not_configured',
        // Only what this deployment can do to a job: validate it, then refuse it.
        lifecycle: ['validated', 'refused'],
        network: 'none by default; allow-listed egress in the standard profile',
        secrets: 'references only; values are resolved inside the sandbox and never returned',
        artifacts: 'returned to the caller; nothing persists in the sandbox',
        admission: config.platform.sandboxJobsEnabled
          ? 'refused: no sandbox runner is configured (code sandbox_runner_not_configured)'
          : 'closed: the second phase is not enabled (code sandbox_jobs_disabled)',
      }),
    ),
    catalogRoute('/v1/control-plane', 'getControlPlane', 'Tenant control-plane capability status', 'control_plane', async (p) => {
      const s = await deps.tenantStatus(p.tenantId);
      return {
        tenant_id: p.tenantId,
        capabilities: {
          budgets: { enabled: true, policies: s.budgets },
          routing_policies: { enabled: true, policies: s.routingPolicies },
          trace_exports: { enabled: true, descriptors: s.traceExports, delivery: 'not activated by this service' },
          audit_events: { enabled: true },
          webhook_delivery: { configured: s.webhookConfigured },
          keys: s.keys,
        },
      };
    }),
    catalogRoute(
      '/v1/enterprise/readiness',
      'getEnterpriseReadiness',
      'Enterprise integration readiness and connection requirements',
      'enterprise_readiness',
      async (p) => {
        // Read, not asserted: the audit claim comes from the audit store answering for this tenant.
        const audit = await deps.tenantStatus(p.tenantId).then(
          (s) => ({ count: s.auditEvents }),
          () => null,
        );
        return {
          checks: [
            {
              id: 'database',
              state: config.database.url ? 'ready' : 'embedded',
              detail: config.database.url ? 'Postgres' : 'PGlite (single process, development)',
            },
            {
              id: 'durable_execution',
              state: config.temporal.external ? 'ready' : 'embedded',
              detail: config.temporal.external ? 'external Temporal cluster' : 'Temporal dev server',
            },
            { id: 'shared_rate_limits', state: config.database.url ? 'ready' : 'per_process' },
            { id: 'upstream_provider', state: config.chat.upstream ? 'ready' : 'not_configured' },
            {
              id: 'audit_events',
              state: audit ? 'ready' : 'unavailable',
              detail: audit ? `${audit.count} of the newest 1000 kept for your tenant` : 'the audit store did not answer',
            },
            { id: 'sso', state: 'not_available', detail: 'This API has no SSO route; keys are its only credential.' },
          ],
          connection_requirements: [
            'TEMPORAL_ADDRESS for an external cluster',
            'DATABASE_URL for Postgres',
            'UPSTREAM_BASE_URL and UPSTREAM_API_KEY_ENV for an upstream model service',
          ],
        };
      },
    ),
    catalogRoute('/v1/onboarding', 'getOnboarding', 'Self-service integration guide and connection requirements', 'onboarding_guide', async (p) => {
      const s = await deps.tenantStatus(p.tenantId);
      return {
        steps: [
          { id: 'core_key', done: s.keys.core > 0, how: 'Provisioned after a confirmed engagement or checkout.' },
          { id: 'credits', done: s.availableCredits > 0, how: 'Credits are granted by your operator; see GET /v1/usage.' },
          { id: 'workspace_key', done: s.keys.workspace > 0, how: 'Create one in the vault: POST /v1/vault/keys.' },
          { id: 'budgets', done: s.budgets > 0, how: 'POST /v1/budgets to cap spending.' },
          { id: 'webhook', done: s.webhookConfigured, how: 'Ask your operator to configure a webhook URL for result delivery.' },
        ],
        profile_schema: z.toJSONSchema(OnboardingProfile),
      };
    }),
    defineRoute({
      method: 'get',
      path: '/v1/tools',
      operationId: 'listTools',
      summary: 'Server-managed tool catalog with per-tool status',
      description:
        "The built-in tools and the operator's tool servers' tools (extension), each `available` or `not_configured` with a reason. A server tool's effect class is the operator's; one the operator did not classify is external.",
      tags: ['platform'],
      auth: 'core',
      responses: { 200: { description: 'The catalog.', schema: ToolCatalog } },
      handler: async ({ principal }) => {
        const [status, servers] = await Promise.all([deps.tenantStatus(principal!.tenantId), deps.serverTools(principal!.tenantId)]);
        return { status: 200, body: { object: 'tool_catalog' as const, data: toolCatalog(status.webhookConfigured, servers) } };
      },
    }),
    catalogRoute('/v1/skills', 'listSkills', 'Composable skill types, limits and privacy boundary', 'skill_catalog', () => ({
      data: Object.entries(SKILL_TYPES).map(([id, s]) => ({ id, ...s })),
      limits: SKILL_LIMITS,
      privacy_boundary: 'Compositions are validated here and executed customer-locally; their inputs are not stored.',
    })),
    catalogRoute('/v1/evaluations', 'listEvaluations', 'Evaluation suite catalog', 'evaluation_catalog', () => ({ data: EVALUATION_SUITES })),
    catalogRoute('/v1/protocol/capabilities', 'getProtocolCapabilities', 'Live protocol capabilities', 'protocol_capabilities', () =>
      protocolCapabilities(config, deps.routeCount()),
    ),
  ];
}
