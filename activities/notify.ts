// Completion notifications: one Standard Webhooks delivery per subscribed endpoint
// (docs/runs.md, "Completion notifications"). The workflow asks notificationTargets for
// the endpoints, then runs one deliverNotification per endpoint with
// NOTIFICATION_RETRY. Every attempt of a notification carries the same webhook-id
// (derived from run and event, so it is the same for every endpoint too), a fresh
// webhook-timestamp and a signature over both and the body. The body names the
// run, the event's state and URLs, never the run's input, output or reasons.
import { ApplicationFailure, Context } from '@temporalio/activity';
import { and, eq } from 'drizzle-orm';
import { Webhook } from 'standardwebhooks';
import type { Db } from '../db/client.ts';
import { runs } from '../db/schema.ts';
import { NOTIFICATION_MAX_ATTEMPTS } from '../domain/notifications.ts';
import type { DeliveryUrlRules } from '../domain/delivery-url.ts';
import { deliveryFetch, isDeliveryRefused, type ResolveAll } from '../services/delivery-fetch.ts';
import type { NotificationEvent } from '../domain/runs/progress.ts';
import { approvalsRequired } from '../domain/runs/approval-votes.ts';
import type { ApprovalRecord } from '../domain/runs/run-types.ts';
import {
  beginDeliveryAttempt,
  deliveryIdFor,
  endpointForDelivery,
  enteredStateAt,
  findDelivery,
  finishDeliveryAttempt,
  subscribedEndpointIds,
  webhookIdFor,
} from '../services/webhook-endpoints.ts';

// The retry policy lives in a pure module: import it from there in workflow code.
export { NOTIFICATION_RETRY } from '../domain/notifications.ts';

export interface NotificationTargetsInput {
  tenantId: string;
  event: NotificationEvent;
}

export interface DeliverNotificationInput {
  tenantId: string;
  runId: string;
  endpointId: string;
  event: NotificationEvent;
  /** A tool-calling run's approval round, from 1 (absent: the first, or the only one). */
  round?: number;
}

/** The JSON body of a notification (Standard Webhooks payload structure). Content-free by construction. */
export interface NotificationPayload {
  type: NotificationEvent;
  /** When the run entered the event's state (ISO 8601); the same on every attempt. */
  timestamp: string;
  data: {
    object: 'agent_run_event';
    run_id: string;
    tenant_id: string;
    state: string;
    status_url: string;
    events_url: string;
    /** run.awaiting_approval only: distinct approvals the round needs (its policy; 1 unless a policy says more). */
    approvals_needed?: number;
  };
}

/** Failure type of a notification that cannot be sent at all (its run or endpoint does not exist); never retried. */
export const NOTIFICATION_UNDELIVERABLE = 'NotificationUndeliverable';
/** Failure type of an attempt that got no 2xx answer; retried with the same webhook-id. */
export const NOTIFICATION_ATTEMPT_FAILED = 'NotificationAttemptFailed';

const DEFAULT_TIMEOUT_MS = 10_000;
const USER_AGENT = 'GovernedWorkspace-Webhooks/1';

/** The state an event reports: run.needs_attention -> needs_attention. */
export function stateOf(event: NotificationEvent): string {
  return event.slice('run.'.length);
}

export function notificationPayload(input: {
  event: NotificationEvent;
  runId: string;
  tenantId: string;
  occurredAt: Date;
  publicBaseUrl?: string;
  /** The round's approval record, for run.awaiting_approval. */
  approval?: ApprovalRecord | null;
}): NotificationPayload {
  const base = (input.publicBaseUrl ?? '').replace(/\/+$/, '');
  const statusUrl = `${base}/v1/agent-runs/${input.runId}`;
  return {
    type: input.event,
    timestamp: input.occurredAt.toISOString(),
    data: {
      object: 'agent_run_event',
      run_id: input.runId,
      tenant_id: input.tenantId,
      state: stateOf(input.event),
      status_url: statusUrl,
      events_url: `${statusUrl}/events`,
      ...(input.event === 'run.awaiting_approval' && input.approval ? { approvals_needed: approvalsRequired(input.approval) } : {}),
    },
  };
}

/** The current activity's context, or null when called outside one (tests, scripts): then it is a first attempt. */
function activityContext(): Context | null {
  try {
    return Context.current();
  } catch {
    return null;
  }
}

export function notificationActivities(deps: {
  db: Db;
  publicBaseUrl?: string;
  webhookTimeoutMs?: number;
  deliveryRules: DeliveryUrlRules;
  resolveAll?: ResolveAll;
}) {
  const { db } = deps;
  const send = deliveryFetch(deps.deliveryRules, deps.resolveAll);
  const timeoutMs = deps.webhookTimeoutMs ?? DEFAULT_TIMEOUT_MS;
  return {
    /** Ids of the tenant's live endpoints subscribed to `event`. */
    async notificationTargets(input: NotificationTargetsInput): Promise<string[]> {
      return subscribedEndpointIds(db, input.tenantId, input.event);
    },

    /**
     * Sends one signed notification and records the attempt; throws on a non-2xx answer or a network
     * error so Temporal retries with the same webhook-id. On attempt NOTIFICATION_MAX_ATTEMPTS the
     * delivery is recorded failed and the failure is non-retryable. Returns the HTTP status, or
     * `{ status: 0 }` when nothing was sent because the endpoint was deleted.
     */
    async deliverNotification(input: DeliverNotificationInput): Promise<{ status: number }> {
      const ctx = activityContext();
      const attempt = ctx?.info.attempt ?? 1;
      const final = attempt >= NOTIFICATION_MAX_ATTEMPTS;
      const webhookId = webhookIdFor(input.runId, input.event, input.round);
      const deliveryId = deliveryIdFor(webhookId, input.endpointId);

      const endpoint = await endpointForDelivery(db, input.tenantId, input.endpointId);
      if (!endpoint) throw ApplicationFailure.nonRetryable(`No webhook endpoint ${input.endpointId} for this tenant.`, NOTIFICATION_UNDELIVERABLE);
      const [run] = await db
        .select({ id: runs.id, approval: runs.approval })
        .from(runs)
        .where(and(eq(runs.id, input.runId), eq(runs.tenantId, input.tenantId)));
      if (!run) throw ApplicationFailure.nonRetryable(`No run ${input.runId} for this tenant.`, NOTIFICATION_UNDELIVERABLE);

      const earlier = await findDelivery(db, deliveryId);
      // Delivered by an attempt whose completion Temporal never heard of: do not send it twice.
      if (earlier?.status === 'delivered') return { status: earlier.lastStatusCode ?? 200 };
      if (endpoint.deletedAt) {
        // Deleted while this notification was pending: stop; a delivery already begun is closed as failed.
        if (earlier) await finishDeliveryAttempt(db, deliveryId, { status: 'failed', statusCode: earlier.lastStatusCode });
        return { status: 0 };
      }

      const row = await beginDeliveryAttempt(db, {
        id: deliveryId,
        tenantId: input.tenantId,
        endpointId: input.endpointId,
        runId: input.runId,
        eventType: input.event,
        attempt,
      });
      const occurredAt = (await enteredStateAt(db, input.tenantId, input.runId, stateOf(input.event))) ?? row.createdAt;
      const body = JSON.stringify(
        notificationPayload({
          event: input.event,
          runId: input.runId,
          tenantId: input.tenantId,
          occurredAt,
          publicBaseUrl: deps.publicBaseUrl,
          approval: run.approval as ApprovalRecord | null,
        }),
      );
      const sentAt = new Date();
      const headers = {
        'content-type': 'application/json',
        'user-agent': USER_AGENT,
        'webhook-id': webhookId,
        'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)),
        'webhook-signature': new Webhook(endpoint.secret).sign(webhookId, sentAt, body),
      };

      const failed = async (statusCode: number | null, message: string): Promise<never> => {
        await finishDeliveryAttempt(db, deliveryId, { status: final ? 'failed' : 'pending', statusCode });
        if (final)
          throw ApplicationFailure.nonRetryable(
            `${message}; attempt ${attempt} of ${NOTIFICATION_MAX_ATTEMPTS}, delivery failed.`,
            NOTIFICATION_ATTEMPT_FAILED,
          );
        throw ApplicationFailure.retryable(`${message}; attempt ${attempt} of ${NOTIFICATION_MAX_ATTEMPTS}.`, NOTIFICATION_ATTEMPT_FAILED);
      };

      let res: Awaited<ReturnType<typeof send>>;
      try {
        const signals = [AbortSignal.timeout(timeoutMs), ...(ctx ? [ctx.cancellationSignal] : [])];
        // Redirects are not followed (a 3xx is a failed attempt), as Stripe and Svix do.
        res = await send(endpoint.url, { method: 'POST', headers, body, redirect: 'manual', signal: AbortSignal.any(signals) });
      } catch (err) {
        if (ctx?.cancellationSignal.aborted) throw err;
        if (isDeliveryRefused(err))
          return failed(null, `Webhook endpoint ${endpoint.id} resolves to an address this deployment does not send to; nothing was sent`);
        const timedOut = (err as Error).name === 'TimeoutError';
        return failed(
          null,
          timedOut ? `Webhook endpoint ${endpoint.id} did not answer within ${timeoutMs} ms` : `Webhook endpoint ${endpoint.id} could not be reached`,
        );
      }
      // The answer's body is not read (nor kept): only its status counts.
      await res.body?.cancel().catch(() => {});
      if (res.status >= 200 && res.status < 300) {
        await finishDeliveryAttempt(db, deliveryId, { status: 'delivered', statusCode: res.status });
        return { status: res.status };
      }
      return failed(res.status, `Webhook endpoint ${endpoint.id} answered HTTP ${res.status}`);
    },
  };
}
