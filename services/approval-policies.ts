// Approval policies (issue 64): set, list and clear a tenant's, each change audited in the same
// transaction. A run snapshots its tenant's policies when it is created (services/runs.ts insertRun),
// so a change reaches runs created after it and never lowers what a waiting run needs.
import { and, asc, eq, inArray, isNull } from 'drizzle-orm';
import type { Db } from '../db/client.ts';
import { apiKeys, approvalPolicies } from '../db/schema.ts';
import type { ToolServerSpec } from '../config/tool-servers.ts';
import { type ApprovalPolicy, type PolicyScope, policyProblem, scopeKey } from '../domain/runs/approval-policy.ts';
import { isToolId, TOOLS } from '../domain/tools.ts';
import { recordAudit } from './audit.ts';

/** Why a policy was refused, as a stable code and the request field it concerns. */
export class PolicyRefused extends Error {
  constructor(
    readonly code: 'unknown_tool' | 'read_tool' | 'unmeetable' | 'unknown_approver',
    readonly param: string,
    message: string,
  ) {
    super(message);
    this.name = 'PolicyRefused';
  }
}

export interface StoredPolicy extends ApprovalPolicy {
  updated_at: string;
}

/** Who set a policy, for its audit event: an approver key, or the operator's CLI. */
export type PolicyActor = { keyId: string } | { cli: true };

/**
 * Whether the tool exists for this tenant and waits for approval: a built-in external tool, or a tool of
 * a server configured for the tenant that the operator classified external or did not classify (and does
 * not hide). A read tool never waits, so a policy on it would mean nothing.
 */
export function checkPolicyTool(tool: string, tenant: { id: string; name: string }, servers: readonly ToolServerSpec[]): void {
  if (isToolId(tool)) {
    if (TOOLS[tool].effect === 'read')
      throw new PolicyRefused('read_tool', 'tool', `${tool} is a read tool: it runs without approval, so no policy applies to it`);
    return;
  }
  const [serverId, name, ...rest] = tool.split('__');
  const server = servers.find((s) => s.id === serverId && (s.tenants.includes('*') || s.tenants.includes(tenant.name) || s.tenants.includes(tenant.id)));
  const unknown = () => new PolicyRefused('unknown_tool', 'tool', `no tool ${tool} is configured for this tenant (a built-in tool, or <server>__<tool>)`);
  if (!server || !name || rest.length) throw unknown();
  const classified = server.tools[name]?.effect;
  if (classified === 'read') throw new PolicyRefused('read_tool', 'tool', `${tool} is classified read: it runs without approval, so no policy applies to it`);
  if (!classified && server.unlisted_tools === 'hide') throw unknown();
}

/** Every allowed approver must be an active approver key of this tenant (another tenant's key is unknown here). */
async function checkApprovers(db: Db, tenantId: string, keyIds: string[]): Promise<void> {
  if (!keyIds.length) return;
  const found = await db
    .select({ id: apiKeys.id })
    .from(apiKeys)
    .where(and(eq(apiKeys.tenantId, tenantId), eq(apiKeys.kind, 'approver'), isNull(apiKeys.revokedAt), inArray(apiKeys.id, keyIds)));
  const known = new Set(found.map((k) => k.id));
  const missing = keyIds.findIndex((id) => !known.has(id));
  if (missing >= 0)
    throw new PolicyRefused('unknown_approver', `allowed_approvers[${missing}]`, 'every allowed approver must be an active approver key of this tenant');
}

export async function listPolicies(db: Db, tenantId: string): Promise<StoredPolicy[]> {
  const rows = await db.select().from(approvalPolicies).where(eq(approvalPolicies.tenantId, tenantId)).orderBy(asc(approvalPolicies.scope));
  return rows.map((r) => ({ ...(r.policy as ApprovalPolicy), updated_at: r.updatedAt.toISOString() }));
}

/**
 * Sets the policy of one scope (replacing the one there), after checking it can be met: the tool exists
 * and waits for approval (checked by the caller, who knows the tool servers), `required` is 1 to 5 and no
 * more than the allowed approvers it names, each an active approver key of the tenant.
 */
export async function setPolicy(db: Db, tenantId: string, policy: ApprovalPolicy, actor: PolicyActor): Promise<StoredPolicy> {
  const problem = policyProblem(policy);
  if (problem) throw new PolicyRefused('unmeetable', problem.startsWith('required must') ? 'required' : 'allowed_approvers', problem);
  if (policy.allowed_approvers) await checkApprovers(db, tenantId, policy.allowed_approvers);
  const stored: ApprovalPolicy = {
    scope: policy.scope,
    required: policy.required,
    ...(policy.allowed_approvers ? { allowed_approvers: policy.allowed_approvers } : {}),
  };
  const scope = scopeKey(policy.scope);
  const updatedAt = await db.transaction(async (tx) => {
    const [row] = await tx
      .insert(approvalPolicies)
      .values({ tenantId, scope, policy: stored })
      .onConflictDoUpdate({ target: [approvalPolicies.tenantId, approvalPolicies.scope], set: { policy: stored, updatedAt: new Date() } })
      .returning({ updatedAt: approvalPolicies.updatedAt });
    await recordAudit(tx, { tenantId, keyId: actorKey(actor), action: 'approval_policy.set', target: `approval_policy:${scope}`, subject: stored });
    return row!.updatedAt;
  });
  return { ...stored, updated_at: updatedAt.toISOString() };
}

/** Removes the policy of one scope; false when there was none. Audited like a change. */
export async function clearPolicy(db: Db, tenantId: string, scope: PolicyScope, actor: PolicyActor): Promise<boolean> {
  const key = scopeKey(scope);
  return db.transaction(async (tx) => {
    const removed = await tx
      .delete(approvalPolicies)
      .where(and(eq(approvalPolicies.tenantId, tenantId), eq(approvalPolicies.scope, key)))
      .returning({ scope: approvalPolicies.scope });
    if (removed.length)
      await recordAudit(tx, { tenantId, keyId: actorKey(actor), action: 'approval_policy.clear', target: `approval_policy:${key}`, subject: { scope } });
    return removed.length > 0;
  });
}

const actorKey = (actor: PolicyActor) => ('keyId' in actor ? actor.keyId : 'cli');
