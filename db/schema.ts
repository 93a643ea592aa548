// Drizzle schema: what the API reads and lists. Temporal holds execution state;
// these tables hold projections and the records customers query.

import { sql } from 'drizzle-orm';
import { bigint, bigserial, boolean, index, integer, jsonb, pgTable, primaryKey, text, timestamp, uniqueIndex, varchar } from 'drizzle-orm/pg-core';

export const tenants = pgTable('tenants', {
  id: text('id').primaryKey(),
  name: text('name').notNull().unique(),
  /** Where the webhook_delivery tool sends run results; null means that tool is not_configured. */
  webhookUrl: text('webhook_url'),
  /**
   * The Standard Webhooks secret (`whsec_…`) that signs webhook_delivery requests; null sends them
   * unsigned. Set with the URL by `npm run tenants -- webhook set`, shown once, never logged.
   */
  webhookSecret: text('webhook_secret'),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
});

/** API keys. Only a SHA-256 hash of the secret is stored; `prefix` lets people recognise a key in listings. */
export const apiKeys = pgTable(
  'api_keys',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    kind: text('kind', { enum: ['core', 'workspace', 'approver'] }).notNull(),
    prefix: text('prefix').notNull(),
    secretHash: text('secret_hash').notNull(),
    label: text('label'),
    /** An approver key's person, as approvals and receipts name them; unique among the tenant's active approver keys. */
    name: text('name'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    revokedAt: timestamp('revoked_at', { withTimezone: true }),
  },
  (t) => [
    uniqueIndex('api_keys_secret_hash_idx').on(t.secretHash),
    index('api_keys_tenant_idx').on(t.tenantId),
    uniqueIndex('api_keys_approver_name_idx').on(t.tenantId, t.name).where(sql`${t.kind} = 'approver' and ${t.revokedAt} is null`),
  ],
);

/**
 * Approval policies (issue 64), one per tenant and scope (`tool:<name>` or `effect_class:external`):
 * `policy` is the ApprovalPolicy a run snapshots at creation. Each change is audited (services/audit.ts).
 */
export const approvalPolicies = pgTable(
  'approval_policies',
  {
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    scope: text('scope').notNull(),
    policy: jsonb('policy').notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.scope] })],
);

/**
 * Shared rate-limit counters for rate-limiter-flexible's Postgres store, so API
 * replicas share limits. The column layout is the one that library expects.
 */
export const rateLimits = pgTable('rate_limits', {
  key: varchar('key', { length: 255 }).primaryKey(),
  points: integer('points').notNull().default(0),
  expire: bigint('expire', { mode: 'number' }),
});

/**
 * The API's projection of each run (one Temporal workflow per run; workflow id = run id).
 * Activities write it as the workflow moves; the API reads and lists it.
 */
export const runs = pgTable(
  'runs',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    /** The caller's Idempotency-Key; kept with the run (never purged), so far longer than 24 h. */
    idempotencyKey: text('idempotency_key'),
    requestDigest: text('request_digest').notNull(),
    status: text('status').notNull(),
    currentStep: text('current_step'),
    input: text('input').notNull(),
    memory: boolean('memory').notNull(),
    /** The model alias the run asked for; the tenant's routing policy picks its provider at the estimate step. */
    model: text('model').notNull().default('svc-workspace'),
    estimate: jsonb('estimate'),
    reservation: jsonb('reservation'),
    usage: jsonb('usage'),
    plan: jsonb('plan'),
    approval: jsonb('approval'),
    /** The tenant's approval policies when the run was created (domain/runs/approval-policy.ts); null: one approval by anyone. */
    approvalPolicy: jsonb('approval_policy'),
    result: jsonb('result'),
    receipt: jsonb('receipt'),
    failure: jsonb('failure'),
    /** Content-free progress (RunProgress): state, steps done of total, current step, what the run waits for. */
    progress: jsonb('progress'),
    // Millisecond precision, so list cursors (which carry a JS Date) are exact.
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
    /** When the run entered its current state (a move within the same state keeps it): the time-in-state metrics. Null: created_at. */
    stateSince: timestamp('state_since', { withTimezone: true }),
    completedAt: timestamp('completed_at', { withTimezone: true }),
  },
  (t) => [
    // gws_approvals_waiting, read at each metrics scrape over all tenants.
    index('runs_awaiting_approval_idx').on(t.status).where(sql`${t.status} = 'awaiting_approval'`),
    uniqueIndex('runs_tenant_idempotency_idx').on(t.tenantId, t.idempotencyKey).where(sql`${t.idempotencyKey} is not null`),
    index('runs_tenant_created_idx').on(t.tenantId, t.createdAt, t.id),
    // The status filter, in list order.
    index('runs_tenant_status_created_idx').on(t.tenantId, t.status, t.createdAt, t.id),
    // The q search (ILIKE '%q%'): the tenant and the input's trigrams in one GIN index (btree_gin
    // and pg_trgm), so a search that matches little is answered from the index whatever the
    // tenant's history. A trigram index on the input alone lost to scanning the tenant's rows in
    // the planner's costs (27 ms at 10 000 runs, against 0.2 ms with this one). New runs go
    // through GIN's pending list, kept to its smallest (64 kB, migration 0011): merged into the
    // index in sorted batches, a run costs Postgres about 5x less than inserting its trigrams one
    // by one (fastupdate off). At the default 4 MB, the unsorted list, which every search reads,
    // made the planner pass the index over until a vacuum.
    index('runs_tenant_input_trgm_idx').using('gin', t.tenantId, sql`${t.input} gin_trgm_ops`).with({ fastupdate: true, gin_pending_list_limit: 64 }),
  ],
);

/** Credits in and out of a tenant's balance: grants (+) and charges (-). `entryKey` makes each write idempotent. */
export const ledgerEntries = pgTable(
  'ledger_entries',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    runId: text('run_id'),
    kind: text('kind', { enum: ['grant', 'charge'] }).notNull(),
    amount: bigint('amount', { mode: 'number' }).notNull(),
    entryKey: text('entry_key').notNull(),
    note: text('note'),
    /** Charges: how the usage charged was known: reported by the provider, estimated (it reported none), or both across calls. */
    usageBasis: text('usage_basis', { enum: ['reported', 'estimated', 'mixed'] }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex('ledger_entries_key_idx').on(t.entryKey), index('ledger_entries_tenant_idx').on(t.tenantId, t.createdAt)],
);

/** Reservations: one hold per run and step, so a retried reserve cannot double it. */
export const ledgerHolds = pgTable(
  'ledger_holds',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    runId: text('run_id').notNull(),
    step: text('step').notNull(),
    amount: bigint('amount', { mode: 'number' }).notNull(),
    status: text('status', { enum: ['open', 'settled', 'released'] }).notNull(),
    chargedAmount: bigint('charged_amount', { mode: 'number' }),
    releasedAmount: bigint('released_amount', { mode: 'number' }),
    /** Chat holds: the API instance that holds it (service_instances.id); a sweeper releases it when that instance is gone. */
    owner: text('owner'),
    /** Set when something other than the holder closed it (the sweeper), for the audit trail. */
    closedBy: text('closed_by'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    closedAt: timestamp('closed_at', { withTimezone: true }),
  },
  (t) => [uniqueIndex('ledger_holds_run_step_idx').on(t.runId, t.step), index('ledger_holds_tenant_idx').on(t.tenantId, t.status)],
);

/**
 * Each tenant's running balance (grants - charges) and open holds, kept in the
 * same transaction as every ledger entry and hold write, so reading or reserving
 * never sums the tenant's whole history. A reserve is one conditional update.
 */
export const tenantBalances = pgTable('tenant_balances', {
  tenantId: text('tenant_id')
    .primaryKey()
    .references(() => tenants.id),
  balance: bigint('balance', { mode: 'number' }).notNull().default(0),
  held: bigint('held', { mode: 'number' }).notNull().default(0),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});

/**
 * Every model call a run made, with the usage the provider reported (or the
 * byte-count estimate when it reported none). Unique per run and call, so an
 * activity retry never charges twice. Numbers only, no content.
 */
export const runModelCalls = pgTable(
  'run_model_calls',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    runId: text('run_id').notNull(),
    callKey: text('call_key').notNull(),
    model: text('model').notNull(),
    promptTokens: integer('prompt_tokens').notNull(),
    completionTokens: integer('completion_tokens').notNull(),
    /** The call's cost rounded up to whole credits (informational; the run is charged from costMicro). */
    credits: integer('credits').notNull(),
    /** The exact cost in millionths of a credit; a run's charge rounds the sum of these up once, at settle. */
    costMicro: bigint('cost_micro', { mode: 'number' }).notNull().default(0),
    /** reported: the provider's usage; estimated: it reported none, so the byte-count estimate. */
    usageBasis: text('usage_basis', { enum: ['reported', 'estimated'] })
      .notNull()
      .default('reported'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex('run_model_calls_run_call_idx').on(t.runId, t.callKey)],
);

/**
 * Live API processes, each with a lease it renews while it runs. A chat hold names its instance
 * (ledger_holds.owner); once the lease has lapsed, the process is gone and the sweeper releases its holds.
 */
export const serviceInstances = pgTable('service_instances', {
  id: text('id').primaryKey(),
  startedAt: timestamp('started_at', { withTimezone: true }).notNull().defaultNow(),
  leaseUntil: timestamp('lease_until', { withTimezone: true }).notNull(),
});

/** Content-free lifecycle history: kind, run, state and time, never input or output text. */
export const journeyEvents = pgTable(
  'journey_events',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    runId: text('run_id'),
    kind: text('kind').notNull(),
    state: text('state'),
    /** Content-free progress at this event (RunProgress); null for events before progress was recorded. */
    progress: jsonb('progress'),
    /** Makes a retried activity's write a no-op. */
    eventKey: text('event_key').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('journey_events_key_idx').on(t.eventKey),
    index('journey_events_tenant_idx').on(t.tenantId, t.id),
    // One run's events in order: the run_id filter and the run's event stream.
    index('journey_events_run_idx').on(t.runId, t.id),
    // The retention purge at each run's end: the tenant's events older than the window.
    index('journey_events_tenant_created_idx').on(t.tenantId, t.createdAt),
  ],
);

/**
 * The customer vault (the tenant's memory store). Runs with memory: true recall
 * from it and remember into it. `subject` and `content` are the current
 * version; forgetting nulls them and leaves a content-free tombstone (state
 * forgotten, digest kept). `digest` covers the current version's fields.
 */
export const memoryEntries = pgTable(
  'memory_entries',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    subject: text('subject'),
    content: text('content'),
    tags: jsonb('tags').$type<string[]>().notNull().default([]),
    source: text('source').notNull(),
    state: text('state', { enum: ['active', 'quarantined', 'forgotten'] })
      .notNull()
      .default('active'),
    version: integer('version').notNull().default(1),
    digest: text('digest').notNull().default(''),
    expiresAt: timestamp('expires_at', { withTimezone: true, precision: 3 }),
    quarantineReason: text('quarantine_reason'),
    /** Write key: a retried remember activity writes one entry. */
    entryKey: text('entry_key'),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
    forgottenAt: timestamp('forgotten_at', { withTimezone: true }),
  },
  (t) => [
    uniqueIndex('memory_entries_key_idx').on(t.entryKey),
    index('memory_entries_tenant_idx').on(t.tenantId, t.createdAt, t.id),
    index('memory_entries_search_idx').using('gin', sql`to_tsvector('english', coalesce(${t.subject}, '') || ' ' || coalesce(${t.content}, ''))`),
  ],
);

/** Every version an entry had; a correction adds one. Forgetting nulls their text too. */
export const memoryEntryVersions = pgTable(
  'memory_entry_versions',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    entryId: text('entry_id')
      .notNull()
      .references(() => memoryEntries.id),
    tenantId: text('tenant_id').notNull(),
    version: integer('version').notNull(),
    subject: text('subject'),
    content: text('content'),
    digest: text('digest').notNull(),
    reason: text('reason'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex('memory_entry_versions_entry_version_idx').on(t.entryId, t.version)],
);

/**
 * Per-tenant hash chain over every vault write (content-free: ids, actions,
 * digests). The integrity check replays it to spot entries changed or deleted
 * behind the service's back.
 */
export const vaultChain = pgTable(
  'vault_chain',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    seq: integer('seq').notNull(),
    entryId: text('entry_id').notNull(),
    action: text('action').notNull(),
    entryDigest: text('entry_digest').notNull(),
    prevHash: text('prev_hash').notNull(),
    hash: text('hash').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex('vault_chain_tenant_seq_idx').on(t.tenantId, t.seq)],
);

/** Which provider serves a model alias for a tenant (absent: the local account-free adapter). */
export const routingPolicies = pgTable(
  'routing_policies',
  {
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    model: text('model').notNull(),
    provider: text('provider').notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex('routing_policies_tenant_model_idx').on(t.tenantId, t.model)],
);

/** Spending limits per tenant; enforced when runs reserve and when chat reserves. */
export const budgets = pgTable(
  'budgets',
  {
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    name: text('name').notNull(),
    scope: text('scope', { enum: ['runs', 'chat', 'all'] }).notNull(),
    period: text('period', { enum: ['day', 'month', 'total'] }).notNull(),
    limitCredits: bigint('limit_credits', { mode: 'number' }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex('budgets_tenant_name_idx').on(t.tenantId, t.name)],
);

/** Privacy-preserving trace metadata: names, timings, statuses and bounded attributes, never content. */
export const traces = pgTable(
  'traces',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    name: text('name').notNull(),
    runId: text('run_id'),
    spans: jsonb('spans').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
  },
  (t) => [index('traces_tenant_idx').on(t.tenantId, t.createdAt)],
);

/** Trace export connection descriptors: a credential reference, never a value; never activated here. */
export const traceExports = pgTable(
  'trace_exports',
  {
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    name: text('name').notNull(),
    kind: text('kind').notNull(),
    endpoint: text('endpoint').notNull(),
    credentialRef: text('credential_ref'),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex('trace_exports_tenant_name_idx').on(t.tenantId, t.name)],
);

/** Evaluation run records, bound to the digest of the descriptor they ran. */
export const evaluationRuns = pgTable(
  'evaluation_runs',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    suiteId: text('suite_id').notNull(),
    descriptorDigest: text('descriptor_digest').notNull(),
    execution: text('execution').notNull(),
    results: jsonb('results').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
  },
  (t) => [index('evaluation_runs_tenant_idx').on(t.tenantId, t.createdAt)],
);

/** Content-free receipts of control writes: who (key id), what (action), on what (target), when, and a digest of what was written. */
export const auditEvents = pgTable(
  'audit_events',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    keyId: text('key_id'),
    action: text('action').notNull(),
    target: text('target').notNull(),
    digest: text('digest').notNull(),
    /**
     * Set for writes that must be recorded once however often they are retried (an approval: run id and
     * the decision's Update id, which an Idempotency-Key fixes); null for the others.
     */
    eventKey: text('event_key'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index('audit_events_tenant_idx').on(t.tenantId, t.id),
    uniqueIndex('audit_events_event_key_idx').on(t.eventKey),
    // The run_id filter: a run's events are those whose target is run:<id>.
    index('audit_events_target_idx').on(t.tenantId, t.target, t.id),
  ],
);

/**
 * A tenant's completion-notification endpoints (Standard Webhooks). The signing secret
 * (whsec_…) is shown once at creation and kept to sign deliveries.
 */
export const webhookEndpoints = pgTable(
  'webhook_endpoints',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    url: text('url').notNull(),
    /** Event types delivered: run.awaiting_approval, run.completed, run.failed, run.needs_attention. */
    events: jsonb('events').$type<string[]>().notNull(),
    secret: text('secret').notNull(),
    description: text('description'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    /** Set when the endpoint is deleted; no delivery is made to it afterwards. */
    deletedAt: timestamp('deleted_at', { withTimezone: true }),
  },
  (t) => [index('webhook_endpoints_tenant_idx').on(t.tenantId, t.createdAt)],
);

/**
 * One notification to one endpoint: its webhook-id (the same on every retry), the outcome of
 * its last attempt. Content-free: ids, event type, status codes.
 */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    endpointId: text('endpoint_id')
      .notNull()
      .references(() => webhookEndpoints.id),
    runId: text('run_id').notNull(),
    eventType: text('event_type').notNull(),
    status: text('status', { enum: ['pending', 'delivered', 'failed'] }).notNull(),
    attempts: integer('attempts').notNull().default(0),
    lastStatusCode: integer('last_status_code'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('webhook_deliveries_run_idx').on(t.tenantId, t.runId)],
);

/**
 * Every call of a server tool (MCP), one row per run, step and argument digest: an external call is
 * recorded `started` before it is sent and `done` (with its result) after, so a retry that finds
 * `started` and no `done` knows the effect may have happened and does not call again. The result
 * (content-bearing) stays in this table; receipts and journey events carry only its digest.
 */
export const toolCalls = pgTable(
  'tool_calls',
  {
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    runId: text('run_id').notNull(),
    stepId: text('step_id').notNull(),
    argsDigest: text('args_digest').notNull(),
    tool: text('tool').notNull(),
    effect: text('effect', { enum: ['read', 'external'] }).notNull(),
    status: text('status', { enum: ['started', 'done'] }).notNull(),
    isError: boolean('is_error'),
    result: jsonb('result'),
    resultDigest: text('result_digest'),
    startedAt: timestamp('started_at', { withTimezone: true }).notNull().defaultNow(),
    doneAt: timestamp('done_at', { withTimezone: true }),
  },
  (t) => [uniqueIndex('tool_calls_call_idx').on(t.runId, t.stepId, t.argsDigest), index('tool_calls_tenant_idx').on(t.tenantId)],
);

export const schema = {
  tenants,
  apiKeys,
  approvalPolicies,
  rateLimits,
  runs,
  ledgerEntries,
  ledgerHolds,
  serviceInstances,
  journeyEvents,
  memoryEntries,
  memoryEntryVersions,
  vaultChain,
  routingPolicies,
  budgets,
  traces,
  traceExports,
  evaluationRuns,
  auditEvents,
  webhookEndpoints,
  webhookDeliveries,
  toolCalls,
};
