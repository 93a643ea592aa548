// Which workflow histories the replay test requires, shared with scripts/record-histories.ts.

/** The workflow code's history version. v1: before projection writes became local activities; v2: after. */
export const HISTORY_VERSION = 'v2';

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
] as const;
export type HistoryPath = (typeof HISTORY_PATHS)[number];
