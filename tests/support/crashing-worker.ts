// A worker process for fault drills: like bin/worker.ts, but it kills itself
// (SIGKILL, no cleanup) right after the first attempt of the activity named by
// CRASH_AFTER_ACTIVITY has done its work and before it reports completion, so
// Temporal must retry an activity whose effect has already committed; or, with
// CRASH_AFTER_TRANSITION, right after the projection write (a local activity)
// of the move to that run state committed, before the workflow task completes; or, with
// CRASH_DURING_TOOL_CALL=<server>__<tool>, right after that tool server answered a call, before the
// activity could record the call as done (the effect happened; the service cannot know it did).
//   CRASH_AFTER_ACTIVITY=settleRun node --import tsx tests/support/crashing-worker.ts
//   CRASH_AFTER_TRANSITION=awaiting_approval node --import tsx tests/support/crashing-worker.ts
//   CRASH_DURING_TOOL_CALL=files__write_file TOOL_SERVERS_FILE=… node --import tsx tests/support/crashing-worker.ts
import { Context } from '@temporalio/activity';
import { pino } from 'pino';
import { loadConfig } from '../../config/env.ts';
import { openPostgres } from '../../db/client.ts';
import { activityDeps } from '../../runtime/compose-activities.ts';
import { payloadCodecFor, resolvePayloadKeyring } from '../../runtime/payload-keys.ts';
import { startWorker } from '../../runtime/worker.ts';

const crashAfter = process.env.CRASH_AFTER_ACTIVITY;
const crashAfterTransition = process.env.CRASH_AFTER_TRANSITION;
const crashDuringToolCall = process.env.CRASH_DURING_TOOL_CALL;
const config = loadConfig();
const database = openPostgres(config.database.url!, 4);
const activities = activityDeps(config, database.db);
const callTool = activities.toolServers.call.bind(activities.toolServers);
activities.toolServers.call = async (tool, args, options) => {
  const result = await callTool(tool, args, options);
  if (tool.name === crashDuringToolCall) process.kill(process.pid, 'SIGKILL');
  return result;
};
await startWorker({
  temporal: config.temporal.connection,
  taskQueue: config.temporal.taskQueue,
  activities,
  payloadCodec: payloadCodecFor(resolvePayloadKeyring(config, { allowDataDirKey: false })), // PAYLOAD_KEY from the test's environment
  logger: pino({ level: 'silent' }),
  workflowBundlePath: config.temporal.workflowBundlePath,
  // The same build as the test's in-process workers: one task queue, one deployment version.
  versioning: config.temporal.versioning,
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
