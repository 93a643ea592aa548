// Which workflow histories the replay test requires, shared with scripts/record-histories.ts.

/**
 * The workflow code's history version. v1: before projection writes became local activities; v2: after;
 * v3: approvals audited by the workflow, notifications, failed runs ending their execution Failed;
 * v4: the status search attribute upserted only when the status changes; v5: those changes under one patch,
 * and no status upsert at the first move; v6: runs that take them by their input (AgentRunInput.behaviour),
 * with no patch marker at all; v7: behaviour 2, the status search attribute upserted only where an operator
 * acts (the approval wait, the decision, the end), under a patch as the recorder's worker is unversioned;
 * v8: upstream runs by the tool-calling protocol (workflows/tool-calling.ts), one approval round or two.
 */
export const HISTORY_VERSION = 'v8';

/** Every path a run can take; each version records one history per path. */
export const HISTORY_PATHS = [
  'approved-with-memory',
  'rejected',
  'expired',
  'cancelled',
  'insufficient-credits',
  'over-budget',
  'failing-tool',
  'read-only',
  'upstream-agent-loop',
  'upstream-rounds',
  'operator-decisions',
] as const;
export type HistoryPath = (typeof HISTORY_PATHS)[number];

/**
 * The payload key histories are recorded with (scripts/record-histories.ts) and replayed with
 * (tests/replay.test.ts). Not a secret: fixtures hold test data only, and the key is here so
 * that a recorded, encrypted history replays anywhere. Histories recorded before the payload
 * codec (v1, v2) are plaintext; the codec passes them through.
 */
export const FIXTURE_PAYLOAD_KEY = { id: 'history-fixtures', base64: '6tiU5s8MrpcvTnqRvkbiAjidxGB/XdkNYJbWZXej5Po=' } as const;
