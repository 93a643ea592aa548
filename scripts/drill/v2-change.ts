// The rollout drill's v2 build (scripts/drill/rollout.ts): the run workflow with one change that is
// incompatible with v1 histories, made on purpose without a patch: a new activity before settle. A v1
// history that already scheduled settle, replayed by this build, meets the new activity where it recorded
// settle: a non-determinism error. Bundled as a workflow interceptor module into v2's bundle only.
import { proxyActivities, type WorkflowInterceptorsFactory } from '@temporalio/workflow';
import type { createActivities } from '../../activities/index.ts';

const { noop } = proxyActivities<ReturnType<typeof createActivities>>({ startToCloseTimeout: '10 seconds' });

export const interceptors: WorkflowInterceptorsFactory = () => ({
  outbound: [
    {
      async scheduleActivity(input, next) {
        if (input.activityType === 'settleRun') await noop();
        return next(input);
      },
    },
  ],
});
