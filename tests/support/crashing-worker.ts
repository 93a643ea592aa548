// A worker process for fault drills: like bin/worker.ts, but it kills itself
// (SIGKILL, no cleanup) right after the first attempt of the activity named by
// CRASH_AFTER_ACTIVITY has done its work and before it reports completion, so
// Temporal must retry an activity whose effect has already committed; or, with
// CRASH_AFTER_TRANSITION, right after the projection write (a local activity)
// of the move to that run state committed, before the workflow task completes.
//   CRASH_AFTER_ACTIVITY=settleRun node --import tsx tests/support/crashing-worker.ts
//   CRASH_AFTER_TRANSITION=awaiting_approval node --import tsx tests/support/crashing-worker.ts
import { Context } from '@temporalio/activity';
import { pino } from 'pino';
import { loadConfig } from '../../config/env.ts';
import { openPostgres } from '../../db/client.ts';
import { activityDeps } from '../../runtime/compose-activities.ts';
import { payloadCodecFor, resolvePayloadKeyring } from '../../runtime/payload-keys.ts';
import { startWorker } from '../../runtime/worker.ts';

const crashAfter = process.env.CRASH_AFTER_ACTIVITY;
const crashAfterTransition = process.env.CRASH_AFTER_TRANSITION;
const config = loadConfig();
const database = openPostgres(config.database.url!, 4);
await startWorker({
  address: config.temporal.address!,
  namespace: config.temporal.namespace,
  taskQueue: config.temporal.taskQueue,
  activities: activityDeps(config, database.db),
  payloadCodec: payloadCodecFor(resolvePayloadKeyring(config, { allowDataDirKey: false })), // PAYLOAD_KEY from the test's environment
  logger: pino({ level: 'silent' }),
  workflowBundlePath: config.temporal.workflowBundlePath,
  interceptors: {
    activity: [
      () => ({
        inbound: {
          async execute(input, next) {
            const result = await next(input);
            const { activityType, attempt } = Context.current().info;
            if (activityType === crashAfter && attempt === 1) process.kill(process.pid, 'SIGKILL');
            const moved = (input.args[0] as { status?: string } | undefined)?.status;
            if (activityType === 'recordTransition' && crashAfterTransition && moved === crashAfterTransition) process.kill(process.pid, 'SIGKILL');
            return result;
          },
        },
      }),
    ],
  },
});
