// Row 11's anchor: a raw Temporal workflow in the shape of one analysis run of the service on the local
// provider (workflows/agent-run.ts), bundled alone for the anchor's own worker
// (scripts/bench/e2e-anchor-worker.ts). The same activities and local activities in the same order, so
// the same workflow tasks, and the same Postgres write transactions: each state change of the service
// is a local activity writing twice (its projection row and its journey event), as
// activities/projection.ts does; the hold and the settlement write once each. None of the service's
// own work: no search attributes, patches, details, payload codec, reads or run logic.
//
// A variant puts parts of the service's Temporal footprint back, to measure what they cost raw Temporal
// (BENCH_E2E_VARIANT, scripts/bench/e2e.ts): `payloads`, the service's payload sizes; `attributes`, its
// search attributes; `summary`, its start summary; `timeouts`, its tool calls' timeouts.
import { proxyActivities, proxyLocalActivities, upsertSearchAttributes } from '@temporalio/workflow';
import { RunStatusKey } from '../../domain/runs/search-attributes.ts';
import { ACTIVITY_OPTIONS, TOOL_OPTIONS } from '../../workflows/run-activities.ts';
import type { AnchorActivities } from './e2e-anchor-activities.ts';

/** The parts of the service's Temporal footprint a variant of the anchor carries. */
export const FOOTPRINT_PARTS = ['payloads', 'attributes', 'summary', 'timeouts'] as const;
export type FootprintPart = (typeof FOOTPRINT_PARTS)[number];

export interface AnchorRunInput {
  runId: string;
  /** Tool steps of the plan (runTool activities): those of the service's run, as counted in the same bench. */
  toolSteps: number;
  /** The parts of the service's footprint this run carries (none: the plain anchor). */
  footprint?: FootprintPart[];
}

// The service's timeouts and retries (workflows/run-activities.ts).
const remote = proxyActivities<AnchorActivities>(ACTIVITY_OPTIONS);
const local = proxyLocalActivities<AnchorActivities>(ACTIVITY_OPTIONS);
/** The `timeouts` part's tool calls: the service's tool timeouts (a heartbeat timeout, a longer start-to-close). */
const tools = proxyActivities<AnchorActivities>(TOOL_OPTIONS);

/**
 * The `payloads` part's bytes added to each activity's input and result: what the service's exceed
 * the plain anchor's by, read off one history of each (2026-11-29: 41.5 KB of history JSON a run
 * against 22 KB; with these, the anchor's is 38.7 KB).
 */
const PAYLOAD_BYTES = {
  estimateRun: [200, 775],
  reserveCredits: [100, 140],
  planRun: [130, 1300],
  runTool: [950, 480],
  verifyRun: [2200, 3000],
  settleRun: [970, 240],
} as const satisfies Record<string, readonly [number, number]>;

export async function anchorRunWorkflow({ runId, toolSteps, footprint = [] }: AnchorRunInput): Promise<string> {
  const carries = (part: FootprintPart) => footprint.includes(part);
  let seq = 0;
  const move = () => local.recordMove(runId, ++seq);
  /** An activity's own work (`writes` ledger entries), with the service's payload sizes (`payloads`) and tool timeouts (`timeouts`). */
  const work = (name: keyof typeof PAYLOAD_BYTES, writes: number) => {
    const [input, result] = carries('payloads') ? PAYLOAD_BYTES[name] : [0, 0];
    return (name === 'runTool' && carries('timeouts') ? tools : remote).work(runId, writes, 'x'.repeat(input), result);
  };
  /** The service's status upserts, where it makes them (`attributes`): an analysis run's only one is at its end (indexesMove). */
  const status = (value: string) => {
    if (carries('attributes')) upsertSearchAttributes([{ key: RunStatusKey, value }]);
  };
  await move(); // accepted
  await move(); // planning (estimate)
  await work('estimateRun', 0);
  await move(); // reserve
  await work('reserveCredits', 1); // the hold
  await move(); // plan
  await work('planRun', 0);
  await move(); // executing
  for (let i = 0; i < toolSteps; i++) {
    if (i > 0) await move(); // the step before finished
    await work('runTool', 0);
  }
  await move(); // the last step finished
  await move(); // verifying
  await work('verifyRun', 0);
  await move(); // settle
  await work('settleRun', 1); // the charge
  status('needs_attention');
  await move(); // the end
  await local.work(runId, 0); // the end's notification targets
  return 'ended';
}
