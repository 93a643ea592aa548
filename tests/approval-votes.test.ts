// The counting of approvals (domain/runs/approval-votes.ts, domain/runs/approval-policy.ts): pure
// functions the workflow's handlers and the API's views share.
import { describe, expect, it } from 'vitest';
import { notificationPayload } from '../activities/notify.ts';
import { policyFor, policyProblem } from '../domain/runs/approval-policy.ts';
import {
  alreadyApproved,
  approvalsStillNeeded,
  approvesNothing,
  castVote,
  editsOf,
  TEMPORAL_APPROVER,
  voteRefusal,
  withoutApprovers,
} from '../domain/runs/approval-votes.ts';
import type { ApprovalRecord, ApprovalVote, Approver } from '../domain/runs/run-types.ts';

const dana: Approver = { key_id: 'key_dana', name: 'Dana' };
const sam: Approver = { key_id: 'key_sam', name: 'Sam' };
const record = (required = 2, allowed?: string[]): ApprovalRecord => ({
  state: 'pending',
  effects: [
    { step_id: 's1', tool: 'webhook_delivery', why: 'tell', args_digest: 'sha256:a', required, ...(allowed ? { allowed_approvers: allowed } : {}) },
    { step_id: 's2', tool: 'files__write_file', why: 'write', args_digest: 'sha256:b', required: 1 },
  ],
  reason: 'r',
  deadline: '2026-12-07T00:00:00Z',
  decided_at: null,
  decision_reason: null,
});
const vote = (by: Approver, decision: 'approve' | 'reject' = 'approve'): ApprovalVote => ({ by, decision, reason: null, at: 't', channel: 'api' });

describe('approval votes', () => {
  it('counts each approver once per effect, and the effect that needs most decides what is still needed', () => {
    let r = castVote(record(), vote(dana));
    expect(approvalsStillNeeded(r)).toBe(1);
    expect(alreadyApproved(r, dana)).toBe(true);
    r = castVote(r, vote(dana));
    expect(r.effects[0]!.approved_by).toEqual([dana]);
    r = castVote(r, vote(sam));
    expect(approvalsStillNeeded(r)).toBe(0);
    expect(r.approvals?.map((v) => v.by.name)).toEqual(['Dana', 'Dana', 'Sam']);
  });

  it('an edit voids the approvals of the effect it changed, and only that one', () => {
    let r = castVote(record(), vote(dana));
    r = castVote(r, vote(sam), [{ step_id: 's1', arguments: { message: 'new' }, args_digest: 'sha256:c' }]);
    expect(r.effects[0]).toMatchObject({ args_digest: 'sha256:c', proposed_digest: 'sha256:a', approved_by: [sam] });
    expect(r.effects[1]!.approved_by).toEqual([dana, sam]);
    expect(r.approvals?.at(-1)?.edited).toEqual(['s1']);
    expect(approvalsStillNeeded(r)).toBe(1);
    expect(alreadyApproved(r, dana)).toBe(false);
  });

  it('an allowed list binds: others approve nothing there, and the Temporal channel is never on it', () => {
    const r = record(1, ['key_sam']);
    const counted = castVote(r, vote(dana));
    expect(counted.effects[0]!.approved_by).toBeUndefined();
    expect(approvesNothing({ ...r, effects: [r.effects[0]!] }, dana)).toBe(true);
    expect(approvesNothing({ ...r, effects: [r.effects[0]!] }, TEMPORAL_APPROVER)).toBe(true);
    expect(approvesNothing({ ...r, effects: [r.effects[0]!] }, sam)).toBe(false);
  });

  it("a revoked key's approvals stop counting; the Temporal channel's stay", () => {
    let r = castVote(record(), vote(dana));
    r = castVote(r, vote(TEMPORAL_APPROVER));
    expect(approvalsStillNeeded(r)).toBe(0);
    const without = withoutApprovers(r, ['key_dana']);
    expect(without.effects[0]!.approved_by).toEqual([TEMPORAL_APPROVER]);
    expect(approvalsStillNeeded(without)).toBe(1);
  });
});

describe('which approvals count', () => {
  const edit = { step_id: 's1', arguments: { message: 'new' }, args_digest: 'sha256:c' };

  it('never refuses the first decision of a round without an allowed list, nor any rejection', () => {
    expect(voteRefusal(record(), dana, { decision: 'approve' })).toBeNull();
    expect(voteRefusal(record(), dana, { decision: 'approve', edits: [edit] })).toBeNull();
    expect(voteRefusal(record(1, ['key_sam']), dana, { decision: 'reject' })).toBeNull();
  });

  it('refuses a repeat, a no-op edit included, and an edit of an effect the approver may not approve', () => {
    const r = castVote(record(2, ['key_dana', 'key_sam']), vote(dana));
    expect(voteRefusal(r, dana, { decision: 'approve' })?.kind).toBe('already_approved');
    expect(voteRefusal(r, dana, { decision: 'approve', edits: [{ ...edit, args_digest: 'sha256:a' }] })?.kind).toBe('already_approved');
    const barred = record(1, ['key_sam']);
    expect(voteRefusal({ ...barred }, dana, { decision: 'approve', edits: [edit] })?.kind).toBe('not_allowed');
  });

  it('after another decision edited an effect, an approval must name the digests it approves', () => {
    const r = castVote(record(), vote(sam), [edit]);
    expect(voteRefusal(r, dana, { decision: 'approve' })?.kind).toBe('unbound');
    expect(voteRefusal(r, dana, { decision: 'approve', digests: ['sha256:c', 'sha256:b'] })).toBeNull();
    expect(editsOf(r)).toEqual([edit]);
  });
});

describe('approval policies', () => {
  it("a tool's own policy wins over the external class's; none is one approval by anyone", () => {
    const policies = [
      { scope: { effect_class: 'external' as const }, required: 2 },
      { scope: { tool: 'files__write_file' }, required: 3, allowed_approvers: ['a', 'b', 'c'] },
    ];
    expect(policyFor(policies, 'files__write_file')).toEqual({ required: 3, allowed_approvers: ['a', 'b', 'c'] });
    expect(policyFor(policies, 'webhook_delivery')).toEqual({ required: 2 });
    expect(policyFor(undefined, 'webhook_delivery')).toEqual({ required: 1 });
  });

  it('refuses a policy nobody can meet', () => {
    expect(policyProblem({ required: 3, allowed_approvers: ['a', 'b'] })).toContain('names only 2');
    expect(policyProblem({ required: 0 })).toContain('1 to 5');
    expect(policyProblem({ required: 6 })).toContain('1 to 5');
    expect(policyProblem({ required: 2, allowed_approvers: ['a', 'a'] })).toContain('twice');
    expect(policyProblem({ required: 2, allowed_approvers: ['a', 'b'] })).toBeNull();
  });
});

describe('the run.awaiting_approval notification', () => {
  it('says how many distinct approvals the round needs, and nothing else of the approval', () => {
    const payload = notificationPayload({ event: 'run.awaiting_approval', runId: 'run_1', tenantId: 'ten_1', occurredAt: new Date(0), approval: record(3) });
    expect(payload.data.approvals_needed).toBe(3);
    expect(JSON.stringify(payload)).not.toContain('webhook_delivery');
    const done = notificationPayload({ event: 'run.completed', runId: 'run_1', tenantId: 'ten_1', occurredAt: new Date(0), approval: record(3) });
    expect(done.data.approvals_needed).toBeUndefined();
  });
});
