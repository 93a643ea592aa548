// The list: runs awaiting approval (newest first), then the runs decided while this page was open.
import { html } from 'htm/preact';
import { effectCount, holdOf, stateWords, timeLeft } from '../format.ts';
import type { Run } from '../types.ts';

interface Props {
  waiting: Run[];
  decided: Run[];
  selected: string | null;
  now: number;
  onSelect(runId: string): void;
}

function Item({ run, selected, now, onSelect }: { run: Run; selected: boolean; now: number; onSelect(id: string): void }) {
  const waiting = run.status === 'awaiting_approval';
  return html`
    <li>
      <button class="run-item${selected ? ' selected' : ''}" aria-current=${selected ? 'true' : undefined} data-run-id=${run.run_id} onClick=${() => onSelect(run.run_id)}>
        <span class="request">${run.input}</span>
        <span class="facts">
          ${
            waiting && run.approval
              ? html`<span class="deadline">${timeLeft(run.approval.deadline, now)}</span>`
              : html`<span class="state state-${run.status}">${stateWords(run.status)}</span>`
          }
          <span>${holdOf(run)}</span>
          <span>${effectCount(run)}</span>
        </span>
      </button>
    </li>
  `;
}

export function RunList({ waiting, decided, selected, now, onSelect }: Props) {
  return html`
    <nav class="run-list" aria-label="Runs">
      <h2 id="waiting-heading">Awaiting approval <span class="count">${waiting.length}</span></h2>
      ${
        waiting.length === 0
          ? html`<p class="empty">No run is waiting. New ones appear here by themselves.</p>`
          : html`<ul aria-labelledby="waiting-heading">
              ${waiting.map((run) => html`<${Item} key=${run.run_id} run=${run} selected=${run.run_id === selected} now=${now} onSelect=${onSelect} />`)}
            </ul>`
      }
      ${
        decided.length > 0 &&
        html`<h2 id="decided-heading">Decided here or elsewhere</h2>
          <ul aria-labelledby="decided-heading">
            ${decided.map((run) => html`<${Item} key=${run.run_id} run=${run} selected=${run.run_id === selected} now=${now} onSelect=${onSelect} />`)}
          </ul>`
      }
      <p class="keys">Keys: <kbd>j</kbd>/<kbd>k</kbd> move, <kbd>a</kbd> approve, <kbd>r</kbd> reject.</p>
    </nav>
  `;
}
