// Row 13's anchor: a raw Temporal workflow that makes the tool-calling run's model turns and tool calls
// as activities (scripts/bench/tools-anchor-worker.ts), and waits for an approval Update before its
// external call, as the service's run does. With `shape` (the default, BENCH_TOOLS_ANCHOR=shape) it is
// in the shape of the service's run as row 11's anchor is (scripts/bench/e2e-workflow.ts): the same
// activities and local activities in the same order, so the same workflow tasks, and the same Postgres
// write transactions (each state change a local activity writing the run's row and an event; the hold,
// the audit and the settlement one write each), and none of the service's own work. Without it
// (BENCH_TOOLS_ANCHOR=calls) it makes the turns and calls only.
import { condition, defineUpdate, proxyActivities, proxyLocalActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import { ACTIVITY_OPTIONS } from '../../workflows/run-activities.ts';
import type { AnchorActivities } from './e2e-anchor-activities.ts';
import type { toolAnchorActivities } from './tools-anchor-worker.ts';

const act = proxyActivities<ReturnType<typeof toolAnchorActivities>>({ startToCloseTimeout: '30 seconds' });
// The service's timeouts and retries (workflows/run-activities.ts).
const remote = proxyActivities<AnchorActivities>(ACTIVITY_OPTIONS);
const local = proxyLocalActivities<AnchorActivities>(ACTIVITY_OPTIONS);

/** Approves the waiting call; sent at once after the start, it returns once the run waits and has been approved. */
export const approveUpdate = defineUpdate<void>('approve');

export async function toolRunAnchorWorkflow(input: string, shape = false): Promise<number> {
  const runId = workflowInfo().workflowId;
  let seq = 0;
  /** A state change of the service's run (its projection row and journey event), where the service makes one. */
  const move = async () => {
    if (shape) await local.recordMove(runId, ++seq);
  };
  /** One of the service's own activities around the loop, with its ledger or audit writes. */
  const work = async (writes: number) => {
    if (shape) await remote.work(runId, writes);
  };
  let waiting = false;
  let approved = false;
  setHandler(approveUpdate, async () => {
    await condition(() => waiting);
    await work(1); // the decision's audit, before anything it allows
    approved = true;
  });
  await move(); // accepted
  await move(); // planning (estimate)
  await work(0); // the estimate
  await move(); // reserve
  await work(1); // the hold
  await move(); // plan
  await work(0); // the offered server tools
  const transcript: unknown[] = [];
  for (let turn = 1; turn <= 6; turn++) {
    const out = await act.anchorTurn({ input, transcript });
    if (out.calls.length === 0) {
      await move(); // verifying
      await work(0); // verification
      await move(); // settle
      await work(1); // the charge
      await move(); // the end
      if (shape) await local.work(runId, 0); // the end's notification targets
      return turn;
    }
    transcript.push(out.assistant);
    for (const call of out.calls) {
      let result: unknown;
      if (call.name === 'webhook_delivery') {
        await move(); // awaiting_approval
        waiting = true;
        await condition(() => approved);
        await move(); // executing
        result = await act.anchorDeliver({ args: call.arguments });
      } else {
        result = await act.anchorRead({ input, tool: call.name, args: call.arguments });
      }
      await move(); // the step finished
      transcript.push({ role: 'tool', tool_call_id: call.id, content: JSON.stringify(result) });
    }
  }
  return -1;
}
