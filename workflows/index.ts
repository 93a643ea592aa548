// Every workflow the worker registers.
export { agentRunWorkflow } from './agent-run.ts';
export { purgeJourneyEventsWorkflow } from './journey-retention.ts';
export { probeWorkflow } from './probe.ts';
export { reconcileRunsWorkflow } from './reconcile.ts';
export { notifyRunWorkflow } from './notify-run.ts';
