// Webhook endpoints for completion notifications, and the log of their deliveries.
// An endpoint's secret is generated here, returned once (by create) and then only
// used to sign; listings show a hint. Deliveries are content-free: ids, event
// type, attempt count and the last HTTP status.
import { randomBytes } from 'node:crypto';
import { and, asc, count, desc, eq, isNull, sql } from 'drizzle-orm';
import type { Db } from '../db/client.ts';
import { journeyEvents, tenants, webhookDeliveries, webhookEndpoints } from '../db/schema.ts';
import { sha256Hex } from '../domain/digest.ts';
import { errors } from '../domain/errors.ts';
import { newId } from '../domain/ids.ts';
import { MAX_WEBHOOK_ENDPOINTS } from '../domain/notifications.ts';
import type { NotificationEvent } from '../domain/runs/progress.ts';
import { recordAudit } from './audit.ts';

export type WebhookEndpointRow = typeof webhookEndpoints.$inferSelect;
export type WebhookDeliveryRow = typeof webhookDeliveries.$inferSelect;

export interface WebhookActor {
  tenantId: string;
  /** The API key that made the change; null for the operator CLI. */
  keyId: string | null;
}

export interface NewWebhookEndpoint {
  url: string;
  events: NotificationEvent[];
  description: string | null;
}

/** A Standard Webhooks secret: `whsec_` and the base64 of 24 random bytes (192 bits, as Svix issues them). */
export function generateWebhookSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

/** What listings show of a secret: its prefix and last four characters. */
export function secretHint(secret: string): string {
  return `whsec_…${secret.slice(-4)}`;
}

/** The webhook-id of a run's notification: the same for every attempt and every endpoint. */
export function webhookIdFor(runId: string, event: NotificationEvent, round?: number): string {
  // A tool-calling run's later approval rounds are notifications of their own, so a receiver that
  // drops repeated ids does not drop the second run.awaiting_approval.
  const of = round && round > 1 ? `${runId}:${event}:${round}` : `${runId}:${event}`;
  return `msg_${sha256Hex(of).slice(0, 32)}`;
}

/** One delivery is one notification (webhook-id) to one endpoint. */
export function deliveryIdFor(webhookId: string, endpointId: string): string {
  return `${webhookId}:${endpointId}`;
}

type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];

/** Creates an endpoint (at most MAX_WEBHOOK_ENDPOINTS live per tenant, else 409) and audits it; the row carries the secret. */
export async function createWebhookEndpoint(db: Db, actor: WebhookActor, input: NewWebhookEndpoint): Promise<WebhookEndpointRow> {
  const row = await db.transaction(async (tx: Tx) => {
    // One create at a time per tenant, so two concurrent ones cannot both take the last place.
    await tx.select({ id: tenants.id }).from(tenants).where(eq(tenants.id, actor.tenantId)).for('update');
    const [live] = await tx
      .select({ n: count() })
      .from(webhookEndpoints)
      .where(and(eq(webhookEndpoints.tenantId, actor.tenantId), isNull(webhookEndpoints.deletedAt)));
    if ((live?.n ?? 0) >= MAX_WEBHOOK_ENDPOINTS) throw errors.webhookEndpointLimitReached(MAX_WEBHOOK_ENDPOINTS);
    const [created] = await tx
      .insert(webhookEndpoints)
      .values({
        id: newId('we'),
        tenantId: actor.tenantId,
        url: input.url,
        events: [...input.events],
        secret: generateWebhookSecret(),
        description: input.description,
      })
      .returning();
    // The receipt's digest covers what was configured, never the secret.
    await recordAudit(tx as unknown as Db, {
      ...actor,
      action: 'webhook_endpoint.create',
      target: `webhook_endpoint:${created!.id}`,
      subject: { url: input.url, events: input.events, description: input.description },
    });
    return created!;
  });
  return row;
}

/** The tenant's live endpoints, newest first. */
export function listWebhookEndpoints(db: Db, tenantId: string): Promise<WebhookEndpointRow[]> {
  return db
    .select()
    .from(webhookEndpoints)
    .where(and(eq(webhookEndpoints.tenantId, tenantId), isNull(webhookEndpoints.deletedAt)))
    .orderBy(desc(webhookEndpoints.createdAt), desc(webhookEndpoints.id));
}

/** A live endpoint of this tenant, or null (unknown, another tenant's, or deleted). */
export async function getWebhookEndpoint(db: Db, tenantId: string, endpointId: string): Promise<WebhookEndpointRow | null> {
  const [row] = await db
    .select()
    .from(webhookEndpoints)
    .where(and(eq(webhookEndpoints.id, endpointId), eq(webhookEndpoints.tenantId, tenantId), isNull(webhookEndpoints.deletedAt)));
  return row ?? null;
}

/** Soft-deletes a live endpoint and audits it; null when there is none (nothing changed). No delivery is made to it afterwards. */
export async function deleteWebhookEndpoint(db: Db, actor: WebhookActor, endpointId: string): Promise<WebhookEndpointRow | null> {
  return db.transaction(async (tx: Tx) => {
    const [row] = await tx
      .update(webhookEndpoints)
      .set({ deletedAt: new Date() })
      .where(and(eq(webhookEndpoints.id, endpointId), eq(webhookEndpoints.tenantId, actor.tenantId), isNull(webhookEndpoints.deletedAt)))
      .returning();
    if (!row) return null;
    await recordAudit(tx as unknown as Db, { ...actor, action: 'webhook_endpoint.delete', target: `webhook_endpoint:${row.id}`, subject: { id: row.id } });
    return row;
  });
}

/** An endpoint's deliveries, most recently attempted first. */
export function listWebhookDeliveries(db: Db, tenantId: string, endpointId: string, limit: number): Promise<WebhookDeliveryRow[]> {
  return db
    .select()
    .from(webhookDeliveries)
    .where(and(eq(webhookDeliveries.tenantId, tenantId), eq(webhookDeliveries.endpointId, endpointId)))
    .orderBy(desc(webhookDeliveries.updatedAt), desc(webhookDeliveries.id))
    .limit(limit);
}

/** Ids of the tenant's live endpoints subscribed to `event`, oldest first. */
export async function subscribedEndpointIds(db: Db, tenantId: string, event: NotificationEvent): Promise<string[]> {
  const rows = await db
    .select({ id: webhookEndpoints.id })
    .from(webhookEndpoints)
    .where(
      and(eq(webhookEndpoints.tenantId, tenantId), isNull(webhookEndpoints.deletedAt), sql`${webhookEndpoints.events} @> ${JSON.stringify([event])}::jsonb`),
    )
    .orderBy(asc(webhookEndpoints.createdAt), asc(webhookEndpoints.id));
  return rows.map((r) => r.id);
}

/** The endpoint a delivery goes to, deleted or not (the caller decides), or null. */
export async function endpointForDelivery(db: Db, tenantId: string, endpointId: string): Promise<WebhookEndpointRow | null> {
  const [row] = await db
    .select()
    .from(webhookEndpoints)
    .where(and(eq(webhookEndpoints.id, endpointId), eq(webhookEndpoints.tenantId, tenantId)));
  return row ?? null;
}

export async function findDelivery(db: Db, deliveryId: string): Promise<WebhookDeliveryRow | null> {
  const [row] = await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, deliveryId));
  return row ?? null;
}

/**
 * Records that attempt `attempt` of a delivery is being made (upsert: the first attempt creates the
 * row). The count never goes back, and a delivered row stays delivered. Returns the row.
 */
export async function beginDeliveryAttempt(
  db: Db,
  d: { id: string; tenantId: string; endpointId: string; runId: string; eventType: NotificationEvent; attempt: number },
): Promise<WebhookDeliveryRow> {
  const [row] = await db
    .insert(webhookDeliveries)
    .values({ id: d.id, tenantId: d.tenantId, endpointId: d.endpointId, runId: d.runId, eventType: d.eventType, status: 'pending', attempts: d.attempt })
    .onConflictDoUpdate({
      target: webhookDeliveries.id,
      set: {
        attempts: sql`greatest(${webhookDeliveries.attempts}, ${d.attempt})`,
        status: sql`case when ${webhookDeliveries.status} = 'delivered' then 'delivered' else 'pending' end`,
        updatedAt: sql`now()`,
      },
    })
    .returning();
  return row!;
}

/** The outcome of the attempt: its HTTP status (null: no answer) and the delivery's status. Never undoes a delivered row. */
export async function finishDeliveryAttempt(
  db: Db,
  deliveryId: string,
  outcome: { status: 'pending' | 'delivered' | 'failed'; statusCode: number | null },
): Promise<void> {
  await db
    .update(webhookDeliveries)
    .set({ status: outcome.status, lastStatusCode: outcome.statusCode, updatedAt: sql`now()` })
    .where(and(eq(webhookDeliveries.id, deliveryId), sql`${webhookDeliveries.status} <> 'delivered'`));
}

/** When the run entered `state` (its first journey event in that state), or null when that event is gone (retention). */
export async function enteredStateAt(db: Db, tenantId: string, runId: string, state: string): Promise<Date | null> {
  const [row] = await db
    .select({ at: journeyEvents.createdAt })
    .from(journeyEvents)
    .where(and(eq(journeyEvents.tenantId, tenantId), eq(journeyEvents.runId, runId), eq(journeyEvents.state, state)))
    .orderBy(asc(journeyEvents.id))
    .limit(1);
  return row?.at ?? null;
}

/** A tenant by name, never creating one (unlike ensureTenant): the webhook commands refuse unknown names. */
export async function tenantByName(db: Db, name: string): Promise<{ id: string; name: string } | null> {
  const [row] = await db.select({ id: tenants.id, name: tenants.name }).from(tenants).where(eq(tenants.name, name));
  return row ?? null;
}

/** What the API's webhook-endpoint routes use, bound to a database. */
export function webhookEndpointService(db: Db) {
  return {
    create: (actor: WebhookActor, input: NewWebhookEndpoint) => createWebhookEndpoint(db, actor, input),
    list: (tenantId: string) => listWebhookEndpoints(db, tenantId),
    get: (tenantId: string, endpointId: string) => getWebhookEndpoint(db, tenantId, endpointId),
    remove: (actor: WebhookActor, endpointId: string) => deleteWebhookEndpoint(db, actor, endpointId),
    deliveries: (tenantId: string, endpointId: string, limit: number) => listWebhookDeliveries(db, tenantId, endpointId, limit),
  };
}
export type WebhookEndpointService = ReturnType<typeof webhookEndpointService>;
