// Approvers' own routes (extensions): who an approver key is (the inbox says "approved by you" by it),
// and the tenant's approval policies, which only an approver key may read or change.
import { z } from 'zod';
import { errors } from '../../domain/errors.ts';
import { APPROVERS_MAX, type PolicyScope } from '../../domain/runs/approval-policy.ts';
import { type PolicyActor, PolicyRefused, type StoredPolicy } from '../../services/approval-policies.ts';
import { ErrorObject } from '../contract/common.ts';
import { defineRoute } from '../contract/route.ts';

export interface ApprovalPolicyService {
  list(tenantId: string): Promise<StoredPolicy[]>;
  set(tenantId: string, policy: { scope: PolicyScope; required: number; allowed_approvers?: string[] }, actor: PolicyActor): Promise<StoredPolicy>;
  clear(tenantId: string, scope: PolicyScope, actor: PolicyActor): Promise<boolean>;
}

const SCOPE = /^(tool:[A-Za-z0-9_.:-]{1,200}|effect_class:external)$/;
const ScopeParams = z.strictObject({
  scope: z.string().regex(SCOPE).meta({
    description:
      'What the policy applies to: `tool:<tool>` (a built-in external tool, or `<server>__<tool>`), or `effect_class:external` (every external effect without a tool policy of its own).',
    example: 'tool:files__write_file',
  }),
});

const PolicyBody = z
  .strictObject({
    required: z
      .int()
      .min(1)
      .max(APPROVERS_MAX)
      .meta({ description: `Distinct approver keys each effect it covers needs, 1 to ${APPROVERS_MAX}.` }),
    allowed_approvers: z
      .array(z.string().min(1).max(64))
      .min(1)
      .max(50)
      .optional()
      .meta({ description: 'The approver keys (ids) whose approval counts; absent: any approver key of the tenant. Must name at least `required` keys.' }),
  })
  .meta({ id: 'ApprovalPolicyRequest' });

const Policy = z
  .object({
    object: z.literal('approval_policy'),
    scope: z.string(),
    required: z.int(),
    allowed_approvers: z.array(z.string()).nullable(),
    updated_at: z.string(),
  })
  .meta({ id: 'ApprovalPolicy' });

const scopeOf = (key: string): PolicyScope => (key.startsWith('tool:') ? { tool: key.slice('tool:'.length) } : { effect_class: 'external' });
const policyView = (p: StoredPolicy) => ({
  object: 'approval_policy' as const,
  scope: 'tool' in p.scope ? `tool:${p.scope.tool}` : `effect_class:${p.scope.effect_class}`,
  required: p.required,
  allowed_approvers: p.allowed_approvers ?? null,
  updated_at: p.updated_at,
});

/** A refused policy as the contract's 400, naming the field. */
function refused(err: unknown): never {
  if (err instanceof PolicyRefused) {
    if (err.code === 'unknown_approver') throw errors.unknownApprover(err.param);
    throw errors.invalidRequest(`Invalid ${err.param}: ${err.message}.`, err.param);
  }
  throw err;
}

const POLICY_NOTE =
  "Each change is audited (`approval_policy.set` or `approval_policy.clear`, under the approver key). A run takes its tenant's policies when it is created and keeps them: a change reaches runs created after it, and never lowers what a waiting run needs. A tool policy wins over the `effect_class:external` one.";

const ApproverSelf = z
  .object({
    object: z.literal('approver'),
    key_id: z.string().meta({ description: "The approver key's id, as approvals and receipts name it." }),
    name: z.string().meta({ description: 'The person who holds the key, as minted.' }),
  })
  .meta({ id: 'ApproverSelf' });

export function approverRoutes(deps: { approvalPolicies: ApprovalPolicyService }) {
  const tags = ['runs'];
  return [
    defineRoute({
      method: 'get',
      path: '/v1/approval-policies',
      operationId: 'listApprovalPolicies',
      summary: "The tenant's approval policies (extension)",
      description: `How many distinct approvers each external effect needs, per tool and for every external effect. Takes an approver key only. ${POLICY_NOTE}`,
      tags,
      auth: 'approver',
      responses: { 200: { description: 'The policies, by scope.', schema: z.object({ object: z.literal('list'), data: z.array(Policy) }) } },
      async handler({ principal }) {
        const data = (await deps.approvalPolicies.list(principal!.tenantId)).map(policyView);
        return { status: 200, body: { object: 'list' as const, data } };
      },
    }),
    defineRoute({
      method: 'put',
      path: '/v1/approval-policies/{scope}',
      operationId: 'setApprovalPolicy',
      summary: 'Set the approval policy of a tool or of every external effect (extension)',
      description: `Replaces the policy of the scope. Takes an approver key only. Refused (400, nothing changes) for a tool this tenant does not have or that only reads, a policy that needs more approvers than its allowed list names, and an allowed approver that is not an active approver key of this tenant (code unknown_approver). ${POLICY_NOTE}`,
      tags,
      auth: 'approver',
      request: { params: ScopeParams, body: PolicyBody },
      responses: {
        200: { description: 'The policy as stored.', schema: Policy },
        400: { description: 'Invalid policy (code invalid_request or unknown_approver; `param` names the field). Nothing changed.', schema: ErrorObject },
      },
      async handler({ principal, params, body }) {
        const policy = {
          scope: scopeOf(params.scope),
          required: body.required,
          ...(body.allowed_approvers ? { allowed_approvers: body.allowed_approvers } : {}),
        };
        const stored = await deps.approvalPolicies.set(principal!.tenantId, policy, { keyId: principal!.keyId }).catch(refused);
        return { status: 200, body: policyView(stored) };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/approval-policies/{scope}',
      operationId: 'clearApprovalPolicy',
      summary: 'Remove the approval policy of a scope (extension)',
      description: `Effects it covered need what the next policy says (the \`effect_class:external\` one for a tool), or one approval by any approver. Takes an approver key only. ${POLICY_NOTE}`,
      tags,
      auth: 'approver',
      request: { params: ScopeParams },
      responses: {
        204: { description: 'Removed.' },
        404: { description: 'The scope has no policy (code not_found).', schema: ErrorObject },
      },
      async handler({ principal, params }) {
        const removed = await deps.approvalPolicies.clear(principal!.tenantId, scopeOf(params.scope), { keyId: principal!.keyId });
        if (!removed) throw errors.notFound('The scope has no approval policy.');
        return { status: 204, body: null };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/approvers/me',
      operationId: 'getCurrentApprover',
      summary: 'The approver this key is (extension)',
      description: "The approver key's id and its person's name, exactly as a decision made with this key is recorded. Takes an approver key only.",
      tags: ['runs'],
      auth: 'approver',
      responses: { 200: { description: 'The approver.', schema: ApproverSelf } },
      async handler({ principal }) {
        return { status: 200, body: { object: 'approver' as const, key_id: principal!.keyId, name: principal!.name ?? principal!.keyId } };
      },
    }),
  ];
}
