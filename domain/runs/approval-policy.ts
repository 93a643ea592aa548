// Approval policies (issue 64): how many distinct approvers an external effect needs, per tool or for
// every external effect of a tenant, and optionally which approver keys may give them. A run takes a
// snapshot of its tenant's policies when it is created, so a later change never lowers what it needs.

/** What a policy applies to: one tool, or every effect of a class (only external effects wait for approval). */
export type PolicyScope = { tool: string } | { effect_class: 'external' };

export interface ApprovalPolicy {
  scope: PolicyScope;
  /** Distinct approver keys each effect it covers needs, 1 to APPROVERS_MAX. */
  required: number;
  /** The approver keys whose approval counts; absent: any approver key of the tenant. */
  allowed_approvers?: string[];
}

export const APPROVERS_MAX = 5;

/** A policy's stored scope key: `tool:<name>` or `effect_class:external`. */
export const scopeKey = (scope: PolicyScope) => ('tool' in scope ? `tool:${scope.tool}` : `effect_class:${scope.effect_class}`);

/** What an effect of this tool needs: its tool's policy, else the external class's, else one approval by anyone. */
export function policyFor(policies: readonly ApprovalPolicy[] | undefined, tool: string): { required: number; allowed_approvers?: string[] } {
  const byTool = policies?.find((p) => 'tool' in p.scope && p.scope.tool === tool);
  const byClass = policies?.find((p) => 'effect_class' in p.scope);
  const policy = byTool ?? byClass;
  if (!policy) return { required: 1 };
  return { required: policy.required, ...(policy.allowed_approvers ? { allowed_approvers: policy.allowed_approvers } : {}) };
}

/** Why a policy cannot be met as written, or null: it needs more approvers than its allowed list names. */
export function policyProblem(p: Pick<ApprovalPolicy, 'required' | 'allowed_approvers'>): string | null {
  if (!Number.isInteger(p.required) || p.required < 1 || p.required > APPROVERS_MAX) return `required must be a whole number from 1 to ${APPROVERS_MAX}`;
  const allowed = p.allowed_approvers;
  if (allowed && new Set(allowed).size !== allowed.length) return 'allowed_approvers names a key twice';
  if (allowed && allowed.length < p.required) return `required is ${p.required}, but allowed_approvers names only ${allowed.length} approver key(s)`;
  return null;
}
