// The selected run: its request, plan, the effects awaiting a decision with their exact arguments, the
// decision form, its live progress, and its receipt once it ended.
import { html } from 'htm/preact';
import type { Api } from '../api.ts';
import { stateWords, timeLeft } from '../format.ts';
import { type Approver, type Run, TERMINAL } from '../types.ts';
import { type CheckedEdit, EffectCard } from './effect-card.ts';
import { Receipt } from './receipt.ts';

interface Props {
  api: Api;
  /** The signed-in approver, once known. */
  me: Approver | null;
  run: Run;
  now: number;
  notice: { text: string; alert: boolean } | undefined;
  reason: string;
  onReason(text: string): void;
  edits: Record<string, CheckedEdit>;
  openEditors: string[];
  onEdit(stepId: string, edit: CheckedEdit | undefined, open: boolean): void;
  onAsk(decision: 'approve' | 'reject'): void;
}

function Progress({ run }: { run: Run }) {
  const p = run.progress;
  const ended = TERMINAL.includes(run.status);
  return html`
    <div class="progress" role="status" aria-live="polite">
      <span class="state state-${run.status}">${stateWords(run.status)}</span>
      ${!ended && p.current_step && html`<span>step: ${p.current_step}${p.current_plan_step ? ` (${p.current_plan_step})` : ''}</span>`}
      ${p.steps_total > 0 && html`<progress max=${p.steps_total} value=${p.steps_done} aria-label="Plan steps finished"></progress><span>${p.steps_done} of ${p.steps_total} plan steps</span>`}
    </div>
  `;
}

function Decision({
  run,
  now,
  reason,
  onReason,
  blocked,
  onAsk,
}: {
  run: Run;
  now: number;
  reason: string;
  onReason(t: string): void;
  blocked: boolean;
  onAsk(d: 'approve' | 'reject'): void;
}) {
  return html`
    <section class="decision" aria-labelledby="decision-heading">
      <h3 id="decision-heading">Decision <span class="deadline">${run.approval ? timeLeft(run.approval.deadline, now) : ''}</span></h3>
      <label for="reason">Reason</label>
      <textarea id="reason" rows="2" maxlength="1000" value=${reason} onInput=${(e: Event) => onReason((e.target as HTMLTextAreaElement).value)}></textarea>
      <div class="row">
        <button type="button" class="approve" disabled=${blocked} onClick=${() => onAsk('approve')}>Approve</button>
        <button type="button" class="reject" onClick=${() => onAsk('reject')}>Reject</button>
      </div>
      ${blocked && html`<p class="hint">Check or discard the open edit before approving.</p>`}
    </section>
  `;
}

/** Who decided so far, who edited what, and how many approvals are still needed. */
function Approvals({ run, me }: { run: Run; me: Approver | null }) {
  const approval = run.approval;
  const votes = approval?.approvals ?? [];
  const needed = approval?.state === 'pending' ? (approval.approvals_needed ?? 0) : 0;
  if (votes.length === 0 && needed <= 1) return null;
  const isMe = (by: Approver) => me !== null && by.key_id === me.key_id;
  const mine = votes.some((v) => v.decision === 'approve' && isMe(v.by));
  const who = (by: Approver) => (isMe(by) ? `you (${by.name})` : by.name);
  return html`
    <section class="approvals" aria-labelledby="approvals-heading">
      <h3 id="approvals-heading">Approvals</h3>
      ${needed > 0 && html`<p class="needed" role="status">${mine ? 'Approved by you, ' : ''}${needed} more approval${needed === 1 ? '' : 's'} needed</p>`}
      <ul>
        ${votes.map(
          (v) =>
            html`<li>${who(v.by)} ${v.decision === 'approve' ? 'approved' : 'rejected'}${v.edited?.length ? html`, editing <code>${v.edited.join(', ')}</code>` : ''} at ${v.at}${v.reason ? `: ${v.reason}` : ''}</li>`,
        )}
      </ul>
    </section>
  `;
}

export function RunDetail({ api, me, run, now, notice, reason, onReason, edits, openEditors, onEdit, onAsk }: Props) {
  const approval = run.approval;
  const pending = run.status === 'awaiting_approval' && approval?.state === 'pending';
  return html`
    <article class="run" aria-labelledby="run-heading">
      <h2 id="run-heading">Run <code>${run.run_id}</code></h2>
      <${Progress} run=${run} />
      ${notice && html`<p class=${notice.alert ? 'notice error' : 'notice'} role=${notice.alert ? 'alert' : 'status'}>${notice.text}</p>`}
      <h3>Request</h3>
      <blockquote class="input">${run.input}</blockquote>
      ${
        run.plan &&
        html`<h3>Plan</h3>
          <ol class="plan">
            ${run.plan.steps.map((s) => html`<li><code>${s.id}</code> <code>${s.tool}</code> <span class="effect-class">${s.effect}</span>: ${s.purpose}</li>`)}
          </ol>`
      }
      ${
        approval &&
        html`<h3>External effects <span class="approval-state">approval ${approval.state}</span></h3>
          ${approval.decision_reason && html`<p>Reason given: ${approval.decision_reason}</p>`}
          ${approval.effects.map(
            (effect) =>
              html`<${EffectCard} key=${effect.step_id} api=${api} runId=${run.run_id} effect=${effect} pending=${pending} edit=${pending ? edits[effect.step_id] : undefined} onEdit=${onEdit} />`,
          )}`
      }
      ${approval && html`<${Approvals} run=${run} me=${me} />`}
      ${pending && html`<${Decision} run=${run} now=${now} reason=${reason} onReason=${onReason} blocked=${openEditors.length > 0} onAsk=${onAsk} />`}
      ${TERMINAL.includes(run.status) && html`<${Receipt} run=${run} />`}
    </article>
  `;
}
