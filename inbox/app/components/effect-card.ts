// One external effect awaiting a decision: its tool and server, its class and why it is in the plan,
// the exact arguments (a delivery's message first), their digest, and an editor whose edit the API
// checks against the tool's schema and answers with the new digest before anyone approves.
import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { type Api, ApiError } from '../api.ts';
import { argumentsText } from '../format.ts';
import type { Effect } from '../types.ts';

export interface CheckedEdit {
  arguments: Record<string, unknown>;
  args_digest: string;
  proposed_digest: string;
}

interface Props {
  api: Api;
  runId: string;
  effect: Effect;
  pending: boolean;
  edit: CheckedEdit | undefined;
  onEdit(stepId: string, edit: CheckedEdit | undefined, open: boolean): void;
}

function Message({ args }: { args: Record<string, unknown> | undefined }) {
  const message = args?.message;
  if (typeof message !== 'string') return null;
  return html`<div class="message-block"><h5>Message to be sent</h5><blockquote class="message">${message}</blockquote></div>`;
}

export function EffectCard({ api, runId, effect, pending, edit, onEdit }: Props) {
  const [draft, setDraft] = useState<string | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [checking, setChecking] = useState(false);
  const fieldId = `edit-${effect.step_id}`;

  async function check() {
    if (draft === null) return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(draft);
    } catch (err) {
      return setProblem(`Not JSON: ${(err as Error).message}`);
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return setProblem('The arguments must be a JSON object.');
    setChecking(true);
    setProblem(null);
    try {
      const effects = await api.preview(runId, [{ step_id: effect.step_id, arguments: parsed as Record<string, unknown> }]);
      const previewed = effects.find((e) => e.step_id === effect.step_id);
      if (!previewed?.args_digest || !previewed.arguments) return setProblem('The API did not answer this step.');
      onEdit(
        effect.step_id,
        { arguments: previewed.arguments, args_digest: previewed.args_digest, proposed_digest: previewed.proposed_digest ?? effect.args_digest ?? '' },
        false,
      );
      setDraft(null);
    } catch (err) {
      setProblem(err instanceof ApiError ? err.message : `Could not check the edit: ${(err as Error).message}`);
    } finally {
      setChecking(false);
    }
  }

  const open = (text: string) => {
    setDraft(text);
    setProblem(null);
    onEdit(effect.step_id, edit, true);
  };
  const discard = () => {
    setDraft(null);
    setProblem(null);
    onEdit(effect.step_id, undefined, false);
  };

  return html`
    <article class="effect" aria-labelledby=${`effect-${effect.step_id}`}>
      <h4 id=${`effect-${effect.step_id}`}>${effect.step_id}: <code>${effect.tool}</code></h4>
      <dl>
        ${effect.server && html`<dt>Server</dt><dd><code>${effect.server}</code>, tool <code>${effect.server_tool ?? effect.tool}</code></dd>`}
        <dt>Effect class</dt><dd>external: happens only once approved</dd>
        <dt>Why it is in the plan</dt><dd>${effect.why}</dd>
        ${effect.message_from && html`<dt>Sends</dt><dd>the result of action ${effect.message_from.action}, "${effect.message_from.request}"</dd>`}
      </dl>
      ${
        edit
          ? html`<div class="edited">
              <${Message} args=${edit.arguments} />
              <h5>Edited arguments (checked; what will be sent)</h5>
              <pre class="arguments">${argumentsText(edit.arguments)}</pre>
              <p>New args_digest <code class="digest">${edit.args_digest}</code></p>
              <p>Proposed args_digest <code class="digest">${edit.proposed_digest}</code></p>
            </div>`
          : html`<${Message} args=${effect.arguments} />
              <h5>Arguments (exactly what will be sent)</h5>
              <pre class="arguments">${argumentsText(effect.arguments)}</pre>
              <p>args_digest <code class="digest">${effect.args_digest ?? 'none'}</code></p>`
      }
      ${
        pending &&
        (draft === null
          ? html`<div class="row">
              <button type="button" onClick=${() => open(argumentsText(edit?.arguments ?? effect.arguments))}>Edit arguments</button>
              ${edit && html`<button type="button" onClick=${discard}>Discard edit</button>`}
            </div>`
          : html`<div class="editor">
              <label for=${fieldId}>Arguments of ${effect.step_id} (JSON)</label>
              <textarea id=${fieldId} rows="6" spellcheck="false" value=${draft} onInput=${(e: Event) => setDraft((e.target as HTMLTextAreaElement).value)}></textarea>
              <div class="row">
                <button type="button" onClick=${check} disabled=${checking}>Check edit</button>
                <button type="button" onClick=${discard}>Discard edit</button>
              </div>
              ${problem && html`<p class="error" role="alert">${problem}</p>`}
            </div>`)
      }
    </article>
  `;
}
