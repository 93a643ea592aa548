// Row 13's anchor: a raw Temporal workflow that makes the tool-calling run's model turns and tool calls
// as activities (scripts/bench/tools-anchor-worker.ts), and waits for an approval Update before its
// external call, as the service's run does; nothing else (no projection, ledger, journey or receipt).
import { condition, defineUpdate, proxyActivities, setHandler } from '@temporalio/workflow';
import type { toolAnchorActivities } from './tools-anchor-worker.ts';

const act = proxyActivities<ReturnType<typeof toolAnchorActivities>>({ startToCloseTimeout: '30 seconds' });

/** Approves the waiting call; sent at once after the start, it returns once the run waits and has been approved. */
export const approveUpdate = defineUpdate<void>('approve');

export async function toolRunAnchorWorkflow(input: string): Promise<number> {
  let waiting = false;
  let approved = false;
  setHandler(approveUpdate, async () => {
    await condition(() => waiting);
    approved = true;
  });
  const transcript: unknown[] = [];
  for (let turn = 1; turn <= 6; turn++) {
    const out = await act.anchorTurn({ input, transcript });
    if (out.calls.length === 0) return turn;
    transcript.push(out.assistant);
    for (const call of out.calls) {
      let result: unknown;
      if (call.name === 'webhook_delivery') {
        waiting = true;
        await condition(() => approved);
        result = await act.anchorDeliver({ args: call.arguments });
      } else {
        result = await act.anchorRead({ input, tool: call.name, args: call.arguments });
      }
      transcript.push({ role: 'tool', tool_call_id: call.id, content: JSON.stringify(result) });
    }
  }
  return -1;
}
