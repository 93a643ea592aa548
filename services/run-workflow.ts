// Starting a run's workflow (workflow id = run id), shared by the API (on
// create) and the reconciler (for rows whose workflow never started). Safe to
// repeat: a running workflow is reused, a closed one is left alone.
import { type Client, WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError } from '@temporalio/client';
import type { ModelId } from '../domain/models.ts';
import type { ApprovalPolicy } from '../domain/runs/approval-policy.ts';
import { AGENT_RUN_WORKFLOW, type AgentRunInput, RUN_BEHAVIOUR } from '../domain/runs/run-input.ts';
import { RunStatusKey, TenantIdKey } from '../domain/runs/search-attributes.ts';
import type { RunRow } from './runs.ts';

export interface RunWorkflowSettings {
  taskQueue: string;
  approvalTimeoutMs: number;
}

/**
 * What the Temporal UI shows for the run from its start (no content): tenant name and id and model.
 * Which external effects it takes is the model's plan and a person's approval, shown in the current
 * details when they exist; no reading of the input's words guesses them here.
 */
export function runSummary(run: RunRow, tenantName: string | null): { staticSummary: string; staticDetails: string } {
  const tenant = tenantName ? `${tenantName} (${run.tenantId})` : run.tenantId;
  return {
    staticSummary: `Run for ${tenant} on ${run.model}`,
    staticDetails: [
      `**Tenant:** ${tenant}`,
      `**Run:** ${run.id}`,
      `**Model:** ${run.model}; memory ${run.memory ? 'on' : 'off'}`,
      "**External effects:** each needs a person's approval before it runs; the current details name them while they wait",
      'Live state: the current details below and the `state` query. The RunStatus search attribute changes where an operator acts: awaiting approval, decided, ended.',
    ].join('\n\n'),
  };
}

export async function startRunWorkflow(client: Client, settings: RunWorkflowSettings, run: RunRow, tenantName: string | null = null): Promise<void> {
  const args: AgentRunInput = {
    runId: run.id,
    tenantId: run.tenantId,
    input: run.input,
    memory: run.memory,
    approvalTimeoutMs: settings.approvalTimeoutMs,
    model: run.model as ModelId,
    behaviour: RUN_BEHAVIOUR,
    ...(run.approvalPolicy ? { approvalPolicies: run.approvalPolicy as ApprovalPolicy[] } : {}),
  };
  try {
    await client.workflow.start<(run: AgentRunInput) => Promise<unknown>>(AGENT_RUN_WORKFLOW, {
      taskQueue: settings.taskQueue,
      workflowId: run.id,
      args: [args],
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      workflowIdConflictPolicy: 'USE_EXISTING',
      ...runSummary(run, tenantName),
      typedSearchAttributes: [
        { key: TenantIdKey, value: run.tenantId },
        { key: RunStatusKey, value: 'accepted' },
      ],
    });
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
}

/** Whether Temporal knows a workflow for this run (running or closed). */
export async function runWorkflowExists(client: Client, runId: string): Promise<boolean> {
  try {
    await client.workflow.getHandle(runId).describe();
    return true;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return false;
    throw err;
  }
}
