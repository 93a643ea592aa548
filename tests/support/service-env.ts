// The environment of a service process a test spawns (bin/api.ts, bin/worker.ts, the crashing
// worker): the test run's Postgres, Temporal, workflow bundle and payload key, and `extra`.
import { inject } from 'vitest';
import { withoutUserTemporalSettings } from '../../config/temporal-env.ts';
import { payloadEnv } from './payload-codec.ts';

export function serviceEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  return {
    ...withoutUserTemporalSettings(process.env),
    NODE_ENV: 'test',
    LOG_LEVEL: 'warn',
    DATABASE_URL: inject('databaseUrl'),
    ...payloadEnv(),
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    WORKFLOW_BUNDLE_PATH: inject('workflowBundlePath'),
    ...extra,
  };
}
