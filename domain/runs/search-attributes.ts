// This service's custom search attributes, so runs filter by status and tenant
// in the Temporal Web UI and CLI. Pure: shared by workflows (to upsert them), services (to start runs with them) and
// the runtime (to register them on the server).
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { isTerminal, type RunStatus } from './states.ts';

export const RunStatusKey = defineSearchAttributeKey('RunStatus', SearchAttributeType.KEYWORD);
export const TenantIdKey = defineSearchAttributeKey('TenantId', SearchAttributeType.KEYWORD);

/** Name and type of every custom search attribute, as `temporal server start-dev --search-attribute` takes them. */
export const CUSTOM_SEARCH_ATTRIBUTES: Record<string, 'Keyword'> = {
  [RunStatusKey.name]: 'Keyword',
  [TenantIdKey.name]: 'Keyword',
};

/**
 * Whether a run's move from `from` to `to` changes its `RunStatus` attribute (runs of behaviour 2 and
 * later): only where an operator acts. It starts `accepted`, and changes when the run begins or stops
 * waiting for a person and when it ends. The working states in between (planning, verifying) last
 * seconds; the API and the `state` query show them. Each upsert is a history event, a visibility
 * write and, on Temporal Cloud, a billed action: an analysis run makes one instead of four.
 */
export function indexesMove(from: RunStatus, to: RunStatus): boolean {
  return from !== to && (to === 'awaiting_approval' || from === 'awaiting_approval' || isTerminal(to));
}
