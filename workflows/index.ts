// Every workflow the worker registers.
export { probeWorkflow } from './probe.ts';
