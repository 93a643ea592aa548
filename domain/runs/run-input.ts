// What starts a run's workflow: its arguments and its workflow type's name. Here, not in
// workflows/, so that the services that start runs need nothing from the workflow code.
import type { ModelId } from '../models.ts';
import type { ApprovalPolicy } from './approval-policy.ts';

/** The registered name of the run's workflow function (workflows/agent-run.ts agentRunWorkflow). */
export const AGENT_RUN_WORKFLOW = 'agentRunWorkflow';

/**
 * The behaviour a run started now takes (AgentRunInput.behaviour). 1: every change made so far under
 * a patch, without asking the patch (workflows/run-context.ts). 2: also the status search attribute
 * changed only where an operator acts (domain/runs/search-attributes.ts indexesMove).
 */
export const RUN_BEHAVIOUR = 2;

export interface AgentRunInput {
  runId: string;
  tenantId: string;
  input: string;
  memory: boolean;
  approvalTimeoutMs: number;
  /** Absent in runs started before runs took a model: svc-workspace. */
  model?: ModelId;
  /**
   * Fixed by whoever starts the run (RUN_BEHAVIOUR): which changes it takes without asking a patch.
   * Asking costs every run a marker event and a TemporalChangeVersion upsert (a visibility write).
   * Absent in runs started before: their workflow asks its patches.
   */
  behaviour?: number;
  /** The tenant's approval policies when the run was created (no content: scopes, counts, key ids); absent: one approval by anyone. */
  approvalPolicies?: ApprovalPolicy[];
  /**
   * Set only by the run's own workflow when it continues as new onto a newer build while it awaits
   * approval: the state it carries over (workflows/run-resume.ts ApprovalWait). Services never set it.
   */
  resume?: unknown;
}
