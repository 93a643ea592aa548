// This service's custom search attributes, so runs filter by status and tenant
// in the Temporal Web UI and CLI. Pure: shared by workflows (to upsert them), services (to start runs with them) and
// the runtime (to register them on the server).
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const RunStatusKey = defineSearchAttributeKey('RunStatus', SearchAttributeType.KEYWORD);
export const TenantIdKey = defineSearchAttributeKey('TenantId', SearchAttributeType.KEYWORD);

/** Name and type of every custom search attribute, as `temporal server start-dev --search-attribute` takes them. */
export const CUSTOM_SEARCH_ATTRIBUTES: Record<string, 'Keyword'> = {
  [RunStatusKey.name]: 'Keyword',
  [TenantIdKey.name]: 'Keyword',
};
