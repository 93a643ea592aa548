// The bench's data: migrations, tenants with their API keys and credits, and
// bulk rows written straight into Postgres with generate_series (runs, journey
// events, ledger entries) in the shapes the service writes.
import { digestOf } from '../../domain/digest.ts';
import { type Db, openPostgres } from '../../db/client.ts';
import { createKey } from '../../services/keys.ts';
import { grantCredits } from '../../services/ledger.ts';
import { POOL_SIZE } from './processes.ts';

export const RUN_INPUT = 'Review the supplier contracts for renewal risk; then list the three largest obligations.';

export interface SeededTenant {
  name: string;
  tenantId: string;
  /** A core key's secret: creates and reads runs. */
  secret: string;
  /** An approver key's secret, of the same tenant: decides approvals (a core key cannot). */
  approverSecret: string;
  /** A run of this tenant (for GET /v1/agent-runs/{id}); null when none was seeded. */
  sampleRunId: string | null;
}

export interface Seed {
  /** Creates runs (no worker runs them). */
  creator: SeededTenant;
  /** 100 runs (2 journey events each). */
  small: SeededTenant;
  /** 10 000 runs, same shapes. */
  large: SeededTenant;
  /** ~12 000 ledger entries: chat reserves and settles against a long ledger. */
  chatter: SeededTenant;
}

/** A tenant with a core key, an approver key and credits no bench phase can spend. */
export async function benchTenant(db: Db, name: string): Promise<SeededTenant> {
  const key = await createKey(db, { tenant: name, kind: 'core' });
  const approver = await createKey(db, { tenantId: key.tenantId, kind: 'approver', name: 'Bench Approver' });
  await grantCredits(db, { tenantId: key.tenantId, amount: 1_000_000_000_000, entryKey: `${name}-grant` });
  return { name, tenantId: key.tenantId, secret: key.secret, approverSecret: approver.secret, sampleRunId: null };
}

export async function seed(databaseUrl: string, sizes = { small: 100, large: 10_000, ledger: 12_000 }): Promise<Seed> {
  const database = openPostgres(databaseUrl, POOL_SIZE);
  try {
    await database.migrate();
    const db = database.db;
    const tenant = (name: string) => benchTenant(db, name);
    const creator = await tenant('bench-creator');
    const small = await tenant('bench-small');
    const large = await tenant('bench-large');
    const chatter = await tenant('bench-chatter');
    const digest = digestOf({ input: RUN_INPUT, memory: false, model: 'svc-workspace' });
    for (const [t, n] of [
      [small, sizes.small],
      [large, sizes.large],
    ] as const) {
      // Statuses cycle completed, needs_attention, failed, executing; created a second apart, newest last.
      // None is accepted at its estimate: such a row without a workflow is a run whose start was lost,
      // which the worker's reconciler repairs (activities/reconcile.ts), 200 a minute, on Temporal and
      // Postgres, during whatever the bench then measures.
      await database.pool!.query(
        `insert into runs (id, tenant_id, request_digest, status, current_step, input, memory, model, progress, created_at, updated_at, completed_at)
         select 'run_' || md5($1 || i::text)::varchar(24), $1, $2,
                (array['completed','needs_attention','failed','executing'])[1 + i % 4],
                case when i % 4 = 3 then 'execute' end,
                $3 || ' (#' || i || ')', false, 'svc-workspace',
                jsonb_build_object('state', (array['completed','needs_attention','failed','executing'])[1 + i % 4], 'steps_done', 2, 'steps_total', 2,
                                   'current_step', null, 'current_plan_step', null, 'waiting_for', null),
                now() - make_interval(secs => $4 - i), now() - make_interval(secs => $4 - i),
                case when i % 4 <> 3 then now() - make_interval(secs => $4 - i) end
         from generate_series(1, $4::int) as i`,
        [t.tenantId, digest, RUN_INPUT, n],
      );
      await database.pool!.query(
        `insert into journey_events (tenant_id, run_id, kind, state, progress, event_key, created_at)
         select r.tenant_id, r.id, k.kind, r.status, r.progress, r.id || ':' || k.kind, r.created_at + make_interval(secs => k.o)
         from runs r cross join (values ('run.step_finished', 0), ('run.' || 'completed', 0.5)) as k(kind, o)
         where r.tenant_id = $1 order by r.created_at, k.o`,
        [t.tenantId],
      );
      const { rows } = await database.pool!.query<{ id: string }>('select id from runs where tenant_id = $1 order by created_at desc limit 1', [t.tenantId]);
      t.sampleRunId = rows[0]!.id;
    }
    // Grant and charge pairs that net to zero, so the tenant's balance is its grant however it is computed.
    await database.pool!.query(
      `insert into ledger_entries (tenant_id, run_id, kind, amount, entry_key, note, created_at)
       select $1, null, case when i % 2 = 0 then 'grant' else 'charge' end, case when i % 2 = 0 then 1 else -1 end * (1 + (i / 2) % 7),
              'bench-chat-' || i, 'chat', now() - make_interval(secs => $2 - i)
       from generate_series(1, $2::int) as i`,
      [chatter.tenantId, sizes.ledger],
    );
    await database.pool!.query('analyze');
    return { creator, small, large, chatter };
  } finally {
    await database.close();
  }
}
