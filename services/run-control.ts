// What the API does with runs: create (idempotently) and start the run's
// workflow, read and list the projection, deliver approval decisions and
// cancellations to the workflow.
import { type Client, WorkflowExecutionAlreadyStartedError, WorkflowUpdateFailedError } from '@temporalio/client';
import type { Db } from '../db/client.ts';
import { digestOf } from '../domain/digest.ts';
import { errors } from '../domain/errors.ts';
import type { ModelId } from '../domain/models.ts';
import { isTerminal } from '../domain/runs/states.ts';
import type { AgentRunInput, agentRunWorkflow } from '../workflows/agent-run.ts';
import { type ApprovalDecision, approvalUpdate, NOT_AWAITING_APPROVAL } from '../workflows/messages.ts';
import { RunStatusKey, TenantIdKey } from '../workflows/search-attributes.ts';
import { recordAudit } from './audit.ts';
import { createRun, getRun, listRuns, type RunCursor, type RunFilters, type RunRow, updateRun } from './runs.ts';

export interface RunControlDeps {
  db: Db;
  client: Client;
  taskQueue: string;
  approvalTimeoutMs: number;
}

export interface CreateRunRequest {
  input: string;
  memory: boolean;
  model: ModelId;
}

/** What the Idempotency-Key binds: the default model is left out, so keys from before runs took a model still match. */
function requestDigest(request: CreateRunRequest): string {
  const { model, ...rest } = request;
  return digestOf(model === 'svc-workspace' ? rest : request);
}

function isAlreadyClosed(err: unknown): boolean {
  const e = err as { name?: string; code?: number; message?: string };
  return e?.name === 'WorkflowNotFoundError' || /already completed|not found/i.test(e?.message ?? '');
}

export function runControl(deps: RunControlDeps) {
  /**
   * Starts the run's workflow (id = run id) unless it exists. Safe to repeat:
   * a running workflow is reused, a closed one is left alone.
   */
  async function ensureStarted(run: RunRow): Promise<void> {
    const args: AgentRunInput = {
      runId: run.id,
      tenantId: run.tenantId,
      input: run.input,
      memory: run.memory,
      approvalTimeoutMs: deps.approvalTimeoutMs,
      model: run.model as ModelId,
    };
    try {
      await deps.client.workflow.start<typeof agentRunWorkflow>('agentRunWorkflow', {
        taskQueue: deps.taskQueue,
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

  return {
    /** 'created' (201) or 'replayed' (200); a reused key with another body throws 422. */
    async create(tenantId: string, idempotencyKey: string | null, request: CreateRunRequest) {
      const outcome = await createRun(deps.db, {
        tenantId,
        idempotencyKey,
        requestDigest: requestDigest(request),
        input: request.input,
        memory: request.memory,
        model: request.model,
      });
      if (outcome.kind === 'key_reused') throw errors.idempotencyKeyReused();
      // Also on replay: if the first attempt stored the row but failed to start, this completes it.
      if (outcome.kind === 'created' || !isTerminal(outcome.run.status)) {
        try {
          await ensureStarted(outcome.run);
        } catch (err) {
          // With a key, the caller's retry completes the start; without one, nothing can, so the row says so.
          if (!idempotencyKey) {
            await updateRun(deps.db, outcome.run.id, {
              status: 'failed',
              currentStep: null,
              completedAt: new Date(),
              failure: { code: 'start_failed', message: 'The run could not be started; nothing was reserved. Retry the request.' },
            });
          }
          throw err;
        }
      }
      return { created: outcome.kind === 'created', run: outcome.run };
    },

    async get(tenantId: string, runId: string): Promise<RunRow> {
      const run = await getRun(deps.db, tenantId, runId);
      if (!run) throw errors.notFound('No such run.');
      return run;
    },

    list(tenantId: string, filters: RunFilters, page: { limit: number; after?: RunCursor }) {
      return listRuns(deps.db, tenantId, filters, page);
    },

    /** Delivers the decision as a Temporal Update; its validator refuses unless the run awaits approval. */
    async decide(tenantId: string, runId: string, decision: ApprovalDecision, requestKey: string | null, actorKeyId: string | null = null): Promise<RunRow> {
      const run = await this.get(tenantId, runId);
      const handle = deps.client.workflow.getHandle(run.id);
      try {
        await handle.executeUpdate(approvalUpdate, {
          args: [decision],
          ...(requestKey ? { updateId: `approval:${digestOf(requestKey).slice(7, 39)}` } : {}),
        });
      } catch (err) {
        const cause = (err as { cause?: { type?: string } }).cause;
        if ((err instanceof WorkflowUpdateFailedError && cause?.type === NOT_AWAITING_APPROVAL) || isAlreadyClosed(err)) {
          const latest = await this.get(tenantId, runId);
          throw errors.runNotAwaitingApproval(latest.status);
        }
        throw err;
      }
      await recordAudit(deps.db, { tenantId, keyId: actorKeyId, action: `run.approval.${decision.decision}`, target: `run:${run.id}`, subject: decision });
      return this.get(tenantId, runId);
    },

    /** Requests cancellation; the workflow releases the hold and ends failed (code cancelled). */
    async cancel(tenantId: string, runId: string): Promise<RunRow> {
      const run = await this.get(tenantId, runId);
      if (isTerminal(run.status)) throw errors.runAlreadyTerminal(run.status);
      try {
        await deps.client.workflow.getHandle(run.id).cancel();
      } catch (err) {
        if (!isAlreadyClosed(err)) throw err;
        const latest = await this.get(tenantId, runId);
        throw errors.runAlreadyTerminal(latest.status);
      }
      return this.get(tenantId, runId);
    },
  };
}

export type RunControl = ReturnType<typeof runControl>;
