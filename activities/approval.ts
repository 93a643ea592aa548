// The audit record of an approval decision, written by the workflow itself, so
// every channel is audited alike: the API's Update, an operator's Update from
// the Temporal UI or CLI, and the `approval` signal.
import type { Db } from '../db/client.ts';
import { recordAuditOnce } from '../services/audit.ts';
import { and, eq, inArray, isNull } from 'drizzle-orm';
import { apiKeys } from '../db/schema.ts';

/** Who sent a decision: the API (with the caller's key id), or an operator through Temporal. */
export type ApprovalChannel = 'api' | 'temporal:update' | 'temporal:signal';

export interface ApprovalAuditInput {
  tenantId: string;
  runId: string;
  /** run.approval.approve, run.approval.reject, or run.approval.signal_refused. */
  action: string;
  channel: ApprovalChannel;
  /** The API key id for the API channel; operators have none. */
  keyId: string | null;
  /** Recorded once per key: the Update id (an Idempotency-Key fixes it) or the signal's position in the run. */
  eventKey: string;
  /** What was decided ({decision, reason}); only its digest is kept. */
  subject: unknown;
}

export function approvalActivities(deps: { db: Db }) {
  return {
    /** Idempotent: a retry finds the event its first attempt wrote. Returns the stored digest. */
    async recordApprovalAudit(input: ApprovalAuditInput): Promise<{ digest: string }> {
      const { event } = await recordAuditOnce(deps.db, {
        tenantId: input.tenantId,
        // The key id column names the actor: an API key, or the Temporal channel an operator used.
        keyId: input.channel === 'api' ? input.keyId : input.channel,
        action: input.action,
        target: `run:${input.runId}`,
        subject: input.subject,
        eventKey: input.eventKey,
      });
      return { digest: event.digest };
    },

    /**
     * Which of these approver keys of the tenant were revoked: their approvals of a run still waiting no
     * longer count (a decision already carried out stands). Asked before approvals from several
     * approvers decide, so a key revoked while its run waited for another approver decides nothing.
     */
    async revokedApprovers(input: { tenantId: string; keyIds: string[] }): Promise<string[]> {
      if (!input.keyIds.length) return [];
      const active = await deps.db
        .select({ id: apiKeys.id })
        .from(apiKeys)
        .where(and(eq(apiKeys.tenantId, input.tenantId), inArray(apiKeys.id, input.keyIds), isNull(apiKeys.revokedAt)));
      const still = new Set(active.map((k) => k.id));
      return input.keyIds.filter((id) => !still.has(id));
    },
  };
}
