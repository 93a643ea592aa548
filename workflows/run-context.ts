// A run's workflow state and the moves every phase makes through it: its live state (what the
// `state` query answers), the approval handlers, a state change by the one table of moves, a
// completion notification, and the end. workflows/run-phases.ts uses it, phase by phase.
import {
  ApplicationFailure,
  currentUpdateInfo,
  log,
  ParentClosePolicy,
  patched,
  setCurrentDetails,
  setHandler,
  startChild,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { ApprovalChannel } from '../activities/approval.ts';
import type { NotificationEvent } from '../domain/runs/progress.ts';
import type { AgentRunInput } from '../domain/runs/run-input.ts';
import {
  approvalsStillNeeded,
  castVote,
  countedKeys,
  countsOthers,
  editsOf,
  TEMPORAL_APPROVER,
  voteRefusal,
  withoutApprovers,
} from '../domain/runs/approval-votes.ts';
import type { ApprovalRecord, Approver } from '../domain/runs/run-types.ts';
import { indexesMove, RunStatusKey, TenantIdKey } from '../domain/runs/search-attributes.ts';
import { nextStatus, type RunEvent, type RunStatus, type RunStep } from '../domain/runs/states.ts';
import type { RunProjectionPatch, RunTransition } from '../domain/runs/transition.ts';
import {
  ALREADY_APPROVED,
  APPROVER_NOT_ALLOWED,
  type ApprovalDecision,
  type ApprovalMeta,
  approvalSignal,
  approvalUpdate,
  decisionSubject,
  NOT_AWAITING_APPROVAL,
  type RunLiveState,
  STALE_APPROVAL,
  stateQuery,
  upgradeCheckSignal,
} from './messages.ts';
import { notifyRunWorkflow } from './notify-run.ts';
import { acts, projection } from './run-activities.ts';
import { currentDetailsOf, type PendingEffect, progressOf } from './run-details.ts';

/**
 * Versioning, the worked example: runs started before projection writes became local activities
 * have ScheduleActivityTask commands for them in their histories, so they must keep making the same
 * commands on replay. `patched` is true for runs that reach this point on the new code (it records a
 * marker) and false when replaying a history without the marker. Once no run started before the
 * change can still be open (longer than APPROVAL_TIMEOUT_SECONDS plus retention), the old branch
 * goes and `patched` becomes `deprecatePatch(PROJECTION_AS_LOCAL_ACTIVITY)`; a release later, that goes too.
 */
export const PROJECTION_AS_LOCAL_ACTIVITY = 'projection-as-local-activity';
/** Runs started on this code audit decisions from the workflow (every channel), not from the API. */
export const APPROVAL_AUDIT_IN_WORKFLOW = 'approval-audit-in-workflow';
/** Runs that reach their end on this code send completion notifications and end a failed run's execution Failed. */
export const NOTIFY_AND_FAIL_EXECUTION = 'notify-and-fail-execution';
/**
 * Runs started on this code upsert the status search attribute only when the status changes: a new step
 * within a state changes nothing Temporal indexes, and each upsert is a history event and a visibility
 * write (an analysis run moved 10 times through 5 statuses: docs/performance.md, row 11).
 */
export const STATUS_ATTRIBUTE_ON_CHANGE = 'status-attribute-on-change';
/**
 * Runs started on the code before this one took every change above under this one patch: one marker,
 * and one of the SDK's TemporalChangeVersion upserts (it makes one per patch, each a history event and
 * a visibility write), instead of four of each. Their first move upserts no status either: the start
 * carries `accepted` (services/run-workflow.ts). Runs started before ask each patch as they did.
 */
export const EARLIER_PATCHES_IN_ONE = 'earlier-patches-in-one';
/**
 * Whether the run takes what EARLIER_PATCHES_IN_ONE stands for. Runs started now say so in their input
 * (AgentRunInput.behaviour, set by services/run-workflow.ts) and do not ask, so their histories hold no
 * marker and no TemporalChangeVersion upsert at all; the input is in the history, so a replay decides
 * as the first execution did. One exception is replayed: a run this code's API started on a worker
 * still on the code before, which asked and recorded the marker. A marker nobody asks about is a
 * nondeterminism error, so a replay asks; over a history without the marker, that records nothing.
 */
function takesEarlierPatches(run: AgentRunInput): boolean {
  if ((run.behaviour ?? 0) < 1) return patched(EARLIER_PATCHES_IN_ONE);
  if (workflowInfo().unsafe.isReplaying) patched(EARLIER_PATCHES_IN_ONE);
  return true;
}

/** Runs of behaviour 2 on an unversioned worker ask this patch before they index only where an operator acts. */
export const STATUS_WHERE_OPERATORS_ACT = 'status-where-operators-act';

/**
 * Whether the run changes its status search attribute only where an operator acts (indexesMove).
 * A run on a versioned worker is PINNED to the build that took its first task, so its history
 * replays only on code that knows behaviour 2: its input decides, at no cost. On an unversioned
 * worker, a newer API may have started the run on a worker of the code before, which upserted every
 * change: the run asks a patch, so its history says which code took it (a marker and a
 * TemporalChangeVersion upsert, on unversioned workers only).
 */
function indexesWhereOperatorsAct(run: AgentRunInput): boolean {
  if ((run.behaviour ?? 0) < 2) return false;
  if (workflowInfo().currentDeploymentVersion?.deploymentName) return true;
  return patched(STATUS_WHERE_OPERATORS_ACT);
}

/** How a run ended, and what the workflow still awaits before it closes. */
export interface RunEnd {
  status: RunStatus;
  failureCode: string | null;
  /** Notification deliveries in flight; awaited before the workflow closes. */
  notifications: Promise<unknown>[];
  /** A failed run ends its execution Failed (runs started before that change complete). */
  failsExecution: boolean;
}

export type EndStatus = 'completed' | 'failed' | 'needs_attention';

/** The event of each way a run ends. */
const END_EVENT = { completed: 'complete', failed: 'fail', needs_attention: 'unresolved' } as const satisfies Record<EndStatus, RunEvent>;

export interface RunContext {
  run: AgentRunInput;
  live: RunLiveState;
  /** The approval record, once the plan asks for one. */
  approval: ApprovalRecord | null;
  /** Effects awaiting a decision, as the Temporal UI lists them. */
  pending: PendingEffect[];
  /** The decision, once an approval handler took one. */
  decision(): ApprovalDecision | undefined;
  showDetails(): void;
  /** `inHandler`: the move is made from an Update or signal handler, where only a regular activity replays. */
  moveTo(event: RunEvent, step: RunStep, patch?: RunProjectionPatch, kind?: string, inHandler?: boolean): Promise<void>;
  /** `round`: a tool-calling run's approval round after the first, announced as a notification of its own. */
  announce(event: NotificationEvent, round?: number): void;
  /** A tool-calling run's next approval round: the decision taken for the last one is done with. */
  nextRound(): void;
  end(status: EndStatus, patch: RunProjectionPatch): Promise<RunEnd>;
  /** Notification starts in flight (awaited before the execution closes or continues as new). */
  notifications: Promise<unknown>[];
  /** The counters an execution that continues as new hands on: the last transition number and the approval signals taken. */
  counters(): { seq: number; signals: number };
}

/** Where an execution that continued as new at its approval wait starts (workflows/run-resume.ts). */
export interface ResumedAt {
  seq: number;
  signals: number;
  stepsTotal: number;
  approval: ApprovalRecord;
  pending: PendingEffect[];
}

/**
 * The run's state, with its query and approval handlers set. Call once, at the start of the workflow;
 * `resumed` when the execution continued as new at its approval wait.
 */
export function openRun(run: AgentRunInput, resumed?: ResumedAt): RunContext {
  const { runId, tenantId } = run;
  const notifications: Promise<unknown>[] = [];
  let failureCode: string | null = null;
  let signals = resumed?.signals ?? 0;
  let seq = resumed?.seq ?? 0;
  let decision: ApprovalDecision | undefined;
  /** Approval rounds begun by this execution: a decision still counting when its round ended counts nothing. */
  let rounds = 0;
  const live: RunLiveState = resumed
    ? { status: 'awaiting_approval', step: 'approval', currentPlanStep: null, approval: 'pending', stepsDone: 0, stepsTotal: resumed.stepsTotal }
    : { status: 'accepted', step: 'estimate', currentPlanStep: null, approval: 'none', stepsDone: 0, stepsTotal: 0 };

  // Decided once, at the start, so a run keeps one behaviour throughout (a patch marker written inside
  // an Update handler or between local activities does not replay reliably: tests/replay.test.ts).
  const current = takesEarlierPatches(run);
  const auditsDecisions = current || patched(APPROVAL_AUDIT_IN_WORKFLOW);
  const notifies = current || patched(NOTIFY_AND_FAIL_EXECUTION);
  const upsertsOnChangeOnly = current || patched(STATUS_ATTRIBUTE_ON_CHANGE);
  const onlyWhereOperatorsAct = indexesWhereOperatorsAct(run);
  /**
   * Whether a move upserts the status: on every move (oldest runs), on a change or the first move,
   * on a change only, or (runs started now, by their input) where an operator acts.
   */
  const upsertsStatus = (from: RunStatus, to: RunStatus, first: boolean) => {
    if (onlyWhereOperatorsAct) return indexesMove(from, to);
    return current ? from !== to : from !== to || first || !upsertsOnChangeOnly;
  };
  const awaitsDecision = () => live.status === 'awaiting_approval' && !decision;

  const c: RunContext = {
    run,
    live,
    approval: resumed?.approval ?? null,
    pending: resumed?.pending ?? [],
    notifications,
    counters: () => ({ seq, signals }),
    decision: () => decision,
    showDetails: () => setCurrentDetails(currentDetailsOf(runId, live, c.pending, failureCode)),

    /**
     * Every state change, by the one table of moves (domain/runs/states.ts): search attribute,
     * projection and a content-free journey event. A move the table does not have is a bug in this
     * code: it fails the workflow task (Temporal retries it, and a fixed worker resumes the run).
     */
    async moveTo(event, step, patch = {}, kind, inHandler = false) {
      const from = live.status;
      const status = nextStatus(from, event);
      if (!status) throw new Error(`Illegal run move: no "${event}" from ${from} (domain/runs/states.ts RUN_TRANSITIONS).`);
      // A new state is run.<state>; a new step within the same state is run.step.<step>.
      const first = seq === 0;
      const eventKind = kind ?? (status !== from || first ? `run.${status}` : `run.step.${step}`);
      live.status = status;
      live.step = step;
      seq += 1;
      if (upsertsStatus(from, status, first)) upsertSearchAttributes([{ key: RunStatusKey, value: status }]);
      if (patch.failure) failureCode = patch.failure.code;
      c.showDetails();
      const transition: RunTransition = { runId, tenantId, seq, status, step, patch, kind: eventKind, progress: progressOf(live) };
      if (!inHandler && (current || patched(PROJECTION_AS_LOCAL_ACTIVITY))) await projection.recordTransition(transition);
      else await acts.recordTransition(transition);
    },

    /**
     * Notifies the endpoints subscribed to `event` through a child workflow (workflows/notify-run.ts)
     * that outlives the run, so hours of retries to a receiver that is down never hold the run open.
     * Runs without subscribers start no child. The child's start is awaited before the run closes.
     */
    nextRound() {
      decision = undefined;
      rounds += 1;
    },

    announce(event, round) {
      if (!notifies) return;
      const later = round !== undefined && round > 1;
      notifications.push(
        (async () => {
          const endpointIds = await projection.notificationTargets({ tenantId, event });
          if (endpointIds.length === 0) return;
          await startChild(notifyRunWorkflow, {
            workflowId: later ? `${runId}-notify-${event}-${round}` : `${runId}-notify-${event}`,
            args: [{ tenantId, runId, event, endpointIds, ...(later ? { round } : {}) }],
            parentClosePolicy: ParentClosePolicy.ABANDON,
            typedSearchAttributes: [{ key: TenantIdKey, value: tenantId }],
          });
        })(),
      );
    },

    async end(status, patch) {
      await c.moveTo(END_EVENT[status], live.step, { ...patch, completed: true });
      c.announce(`run.${status}`);
      return { status, failureCode, notifications, failsExecution: notifies };
    },
  };

  /** Audits a decision (or a refused signal) through an activity, whatever channel it came by. */
  async function audit(action: string, channel: ApprovalChannel, keyId: string | null, eventKey: string, d: unknown) {
    if (!auditsDecisions) return; // runs started before: the API audited its own decisions
    const subject = d && typeof d === 'object' ? decisionSubject(d as ApprovalDecision) : d;
    // A regular activity: a local activity's marker inside an Update handler does not replay (sdk-core
    // reports nondeterminism at the Update's completion event; tests/replay.test.ts caught it).
    await acts.recordApprovalAudit({ tenantId, runId, action, channel, keyId, eventKey: `run:${runId}:${eventKey}`, subject });
  }

  /** A digest the decision names that no pending effect has (it saw an older plan), or null. */
  function staleDigest(d: ApprovalDecision): string | null {
    const current = new Set((c.approval?.effects ?? []).map((e) => e.args_digest).filter(Boolean));
    return (d.digests ?? []).find((x) => !current.has(x)) ?? null;
  }

  setHandler(stateQuery, () => live);
  // Only wakes the run: its approval wait then checks whether a newer build is its target (run-phases.ts).
  setHandler(upgradeCheckSignal, () => {});

  /**
   * Counts one decision on the pending approval: a rejection decides at once; approvals decide once every
   * effect has the approvals its policy requires, with every edit made on the way. Synchronous where one
   * approver decides (every run without a policy of 2 or more, or an allowed list): a promise only when
   * it must ask which keys were revoked, or show a counted approval. An extra await there would change
   * when the Update completes against the approval timer, and histories recorded before would not replay.
   * Resolves to false when the round ended (expired, or another round began) while it asked.
   */
  function vote(d: ApprovalDecision, by: Approver, channel: ApprovalChannel): Promise<boolean> | boolean {
    const round = rounds;
    const at = new Date(Date.now()).toISOString();
    // Counted at once (before any await), so a decision arriving meanwhile counts on top of this one.
    c.approval = castVote(c.approval!, { by, decision: d.decision, reason: d.reason ?? null, at, channel }, d.edits);
    // Approvals given over time: those of a key revoked meanwhile no longer count.
    if (d.decision === 'approve' && countsOthers(c.approval, by) && approvalsStillNeeded(c.approval) === 0) {
      return acts.revokedApprovers({ tenantId, keyIds: countedKeys(c.approval) }).then((revoked) => {
        if (round !== rounds || live.status !== 'awaiting_approval' || c.approval?.state !== 'pending') return false;
        c.approval = withoutApprovers(c.approval, revoked);
        return settleVote(d);
      });
    }
    return settleVote(d);
  }

  /** The decision, once the round has what it needs; else the counted approval, shown on the run. */
  function settleVote(d: ApprovalDecision): Promise<boolean> | boolean {
    c.approval = { ...c.approval!, approvals_needed: approvalsStillNeeded(c.approval!) };
    if (decision) return true; // another decision completed the round meanwhile
    if (d.decision === 'reject' || c.approval.approvals_needed === 0) {
      // One decision alone: as it came. Several: the edits they made, as the record holds them.
      const several = (c.approval.approvals?.length ?? 0) > 1;
      const edits = several ? editsOf(c.approval) : [];
      decision = several ? { ...d, ...(edits.length ? { edits } : {}) } : d;
      return true;
    }
    // Counted, and more are needed: the run shows who approved and how many more it needs.
    return c.moveTo('advance', 'approval', { approval: c.approval }, 'run.approval.counted', true).then(() => true);
  }

  const approverOf = (meta: ApprovalMeta | undefined): Approver =>
    meta?.channel === 'api' ? { key_id: meta.key_id, name: meta.name ?? meta.key_id ?? 'api' } : TEMPORAL_APPROVER;

  /** The refusal of an Update's decision, as the API maps it (409, 403 or 409 stale). */
  const REFUSAL_TYPE = { not_allowed: APPROVER_NOT_ALLOWED, already_approved: ALREADY_APPROVED, unbound: STALE_APPROVAL } as const;
  const notAwaiting = () =>
    ApplicationFailure.create({ type: NOT_AWAITING_APPROVAL, message: `run is ${live.status}, not awaiting approval`, nonRetryable: true });

  setHandler(
    approvalUpdate,
    async (d, meta?: ApprovalMeta) => {
      const channel: ApprovalChannel = meta?.channel === 'api' ? 'api' : 'temporal:update';
      const counted = vote(d, approverOf(meta), channel);
      if (counted !== true && !(await counted)) throw notAwaiting();
      await audit(`run.approval.${d.decision}`, channel, meta?.key_id ?? null, currentUpdateInfo()?.id ?? 'update', d);
      return { decision: d.decision, accepted: true };
    },
    {
      validator: (d: ApprovalDecision, meta?: ApprovalMeta) => {
        if (live.status !== 'awaiting_approval' || decision) throw notAwaiting();
        const refusal = c.approval && d ? voteRefusal(c.approval, approverOf(meta), d) : null;
        if (refusal) throw ApplicationFailure.create({ type: REFUSAL_TYPE[refusal.kind], message: refusal.message, nonRetryable: true });
        if (d?.decision !== 'approve' && d?.decision !== 'reject') {
          throw ApplicationFailure.create({ type: 'InvalidDecision', message: 'decision must be approve or reject', nonRetryable: true });
        }
        const stale = staleDigest(d);
        if (stale)
          throw ApplicationFailure.create({ type: STALE_APPROVAL, message: `digest ${stale} is not an argument digest awaiting approval`, nonRetryable: true });
        if (d.edits?.length && meta?.channel !== 'api') {
          throw ApplicationFailure.create({ type: 'InvalidDecision', message: 'edited arguments are accepted through the API only', nonRetryable: true });
        }
      },
    },
  );
  setHandler(approvalSignal, async (d) => {
    signals += 1;
    const eventKey = `signal:${signals}`;
    // A signal cannot carry edits (only the API checks them against the tool's schema) or a stale digest.
    // The Temporal channel is one approver: a second approval by signal counts nothing.
    const valid = d?.decision === 'approve' || d?.decision === 'reject';
    const refusal = awaitsDecision() && valid ? voteRefusal(c.approval!, TEMPORAL_APPROVER, d) : null;
    if (awaitsDecision() && valid && !refusal && !d.edits?.length && !staleDigest(d)) {
      const counted = vote(d, TEMPORAL_APPROVER, 'temporal:signal');
      if (counted === true || (await counted)) {
        await audit(`run.approval.${d.decision}`, 'temporal:signal', null, eventKey, d);
        return;
      }
    }
    // A signal cannot be refused to its sender; it is ignored, logged without content and audited.
    const why = !awaitsDecision() ? `run is ${live.status}, not awaiting approval` : (refusal?.message ?? 'decision must be approve or reject');
    log.warn('approval signal refused', { runId, why });
    await audit('run.approval.signal_refused', 'temporal:signal', null, eventKey, d);
  });

  return c;
}
