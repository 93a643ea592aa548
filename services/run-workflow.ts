// Starting a run's workflow (workflow id = run id), shared by the API (on
// create) and the reconciler (for rows whose workflow never started). Safe to
// repeat: a running workflow is reused, a closed one is left alone.
import { type Client, WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError } from '@temporalio/client';
import type { ModelId } from '../domain/models.ts';
import type { AgentRunInput, agentRunWorkflow } from '../workflows/agent-run.ts';
import { RunStatusKey, TenantIdKey } from '../workflows/search-attributes.ts';
import type { RunRow } from './runs.ts';

export interface RunWorkflowSettings {
  taskQueue: string;
  approvalTimeoutMs: number;
}

export async function startRunWorkflow(client: Client, settings: RunWorkflowSettings, run: RunRow): Promise<void> {
  const args: AgentRunInput = {
    runId: run.id,
    tenantId: run.tenantId,
    input: run.input,
    memory: run.memory,
    approvalTimeoutMs: settings.approvalTimeoutMs,
    model: run.model as ModelId,
  };
  try {
    await client.workflow.start<typeof agentRunWorkflow>('agentRunWorkflow', {
      taskQueue: settings.taskQueue,
      workflowId: run.id,
      args: [args],
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      workflowIdConflictPolicy: 'USE_EXISTING',
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
