// Completion notifications: one Standard Webhooks delivery per subscribed endpoint.
// STUB: filled in by the webhooks work (see README "Completion notifications").
import type { Db } from '../db/client.ts';
import type { NotificationEvent } from '../domain/runs/progress.ts';

export interface NotificationTargetsInput {
  tenantId: string;
  event: NotificationEvent;
}

export interface DeliverNotificationInput {
  tenantId: string;
  runId: string;
  endpointId: string;
  event: NotificationEvent;
}

export function notificationActivities(_deps: { db: Db; publicBaseUrl?: string }) {
  return {
    /** Ids of the tenant's live endpoints subscribed to `event`. */
    async notificationTargets(_input: NotificationTargetsInput): Promise<string[]> {
      return [];
    },
    /** Sends one signed notification; throws on failure so Temporal retries with the same webhook-id. */
    async deliverNotification(_input: DeliverNotificationInput): Promise<{ status: number }> {
      return { status: 0 };
    },
  };
}
