// A run's end: what was performed and not, what stays unresolved, and how it was verified.
import { html } from 'htm/preact';
import type { Run } from '../types.ts';

const list = (items: string[], empty: string) =>
  items.length === 0 ? html`<p class="none">${empty}</p>` : html`<ul>${items.map((i) => html`<li>${i}</li>`)}</ul>`;

export function Receipt({ run }: { run: Run }) {
  const receipt = run.receipt;
  if (!receipt) return html`<p>The run ended without a receipt${run.failure ? html`: ${run.failure.message}` : ''}.</p>`;
  const boundary = receipt.action_boundary;
  return html`
    <section class="receipt" aria-labelledby="receipt-heading">
      <h3 id="receipt-heading">Receipt</h3>
      <dl>
        <dt>Verification class</dt><dd class="verification">${receipt.verification_class}</dd>
        <dt>Receipt id</dt><dd><code>${receipt.receipt_id}</code></dd>
        ${run.usage && html`<dt>Charged</dt><dd>${run.usage.charged} credits</dd>`}
      </dl>
      <h4>Effects performed</h4>
      ${list(boundary.effects_performed, 'None.')}
      ${
        boundary.approved_by?.length
          ? html`<h4>Approved by</h4>${list(
              boundary.approved_by.map((a) => `${a.effect}: ${a.name}${a.key_id ? ` (${a.key_id})` : ''}`),
              'None.',
            )}`
          : ''
      }
      <h4>Effects not performed</h4>
      ${list([...boundary.effects_not_performed, ...boundary.effects_outcome_unknown.map((e) => `${e} (outcome unknown)`)], 'None.')}
      <h4>Unresolved</h4>
      ${list(receipt.unresolved, 'Nothing: every requested action was done and checked.')}
      ${run.result?.summary && html`<h4>Summary</h4><p>${run.result.summary}</p>`}
    </section>
  `;
}
