// Tenant-scoped stores: budgets, routing policies, traces, trace exports,
// evaluation runs (201 upserts, GET lists), and the audit receipts.
import { z } from 'zod';
import { errors } from '../../domain/errors.ts';
import type { listAudit } from '../../services/audit.ts';
import type { PlatformStores } from '../../services/platform/stores.ts';
import { defineRoute } from '../contract/route.ts';
import { BudgetInput, EvaluationRunInput, RoutingPolicyInput, TraceExportInput, TraceInput } from '../schemas/platform.ts';

const CONTENT_KEYS = /^(prompt|prompts|response|responses|completion|messages|message|input|output|content|text|body)$/i;

/** The path of the first attribute whose key names content, or null. */
function contentKeyIn(spans: { attributes?: Record<string, unknown> }[]): string | null {
  for (const [i, span] of spans.entries()) {
    for (const key of Object.keys(span.attributes ?? {})) if (CONTENT_KEYS.test(key)) return `spans[${i}].attributes.${key}`;
  }
  return null;
}

const listOf = (id: string, item: z.ZodType) => z.object({ object: z.literal('list'), data: z.array(item) }).meta({ id });
const iso = (d: Date) => d.toISOString();

const Budget = z.object({ name: z.string(), scope: z.string(), period: z.string(), limit_credits: z.int(), updated_at: z.string() }).meta({ id: 'Budget' });
const RoutingPolicy = z.object({ model: z.string(), provider: z.string(), updated_at: z.string() }).meta({ id: 'RoutingPolicy' });
const Trace = z.object({ id: z.string(), name: z.string(), run_id: z.string().nullable(), spans: z.array(z.unknown()), created_at: z.string() }).meta({ id: 'Trace' });
const TraceExport = z
  .object({ name: z.string(), kind: z.string(), endpoint: z.string(), credential: z.string().nullable(), active: z.literal(false), updated_at: z.string() })
  .meta({ id: 'TraceExport', description: 'Stored with a credential reference only, and never activated by this service.' });
const EvaluationRun = z
  .object({ id: z.string(), suite_id: z.string(), descriptor_digest: z.string(), execution: z.string(), results: z.unknown(), created_at: z.string() })
  .meta({ id: 'EvaluationRun' });
const AuditEvent = z
  .object({ id: z.string(), key_id: z.string().nullable(), action: z.string(), target: z.string(), digest: z.string(), created_at: z.string() })
  .meta({ id: 'AuditEvent', description: 'A content-free receipt of a control write.' });

export function platformStoreRoutes(deps: { stores: PlatformStores; listAudit: (tenantId: string, limit: number) => ReturnType<typeof listAudit> }) {
  const { stores } = deps;
  const tags = ['platform'];
  const limitQuery = z.object({ limit: z.coerce.number().int().min(1).max(100).default(50) });
  const budgetView = (b: Awaited<ReturnType<PlatformStores['budgets']['list']>>[number]) => ({
    name: b.name, scope: b.scope, period: b.period, limit_credits: b.limitCredits, updated_at: iso(b.updatedAt),
  });
  const exportView = (e: Awaited<ReturnType<PlatformStores['traceExports']['list']>>[number]) => ({
    name: e.name, kind: e.kind, endpoint: e.endpoint, credential: e.credentialRef, active: false as const, updated_at: iso(e.updatedAt),
  });
  const traceView = (t: Awaited<ReturnType<PlatformStores['traces']['list']>>[number]) => ({
    id: t.id, name: t.name, run_id: t.runId, spans: t.spans as unknown[], created_at: iso(t.createdAt),
  });
  const evalView = (r: Awaited<ReturnType<PlatformStores['evaluationRuns']['list']>>[number]) => ({
    id: r.id, suite_id: r.suiteId, descriptor_digest: r.descriptorDigest, execution: r.execution, results: r.results, created_at: iso(r.createdAt),
  });
  return [
    defineRoute({
      method: 'get', path: '/v1/budgets', operationId: 'listBudgets', summary: 'Budget policies', tags, auth: 'core',
      responses: { 200: { description: 'Budgets.', schema: listOf('BudgetList', Budget) } },
      handler: async ({ principal }) => ({ status: 200, body: { object: 'list', data: (await stores.budgets.list(principal!.tenantId)).map(budgetView) } }),
    }),
    defineRoute({
      method: 'post', path: '/v1/budgets', operationId: 'upsertBudget', summary: 'Record a budget policy (upsert by name)',
      description: 'Enforced when runs reserve (scope runs) and when chat reserves (scope chat); scope all covers both.',
      tags, auth: 'core', request: { body: BudgetInput },
      responses: { 201: { description: 'Recorded.', schema: Budget } },
      async handler({ principal, body }) {
        const row = await stores.budgets.upsert(principal!, { name: body.name, scope: body.scope, period: body.period, limitCredits: body.limit_credits });
        return { status: 201, body: budgetView(row) };
      },
    }),
    defineRoute({
      method: 'get', path: '/v1/routing-policies', operationId: 'listRoutingPolicies', summary: 'Routing policies', tags, auth: 'core',
      responses: { 200: { description: 'Policies; a model without one uses the local adapter.', schema: listOf('RoutingPolicyList', RoutingPolicy) } },
      handler: async ({ principal }) => ({
        status: 200,
        body: { object: 'list', data: (await stores.routing.list(principal!.tenantId)).map((r) => ({ model: r.model, provider: r.provider, updated_at: iso(r.updatedAt) })) },
      }),
    }),
    defineRoute({
      method: 'post', path: '/v1/routing-policies', operationId: 'upsertRoutingPolicy', summary: 'Record a routing policy (upsert by model)',
      description: 'Chooses the provider that serves a model alias for this tenant.',
      tags, auth: 'core', request: { body: RoutingPolicyInput },
      responses: { 201: { description: 'Recorded.', schema: RoutingPolicy } },
      async handler({ principal, body }) {
        const row = await stores.routing.upsert(principal!, body);
        return { status: 201, body: { model: row.model, provider: row.provider, updated_at: iso(row.updatedAt) } };
      },
    }),
    defineRoute({
      method: 'get', path: '/v1/traces', operationId: 'listTraces', summary: 'Trace metadata', tags, auth: 'core',
      request: { query: limitQuery },
      responses: { 200: { description: 'Newest first.', schema: listOf('TraceList', Trace) } },
      handler: async ({ principal, query }) => ({ status: 200, body: { object: 'list', data: (await stores.traces.list(principal!.tenantId, query.limit)).map(traceView) } }),
    }),
    defineRoute({
      method: 'post', path: '/v1/traces', operationId: 'recordTrace', summary: 'Record metadata-only trace',
      description: 'Span names, durations, statuses and small attributes. A body carrying prompt or response content is refused (code trace_content_refused).',
      tags, auth: 'core', request: { body: TraceInput },
      responses: { 201: { description: 'Recorded.', schema: Trace } },
      async handler({ principal, body }) {
        const contentAt = contentKeyIn(body.spans);
        if (contentAt) throw errors.traceContentRefused(contentAt);
        const row = await stores.traces.record(principal!.tenantId, { name: body.name, runId: body.run_id ?? null, spans: body.spans });
        return { status: 201, body: traceView(row) };
      },
    }),
    defineRoute({
      method: 'get', path: '/v1/trace-exports', operationId: 'listTraceExports', summary: 'Trace export connection descriptors', tags, auth: 'core',
      responses: { 200: { description: 'Descriptors.', schema: listOf('TraceExportList', TraceExport) } },
      handler: async ({ principal }) => ({ status: 200, body: { object: 'list', data: (await stores.traceExports.list(principal!.tenantId)).map(exportView) } }),
    }),
    defineRoute({
      method: 'post', path: '/v1/trace-exports', operationId: 'upsertTraceExport', summary: 'Record a trace export descriptor (upsert by name)',
      description: 'Stored without any credential value and without activating delivery.',
      tags, auth: 'core', refuseSecrets: true, request: { body: TraceExportInput },
      responses: { 201: { description: 'Recorded, inactive.', schema: TraceExport } },
      async handler({ principal, body }) {
        const row = await stores.traceExports.upsert(principal!, { name: body.name, kind: body.kind, endpoint: body.endpoint, credentialRef: body.credential ?? null });
        return { status: 201, body: exportView(row) };
      },
    }),
    defineRoute({
      method: 'get', path: '/v1/evaluation-runs', operationId: 'listEvaluationRuns', summary: 'Digest-bound evaluation run records', tags, auth: 'core',
      request: { query: limitQuery },
      responses: { 200: { description: 'Newest first.', schema: listOf('EvaluationRunList', EvaluationRun) } },
      handler: async ({ principal, query }) => ({ status: 200, body: { object: 'list', data: (await stores.evaluationRuns.list(principal!.tenantId, query.limit)).map(evalView) } }),
    }),
    defineRoute({
      method: 'post', path: '/v1/evaluation-runs', operationId: 'createEvaluationRun', summary: 'Record an evaluation run for customer or connected execution',
      tags, auth: 'core', request: { body: EvaluationRunInput },
      responses: { 201: { description: 'Recorded, bound to the descriptor digest.', schema: EvaluationRun } },
      async handler({ principal, body }) {
        const row = await stores.evaluationRuns.create(principal!.tenantId, { suiteId: body.suite_id, descriptor: body.descriptor, execution: body.execution, results: body.results });
        return { status: 201, body: evalView(row) };
      },
    }),
    defineRoute({
      method: 'get', path: '/v1/audit-events', operationId: 'listAuditEvents', summary: 'Bounded tenant control receipts',
      description: 'Key, budget, routing-policy, trace-export, approval and vault-forget writes: key id, action, target, time and digest. The newest 1000 are kept.',
      tags, auth: 'core', request: { query: limitQuery },
      responses: { 200: { description: 'Newest first.', schema: listOf('AuditEventList', AuditEvent) } },
      handler: async ({ principal, query }) => ({
        status: 200,
        body: {
          object: 'list',
          data: (await deps.listAudit(principal!.tenantId, query.limit)).map((a) => ({
            id: String(a.id), key_id: a.keyId, action: a.action, target: a.target, digest: a.digest, created_at: iso(a.createdAt),
          })),
        },
      }),
    }),
  ];
}
