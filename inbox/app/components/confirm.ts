// The confirmation every decision takes, by button or key: what will happen, then Confirm or Cancel.
import { html } from 'htm/preact';
import { useLayoutEffect, useRef } from 'preact/hooks';
import type { Run } from '../types.ts';
import type { CheckedEdit } from './effect-card.ts';

interface Props {
  run: Run;
  decision: 'approve' | 'reject';
  edits: Record<string, CheckedEdit>;
  busy: boolean;
  onConfirm(): void;
  onCancel(): void;
}

export function Confirm({ run, decision, edits, busy, onConfirm, onCancel }: Props) {
  const confirmButton = useRef<HTMLButtonElement>(null);
  // Focus moves in the same task as the dialog appears: a key pressed as soon as it shows (Enter) reaches it.
  useLayoutEffect(() => confirmButton.current?.focus(), []);
  // Escape cancels wherever the focus is (a click on the backdrop moves it out of the dialog), from the
  // moment the dialog shows.
  const cancel = useRef(onCancel);
  cancel.current = onCancel;
  useLayoutEffect(() => {
    const onKey = (e: KeyboardEvent) => e.key === 'Escape' && cancel.current();
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, []);
  const effects = run.approval?.effects ?? [];
  const approve = decision === 'approve';
  return html`
    <div class="backdrop">
      <div class="dialog" role="dialog" aria-modal="true" aria-labelledby="confirm-heading" aria-describedby="confirm-body">
        <h3 id="confirm-heading">${approve ? 'Approve' : 'Reject'} run <code>${run.run_id}</code>?</h3>
        <div id="confirm-body">
          ${
            approve
              ? html`<p>${effects.length === 1 ? 'This effect happens' : `These ${effects.length} effects happen`}, with exactly these arguments:</p>
                  <ul>
                    ${effects.map((e) => html`<li><code>${e.step_id}</code> <code>${e.tool}</code> <code class="digest">${edits[e.step_id]?.args_digest ?? e.args_digest}</code>${edits[e.step_id] ? ' (edited)' : ''}</li>`)}
                  </ul>`
              : html`<p>Nothing external happens: the run ends without its effects.</p>`
          }
        </div>
        <div class="row">
          <button type="button" ref=${confirmButton} class=${approve ? 'approve' : 'reject'} disabled=${busy} onClick=${onConfirm}>${approve ? 'Confirm approval' : 'Confirm rejection'}</button>
          <button type="button" onClick=${onCancel}>Cancel</button>
        </div>
      </div>
    </div>
  `;
}
