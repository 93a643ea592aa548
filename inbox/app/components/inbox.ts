// The signed-in page: the live list, the selected run, decisions with their confirmation, and keys.
// Runs are fetched when the stream says one changed; the stream itself is shared per API process.
import { html } from 'htm/preact';
import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { type Api, ApiError, apiClient } from '../api.ts';
import { stateWords } from '../format.ts';
import type { Approver, Run, RunEvent } from '../types.ts';
import { Confirm } from './confirm.ts';
import type { CheckedEdit } from './effect-card.ts';
import { RunDetail } from './run-detail.ts';
import { RunList } from './run-list.ts';

type Notice = { text: string; alert: boolean };
/** Runs decided while the page is open stay listed, up to this many. */
const DECIDED_KEPT = 20;

const newestFirst = (a: Run, b: Run) => b.created_at.localeCompare(a.created_at);
const typing = (target: EventTarget | null) =>
  target instanceof HTMLElement && (target.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName));

/** Keeps the runs the page knows, refetching one whenever the stream says it changed (one fetch at a time per run). */
function useRuns(api: Api) {
  const [runs, setRuns] = useState<Record<string, Run>>({});
  const known = useRef(new Set<string>());
  const inFlight = useRef(new Map<string, boolean>());

  const upsert = useCallback((run: Run) => {
    known.current.add(run.run_id);
    setRuns((all) => ({ ...all, [run.run_id]: run }));
  }, []);

  const refresh = useCallback(
    async (runId: string) => {
      if (inFlight.current.has(runId)) return void inFlight.current.set(runId, true); // fetch again when this one ends
      inFlight.current.set(runId, false);
      try {
        upsert(await api.run(runId));
      } catch {
        // Gone or unreachable: the next event or reconnect fetches it again.
      } finally {
        const again = inFlight.current.get(runId);
        inFlight.current.delete(runId);
        if (again) void refresh(runId);
      }
    },
    [api, upsert],
  );

  const reload = useCallback(async () => {
    const waiting = await api.waitingRuns();
    for (const run of waiting) upsert(run);
    // Runs listed as waiting before a reconnect that are not waiting now were decided meanwhile.
    const now = new Set(waiting.map((r) => r.run_id));
    setRuns((all) => {
      for (const run of Object.values(all)) if (run.status === 'awaiting_approval' && !now.has(run.run_id)) void refresh(run.run_id);
      return all;
    });
  }, [api, upsert, refresh]);

  const onEvent = useCallback(
    (e: RunEvent) => {
      if (known.current.has(e.run_id) || e.state === 'awaiting_approval') void refresh(e.run_id);
    },
    [refresh],
  );
  return { runs, upsert, refresh, reload, onEvent };
}

export function Inbox({ apiKey, onSignOut }: { apiKey: string; onSignOut(): void }) {
  const api = useMemo(() => apiClient(apiKey), [apiKey]);
  const { runs, upsert, reload, onEvent } = useRuns(api);
  const [status, setStatus] = useState<'connecting' | 'live' | 'reconnecting'>('connecting');
  const [selected, setSelected] = useState<string | null>(null);
  const [now, setNow] = useState(Date.now());
  const [notices, setNotices] = useState<Record<string, Notice>>({});
  const [reason, setReason] = useState('');
  const [edits, setEdits] = useState<Record<string, CheckedEdit>>({});
  const [openEditors, setOpenEditors] = useState<string[]>([]);
  const [confirming, setConfirming] = useState<'approve' | 'reject' | null>(null);
  const [busy, setBusy] = useState(false);
  const [me, setMe] = useState<Approver | null>(null);

  useEffect(() => {
    api.me().then(setMe, (err: unknown) => {
      if (err instanceof ApiError && err.status === 401) onSignOut();
    });
  }, [api, onSignOut]);

  useEffect(() => {
    const controller = new AbortController();
    void api.follow({ onReady: () => void reload().catch(() => {}), onEvent, onStatus: setStatus, onSignedOut: onSignOut }, controller.signal);
    return () => controller.abort();
  }, [api, reload, onEvent, onSignOut]);

  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 1_000);
    return () => clearInterval(timer);
  }, []);

  const all = Object.values(runs);
  const waiting = all.filter((r) => r.status === 'awaiting_approval').sort(newestFirst);
  const decided = all
    .filter((r) => r.status !== 'awaiting_approval')
    .sort((a, b) => b.updated_at.localeCompare(a.updated_at))
    .slice(0, DECIDED_KEPT);
  const order = [...waiting, ...decided];
  const current = (selected && runs[selected]) || waiting[0] || null;

  const select = useCallback((runId: string) => {
    setSelected(runId);
    setReason('');
    setEdits({});
    setOpenEditors([]);
    setConfirming(null);
  }, []);

  const pending = current?.status === 'awaiting_approval' && current.approval?.state === 'pending';
  const ask = (decision: 'approve' | 'reject') => {
    if (!pending || (decision === 'approve' && openEditors.length > 0)) return;
    setConfirming(decision);
  };

  async function confirm() {
    if (!current || !confirming || !current.approval) return;
    const runId = current.run_id;
    const decision = confirming;
    setBusy(true);
    const edited = Object.entries(edits).map(([step_id, e]) => ({ step_id, arguments: e.arguments }));
    try {
      const run = await api.decide(runId, {
        decision,
        ...(reason.trim() ? { reason: reason.trim() } : {}),
        digests: current.approval.effects.flatMap((e) => (e.args_digest ? [e.args_digest] : [])),
        ...(decision === 'approve' && edited.length > 0 ? { edits: edited } : {}),
      });
      upsert(run);
      const needed = run.approval?.state === 'pending' ? (run.approval.approvals_needed ?? 0) : 0;
      const text =
        decision === 'reject'
          ? 'Rejected. Nothing external happens.'
          : needed > 0
            ? `Approved by you; ${needed} more approval${needed === 1 ? '' : 's'} needed from other approvers.`
            : 'Approved. Its progress shows here until the receipt.';
      setNotices((n) => ({ ...n, [runId]: { text, alert: false } }));
    } catch (err) {
      if (err instanceof ApiError && err.code === 'already_approved') {
        setNotices((n) => ({ ...n, [runId]: { text: 'You already approved this; another approver must approve it too.', alert: false } }));
      } else if (err instanceof ApiError && err.status === 403) {
        setNotices((n) => ({ ...n, [runId]: { text: `Not recorded: ${err.message}`, alert: true } }));
      } else if (err instanceof ApiError && err.status === 409) {
        // Decided or changed elsewhere: show what the run is now instead of an error.
        const latest = await api.run(runId).catch(() => null);
        if (latest) upsert(latest);
        const state = latest ? `${stateWords(latest.status)}${latest.approval ? `, approval ${latest.approval.state}` : ''}` : 'changed';
        setNotices((n) => ({ ...n, [runId]: { text: `This run was decided or changed elsewhere. It is now ${state}.`, alert: false } }));
      } else {
        setNotices((n) => ({ ...n, [runId]: { text: `The decision was not recorded: ${(err as Error).message}`, alert: true } }));
      }
    } finally {
      setBusy(false);
      setConfirming(null);
      setEdits({});
      setOpenEditors([]);
    }
  }

  // One listener for the page's life, calling the latest handler: a listener re-added after each render
  // would, until the effect ran, still see the state from before (a key pressed right after closing
  // the confirmation would be ignored).
  const onKey = useRef<(e: KeyboardEvent) => void>(() => {});
  onKey.current = (e: KeyboardEvent) => {
    if (e.altKey || e.ctrlKey || e.metaKey || typing(e.target) || confirming) return;
    const at = current ? order.findIndex((r) => r.run_id === current.run_id) : -1;
    if (e.key === 'j' || e.key === 'k') {
      const next = order[Math.min(Math.max(at + (e.key === 'j' ? 1 : -1), 0), order.length - 1)];
      if (next) {
        select(next.run_id);
        document.querySelector<HTMLElement>(`[data-run-id="${next.run_id}"]`)?.focus();
      }
    } else if (e.key === 'a') ask('approve');
    else if (e.key === 'r') ask('reject');
    else return;
    e.preventDefault();
  };
  useEffect(() => {
    const listener = (e: KeyboardEvent) => onKey.current(e);
    document.addEventListener('keydown', listener);
    return () => document.removeEventListener('keydown', listener);
  }, []);

  const onEdit = useCallback((stepId: string, edit: CheckedEdit | undefined, open: boolean) => {
    setEdits(({ [stepId]: _, ...rest }) => (edit ? { ...rest, [stepId]: edit } : rest));
    setOpenEditors((ids) => (open ? [...ids.filter((i) => i !== stepId), stepId] : ids.filter((i) => i !== stepId)));
  }, []);

  return html`
    <header class="top">
      <h1>Approvals inbox</h1>
      ${me && html`<span class="me">Signed in as ${me.name}</span>`}
      <span class="connection connection-${status}" role="status">${status === 'live' ? 'Live' : status === 'connecting' ? 'Connecting…' : 'Reconnecting…'}</span>
      <button type="button" onClick=${onSignOut}>Sign out</button>
    </header>
    <div class="layout">
      <${RunList} waiting=${waiting} decided=${decided} selected=${current?.run_id ?? null} now=${now} onSelect=${select} />
      <main class="detail">
        ${
          current
            ? html`<${RunDetail}
                api=${api}
                me=${me}
                run=${current}
                now=${now}
                notice=${notices[current.run_id]}
                reason=${reason}
                onReason=${setReason}
                edits=${edits}
                openEditors=${openEditors}
                onEdit=${onEdit}
                onAsk=${ask}
              />`
            : html`<p class="empty">Select a run to see what it would do.</p>`
        }
      </main>
    </div>
    ${current && confirming && html`<${Confirm} run=${current} decision=${confirming} edits=${edits} busy=${busy} onConfirm=${confirm} onCancel=${() => setConfirming(null)} />`}
  `;
}
