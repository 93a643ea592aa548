// All side effects live in activities. They receive their dependencies through
// this factory (as in the Temporal samples' dependency-injection pattern) so the
// worker process decides which database they write to.
import type { Db } from '../db/client.ts';

export interface ActivityDeps {
  db: Db;
}

export function createActivities(_deps: ActivityDeps) {
  return {
    /** Does nothing; used by probeWorkflow. */
    async noop(): Promise<void> {},
  };
}
