// Tenant-scoped stores: budgets, routing policies, traces, trace exports,
// evaluation runs (201 upserts, GET lists), and the audit receipts.
import { z } from 'zod';
import { errors } from '../../domain/errors.ts';
import type { AuditQuery, listAudit } from '../../services/audit.ts';
import type { Principal } from '../../services/keys.ts';
import { evaluationRunProblem } from '../../services/platform/catalogs.ts';
import type { PlatformStores } from '../../services/platform/stores.ts';
import { ErrorObject, limitQuery } from '../contract/common.ts';
import { defineRoute } from '../contract/route.ts';
import { decodeEventCursor, encodeEventCursor, EventListQuery, eventListPage } from './journey-events.ts';
import { BudgetInput, EvaluationRunInput, RoutingPolicyInput, traceExportInput, TraceInput } from '../schemas/platform.ts';
import type { Config } from '../../config/env.ts';
import { deliveryUrlRules } from '../../domain/delivery-url.ts';

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
const Trace = z
  .object({ id: z.string(), name: z.string(), run_id: z.string().nullable(), spans: z.array(z.unknown()), created_at: z.string() })
  .meta({ id: 'Trace' });
const TraceExport = z
  .object({ name: z.string(), kind: z.string(), endpoint: z.string(), credential: z.string().nullable(), active: z.literal(false), updated_at: z.string() })
  .meta({ id: 'TraceExport', description: 'Stored with a credential reference only, and never activated by this service.' });
const EvaluationRun = z
  .object({ id: z.string(), suite_id: z.string(), descriptor_digest: z.string(), execution: z.string(), results: z.unknown(), created_at: z.string() })
  .meta({ id: 'EvaluationRun' });
const AuditEvent = z
  .object({ id: z.string(), key_id: z.string().nullable(), action: z.string(), target: z.string(), digest: z.string(), created_at: z.string() })
  .meta({ id: 'AuditEvent', description: 'A content-free receipt of a control write.' });

interface StoreSpec<Row, In extends z.ZodType> {
  path: string;
  /** Component name of one record, e.g. Budget; `plural` when adding an s is wrong. */
  name: string;
  plural?: string;
  item: z.ZodType;
  input: In;
  listSummary: string;
  writeSummary: string;
  description?: string;
  /** Lists with a `limit` query (append-only stores) instead of the whole set (upserted stores). */
  paged?: boolean;
  refuseSecrets?: boolean;
  list: (tenantId: string, limit: number) => Promise<Row[]>;
  write: (actor: Principal, body: z.output<In>) => Promise<Row>;
  view: (row: Row) => unknown;
}

/** A store's pair of routes: GET lists the tenant's records, POST writes one (201). */
function storeRoutes<Row, In extends z.ZodType>(spec: StoreSpec<Row, In>) {
  const tags = ['platform'];
  const pageQuery = z.object({ limit: limitQuery(100, 50) });
  return [
    defineRoute({
      method: 'get',
      path: spec.path,
      operationId: `list${spec.plural ?? `${spec.name}s`}`,
      summary: spec.listSummary,
      tags,
      auth: 'core',
      request: spec.paged ? { query: pageQuery } : undefined,
      responses: { 200: { description: spec.listSummary, schema: listOf(`${spec.name}List`, spec.item) } },
      handler: async ({ principal, query }) => ({
        status: 200,
        body: { object: 'list', data: (await spec.list(principal!.tenantId, (query as { limit?: number }).limit ?? 100)).map(spec.view) },
      }),
    }),
    defineRoute({
      method: 'post',
      path: spec.path,
      operationId: `record${spec.name}`,
      summary: spec.writeSummary,
      description: spec.description,
      tags,
      auth: 'core',
      refuseSecrets: spec.refuseSecrets,
      request: { body: spec.input },
      responses: { 201: { description: 'Recorded.', schema: spec.item } },
      handler: async ({ principal, body }) => ({ status: 201, body: spec.view(await spec.write(principal!, body as z.output<In>)) }),
    }),
  ];
}

type RowOf<K extends keyof PlatformStores> = Awaited<ReturnType<PlatformStores[K]['list']>>[number];

export function platformStoreRoutes(deps: {
  stores: PlatformStores;
  listAudit: (tenantId: string, query: AuditQuery) => ReturnType<typeof listAudit>;
  config: Pick<Config, 'env'>;
}) {
  const { stores } = deps;
  return [
    ...storeRoutes({
      path: '/v1/budgets',
      name: 'Budget',
      item: Budget,
      input: BudgetInput,
      listSummary: 'Budget policies',
      writeSummary: 'Record a budget policy (upsert by name)',
      description: 'Enforced when runs reserve (scope runs) and when chat reserves (scope chat); scope all covers both.',
      list: (tenantId) => stores.budgets.list(tenantId),
      write: (actor, b) => stores.budgets.upsert(actor, { name: b.name, scope: b.scope, period: b.period, limitCredits: b.limit_credits }),
      view: (b: RowOf<'budgets'>) => ({ name: b.name, scope: b.scope, period: b.period, limit_credits: b.limitCredits, updated_at: iso(b.updatedAt) }),
    }),
    ...storeRoutes({
      path: '/v1/routing-policies',
      name: 'RoutingPolicy',
      plural: 'RoutingPolicies',
      item: RoutingPolicy,
      input: RoutingPolicyInput,
      listSummary: 'Routing policies (a model without one uses the local adapter)',
      writeSummary: 'Record a routing policy (upsert by model)',
      description: 'Chooses the provider that serves a model alias for this tenant.',
      list: (tenantId) => stores.routing.list(tenantId),
      write: (actor, body) => stores.routing.upsert(actor, body),
      view: (r: RowOf<'routing'>) => ({ model: r.model, provider: r.provider, updated_at: iso(r.updatedAt) }),
    }),
    ...storeRoutes({
      path: '/v1/traces',
      name: 'Trace',
      item: Trace,
      input: TraceInput,
      paged: true,
      refuseSecrets: true,
      listSummary: 'Trace metadata, newest first',
      writeSummary: 'Record a metadata-only trace',
      description:
        'Span names, durations, statuses and small attributes. Names and attribute keys are identifiers, never free text. A body carrying prompt or response content is refused (code trace_content_refused); one carrying a credential or card number, anywhere, is refused (code credential_value_refused).',
      list: (tenantId, limit) => stores.traces.list(tenantId, limit),
      async write(actor, body) {
        const contentAt = contentKeyIn(body.spans);
        if (contentAt) throw errors.traceContentRefused(contentAt);
        return stores.traces.record(actor.tenantId, { name: body.name, runId: body.run_id ?? null, spans: body.spans });
      },
      view: (t: RowOf<'traces'>) => ({ id: t.id, name: t.name, run_id: t.runId, spans: t.spans as unknown[], created_at: iso(t.createdAt) }),
    }),
    ...storeRoutes({
      path: '/v1/trace-exports',
      name: 'TraceExport',
      item: TraceExport,
      input: traceExportInput(deliveryUrlRules(deps.config.env)),
      refuseSecrets: true,
      listSummary: 'Trace export connection descriptors',
      writeSummary: 'Record a trace export descriptor (upsert by name)',
      description: 'Stored without any credential value and without activating delivery.',
      list: (tenantId) => stores.traceExports.list(tenantId),
      write: (actor, body) =>
        stores.traceExports.upsert(actor, { name: body.name, kind: body.kind, endpoint: body.endpoint, credentialRef: body.credential ?? null }),
      view: (e: RowOf<'traceExports'>) => ({
        name: e.name,
        kind: e.kind,
        endpoint: e.endpoint,
        credential: e.credentialRef,
        active: false as const,
        updated_at: iso(e.updatedAt),
      }),
    }),
    ...storeRoutes({
      path: '/v1/evaluation-runs',
      name: 'EvaluationRun',
      item: EvaluationRun,
      input: EvaluationRunInput,
      paged: true,
      listSummary: 'Digest-bound evaluation run records, newest first',
      writeSummary: 'Record an evaluation run for customer or connected execution',
      list: (tenantId, limit) => stores.evaluationRuns.list(tenantId, limit),
      write(actor, body) {
        const problem = evaluationRunProblem(body);
        if (problem) throw errors.invalidRequest(problem.message, problem.param);
        return stores.evaluationRuns.create(actor.tenantId, {
          suiteId: body.suite_id,
          descriptor: body.descriptor,
          execution: body.execution,
          results: body.results,
        });
      },
      view: (r: RowOf<'evaluationRuns'>) => ({
        id: r.id,
        suite_id: r.suiteId,
        descriptor_digest: r.descriptorDigest,
        execution: r.execution,
        results: r.results,
        created_at: iso(r.createdAt),
      }),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/audit-events',
      operationId: 'listAuditEvents',
      summary: 'Bounded tenant control receipts',
      description:
        "Key, budget, routing-policy, trace-export, approval and vault-forget writes: key id, action, target, time and digest. The newest 1000 are kept. With `run_id`, one run's receipts (target `run:<run_id>`, e.g. its approval decision); `has_more` and `next_cursor` page through the rest as GET /v1/agent-runs does (extensions).",
      tags: ['platform'],
      auth: 'core',
      request: { query: EventListQuery },
      responses: {
        200: {
          description: 'Newest first.',
          schema: z.object({ object: z.literal('list'), data: z.array(AuditEvent), ...eventListPage }).meta({ id: 'AuditEventList' }),
        },
        400: {
          description: 'Invalid `limit`, `run_id` or `cursor` (code invalid_cursor for a cursor this list did not return); `param` names it.',
          schema: ErrorObject,
        },
      },
      async handler({ principal, query }) {
        const before = query.cursor === undefined ? undefined : decodeEventCursor(query.cursor);
        const target = query.run_id === undefined ? undefined : `run:${query.run_id}`;
        const page = await deps.listAudit(principal!.tenantId, { limit: query.limit, target, before });
        const last = page.rows[page.rows.length - 1];
        return {
          status: 200,
          body: {
            object: 'list',
            data: page.rows.map((a) => ({
              id: String(a.id),
              key_id: a.keyId,
              action: a.action,
              target: a.target,
              digest: a.digest,
              created_at: iso(a.createdAt),
            })),
            has_more: page.more,
            next_cursor: page.more && last ? encodeEventCursor(last) : null,
          },
        };
      },
    }),
  ];
}
