// One event of a run's live streams: content-free, as GET /v1/journey-events lists it, with progress always present.
import type { RunProgress } from './progress.ts';
import type { RunStatus } from './states.ts';

export interface RunEvent {
  id: string;
  kind: string;
  run_id: string;
  state: RunStatus;
  progress: RunProgress;
  created_at: string;
}
