// Who approved what (issue 64): each decision on a pending approval is a vote of one approver, and
// an effect goes ahead once it has the approvals its policy requires, each bound to the arguments
// that approver saw. Pure functions over the approval record, so the workflow's handlers and the
// API's views count alike.
import type { ApprovalEffect, ApprovalRecord, ApprovalVote, Approver } from './run-types.ts';

/** The approver a Temporal channel's decision counts as: one, whatever operator sent it. */
export const TEMPORAL_APPROVER: Approver = { key_id: null, name: 'temporal' };

/** Two approvers are one when they hold the same key (an API approver) or are both the Temporal channel. */
export const sameApprover = (a: Approver, b: Approver) => a.key_id === b.key_id && (a.key_id !== null || a.name === b.name);

const requiredOf = (e: ApprovalEffect) => e.required ?? 1;
const approversOf = (e: ApprovalEffect) => e.approved_by ?? [];

/** An edit, as a decision carries it: the new arguments and their digest, checked by the API. */
export interface VoteEdit {
  step_id: string;
  arguments: Record<string, unknown>;
  args_digest: string;
}

/**
 * The record with one vote counted. An edit replaces its effect's arguments and voids the approvals
 * that effect had (they approved other arguments); an approval then counts on every effect it does not
 * already count on. A rejection changes no effect: it ends the round.
 */
export function castVote(record: ApprovalRecord, vote: ApprovalVote, edits: VoteEdit[] = []): ApprovalRecord {
  const editOf = new Map(edits.map((e) => [e.step_id, e]));
  const effects = record.effects.map((effect): ApprovalEffect => {
    const edit = editOf.get(effect.step_id);
    const changed = edit !== undefined && edit.args_digest !== effect.args_digest;
    const edited: ApprovalEffect = changed
      ? { ...effect, arguments: edit.arguments, args_digest: edit.args_digest, proposed_digest: effect.proposed_digest ?? effect.args_digest, approved_by: [] }
      : effect;
    if (vote.decision !== 'approve' || !mayApprove(edited, vote.by) || approversOf(edited).some((a) => sameApprover(a, vote.by))) return edited;
    return { ...edited, approved_by: [...approversOf(edited), vote.by] };
  });
  const edited = edits.filter((e) => e.args_digest !== record.effects.find((x) => x.step_id === e.step_id)?.args_digest).map((e) => e.step_id);
  return { ...record, effects, approvals: [...(record.approvals ?? []), { ...vote, ...(edited.length ? { edited } : {}) }] };
}

/** How many more approvals the effect that needs the most still needs: 0 when every effect may go ahead. */
export function approvalsStillNeeded(record: ApprovalRecord): number {
  return Math.max(0, ...record.effects.map((e) => requiredOf(e) - approversOf(e).length));
}

/** How many distinct approvals the round needs in all (the effect that needs the most), whatever was given: the same on every notification attempt. */
export function approvalsRequired(record: ApprovalRecord): number {
  return Math.max(1, ...record.effects.map(requiredOf));
}

/** Whether the effect's policy lets this approver's approval count: any approver, unless it names the keys that may. */
export function mayApprove(effect: ApprovalEffect, by: Approver): boolean {
  return effect.allowed_approvers === undefined || (by.key_id !== null && effect.allowed_approvers.includes(by.key_id));
}

/** Whether an approval by this approver would count on no effect: each it may approve already counts it. */
export function alreadyApproved(record: ApprovalRecord, by: Approver): boolean {
  const may = record.effects.filter((e) => mayApprove(e, by));
  return may.length > 0 && may.every((e) => approversOf(e).some((a) => sameApprover(a, by)));
}

/** Whether the policies let this approver approve none of the effects (its approval could count nowhere). */
export function approvesNothing(record: ApprovalRecord, by: Approver): boolean {
  return record.effects.length > 0 && !record.effects.some((e) => mayApprove(e, by));
}

/** The receipt's record of who approved each approved effect (`<tool>:<step>`). */
export function approversOfEffects(approval: ApprovalRecord | null | undefined, approved: { tool: string; id: string; approved_by?: Approver[] }[]) {
  const byStep = new Map((approval?.effects ?? []).map((e) => [e.step_id, approversOf(e)]));
  // A tool-calling run's earlier rounds keep their approvers on their steps; the record holds the last round's.
  return approved.flatMap((s) => (s.approved_by ?? byStep.get(s.id) ?? []).map((a) => ({ effect: `${s.tool}:${s.id}`, key_id: a.key_id, name: a.name })));
}

/** The receipt's `approved_by`, left out when nobody approved anything (receipts from before approver keys stay as they were). */
export const approvedBy = (by: ReturnType<typeof approversOfEffects>) => (by.length ? { approved_by: by } : {});

/** The approver keys whose approvals count on some effect now. */
export const countedKeys = (record: ApprovalRecord) => [
  ...new Set(record.effects.flatMap((e) => approversOf(e).flatMap((a) => (a.key_id === null ? [] : [a.key_id])))),
];

/** The record without the approvals of these (revoked) keys: the effects they approved need another approval. */
export function withoutApprovers(record: ApprovalRecord, keyIds: readonly string[]): ApprovalRecord {
  if (!keyIds.length) return record;
  const effects = record.effects.map((e) =>
    e.approved_by ? { ...e, approved_by: e.approved_by.filter((a) => a.key_id === null || !keyIds.includes(a.key_id)) } : e,
  );
  return { ...record, effects };
}

/** Why a decision cannot be counted as it stands, or null. Only approvals are refused: anyone may reject. */
export interface VoteRefusal {
  kind: 'not_allowed' | 'already_approved' | 'unbound';
  message: string;
}

/**
 * Whether this approver's approval may be counted: it must be allowed on some effect and on every effect it
 * edits; it must count somewhere it does not yet (an edit that changes arguments always does); and once
 * another decision edited an effect, it must name the digests it approves, so it is bound to what its
 * approver saw. None of this can refuse the first decision of a round without an allowed list.
 */
export function voteRefusal(record: ApprovalRecord, by: Approver, d: { decision: string; digests?: string[]; edits?: VoteEdit[] }): VoteRefusal | null {
  if (d.decision !== 'approve') return null;
  if (approvesNothing(record, by)) return { kind: 'not_allowed', message: 'no pending effect allows this approver' };
  const effectOf = (stepId: string) => record.effects.find((e) => e.step_id === stepId);
  const changing = (d.edits ?? []).filter((e) => e.args_digest !== effectOf(e.step_id)?.args_digest);
  const barred = changing.find((e) => {
    const effect = effectOf(e.step_id);
    return effect !== undefined && !mayApprove(effect, by);
  });
  if (barred) return { kind: 'not_allowed', message: `this approver may not edit ${barred.step_id}: its policy does not allow them` };
  if (!changing.length && alreadyApproved(record, by)) return { kind: 'already_approved', message: 'this approver already approved every pending effect' };
  if (!d.digests?.length && (record.approvals ?? []).some((v) => v.edited?.length)) {
    return { kind: 'unbound', message: 'an effect awaiting approval was edited by another decision: name the digests you approve' };
  }
  return null;
}

/** The edits the round's decisions made, as the record holds them (it survives a continue-as-new). */
export function editsOf(record: ApprovalRecord): VoteEdit[] {
  return record.effects.flatMap((e) =>
    e.proposed_digest !== undefined && e.args_digest !== undefined ? [{ step_id: e.step_id, arguments: e.arguments ?? {}, args_digest: e.args_digest }] : [],
  );
}

/** Whether approvals of keys other than this one count: only then can a revocation since have voided one. */
export const countsOthers = (record: ApprovalRecord, by: Approver) => countedKeys(record).some((k) => k !== by.key_id);
