// Tenant-scoped stores of the platform surfaces: budgets, routing policies,
// traces (metadata only), trace-export descriptors (references only, never
// activated) and evaluation run records. Control writes leave audit receipts.
import { and, desc, eq } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { evaluationRuns, routingPolicies, traceExports, traces } from '../../db/schema.ts';
import { digestOf } from '../../domain/digest.ts';
import { errors } from '../../domain/errors.ts';
import { newId } from '../../domain/ids.ts';
import { recordAudit } from '../audit.ts';
import { type BudgetRow, listBudgets, upsertBudget } from '../budgets.ts';
import { assertProviderConfigured, setRoute } from '../routing.ts';
import { getRun } from '../runs.ts';

export interface Actor {
  tenantId: string;
  keyId: string;
}

export interface PlatformStoreOptions {
  /** Providers this deployment has configured: a routing policy naming another is refused (400 provider_not_configured). */
  configuredProviders: readonly string[];
}

export function platformStores(db: Db, options: PlatformStoreOptions) {
  return {
    budgets: {
      list: (tenantId: string) => listBudgets(db, tenantId),
      async upsert(actor: Actor, b: Pick<BudgetRow, 'name' | 'scope' | 'period' | 'limitCredits'>) {
        const row = await upsertBudget(db, actor.tenantId, b);
        await recordAudit(db, { ...actor, action: 'budget.upsert', target: `budget:${b.name}`, subject: b });
        return row;
      },
    },
    routing: {
      list: (tenantId: string) => db.select().from(routingPolicies).where(eq(routingPolicies.tenantId, tenantId)).orderBy(routingPolicies.model),
      async upsert(actor: Actor, policy: { model: string; provider: string }) {
        assertProviderConfigured(policy.provider, options.configuredProviders);
        await setRoute(db, actor.tenantId, policy.model, policy.provider);
        await recordAudit(db, { ...actor, action: 'routing_policy.upsert', target: `model:${policy.model}`, subject: policy });
        const [row] = await db
          .select()
          .from(routingPolicies)
          .where(and(eq(routingPolicies.tenantId, actor.tenantId), eq(routingPolicies.model, policy.model)));
        return row!;
      },
    },
    traces: {
      list: (tenantId: string, limit: number) => db.select().from(traces).where(eq(traces.tenantId, tenantId)).orderBy(desc(traces.createdAt)).limit(limit),
      async record(tenantId: string, t: { name: string; runId: string | null; spans: unknown[] }) {
        // A trace may name only a run of its own tenant.
        if (t.runId && !(await getRun(db, tenantId, t.runId))) throw errors.invalidRequest('run_id names no run of your tenant.', 'run_id');
        const [row] = await db
          .insert(traces)
          .values({ id: newId('trace'), tenantId, name: t.name, runId: t.runId, spans: t.spans })
          .returning();
        return row!;
      },
    },
    traceExports: {
      list: (tenantId: string) => db.select().from(traceExports).where(eq(traceExports.tenantId, tenantId)).orderBy(traceExports.name),
      async upsert(actor: Actor, d: { name: string; kind: string; endpoint: string; credentialRef: string | null }) {
        const [row] = await db
          .insert(traceExports)
          .values({ tenantId: actor.tenantId, ...d })
          .onConflictDoUpdate({
            target: [traceExports.tenantId, traceExports.name],
            set: { kind: d.kind, endpoint: d.endpoint, credentialRef: d.credentialRef, updatedAt: new Date() },
          })
          .returning();
        await recordAudit(db, { ...actor, action: 'trace_export.upsert', target: `trace_export:${d.name}`, subject: d });
        return row!;
      },
    },
    evaluationRuns: {
      list: (tenantId: string, limit: number) =>
        db.select().from(evaluationRuns).where(eq(evaluationRuns.tenantId, tenantId)).orderBy(desc(evaluationRuns.createdAt)).limit(limit),
      async create(tenantId: string, r: { suiteId: string; descriptor: unknown; execution: string; results: unknown }) {
        const [row] = await db
          .insert(evaluationRuns)
          .values({ id: newId('evalrun'), tenantId, suiteId: r.suiteId, descriptorDigest: digestOf(r.descriptor), execution: r.execution, results: r.results })
          .returning();
        return row!;
      },
    },
  };
}

export type PlatformStores = ReturnType<typeof platformStores>;
