// Executes one plan step through its tool. A tool that cannot run for this
// tenant answers not_configured (the step stays unresolved); transient failures
// throw so Temporal retries them.
import { Context } from '@temporalio/activity';
import { eq } from 'drizzle-orm';
import type { Db } from '../db/client.ts';
import { tenants } from '../db/schema.ts';
import { digestOf } from '../domain/digest.ts';
import type { PlanStep } from '../domain/planning/plan.ts';
import { analyzeObjective } from '../domain/text/analyze.ts';
import { recallMemory } from '../services/memory.ts';
import type { StepResult } from './run-types.ts';

export interface ToolCall {
  runId: string;
  tenantId: string;
  step: PlanStep;
  input: string;
  memory: boolean;
  previous: StepResult[];
}

type ToolOutcome = Omit<StepResult, 'step_id' | 'tool'>;

function textAnalysis(scope: string): ToolOutcome {
  const facts = analyzeObjective(scope);
  return {
    status: 'done',
    detail: `Analysed ${facts.sentences.length} sentence(s).`,
    output: {
      key_phrases: facts.keyTerms.map((k) => k.term),
      constraints: facts.constraints,
      quantities: facts.quantities,
      questions: facts.questions,
      sentences: facts.sentences.length,
    },
    sources: ['input'],
  };
}

async function memoryRecall(db: Db, call: ToolCall): Promise<ToolOutcome> {
  if (!call.memory) return { status: 'not_configured', detail: 'memory is false for this run.', output: null, sources: [] };
  const entries = await recallMemory(db, call.tenantId, call.step.scope, 3);
  return {
    status: 'done',
    detail: `Recalled ${entries.length} memory entr${entries.length === 1 ? 'y' : 'ies'}.`,
    output: { entries: entries.map((e) => ({ id: e.id, subject: e.subject, content: e.content })) },
    sources: entries.map((e) => `memory:${e.id}`),
  };
}

/** POSTs the run's results so far to the tenant's webhook, heartbeating while it waits. */
async function webhookDelivery(db: Db, call: ToolCall, timeoutMs: number): Promise<ToolOutcome> {
  const [tenant] = await db.select({ url: tenants.webhookUrl }).from(tenants).where(eq(tenants.id, call.tenantId));
  if (!tenant?.url) {
    return { status: 'not_configured', detail: 'No webhook URL is configured for this tenant.', output: null, sources: [] };
  }
  const ctx = Context.current();
  const payload = {
    run_id: call.runId,
    step_id: call.step.id,
    results: call.previous.map((r) => ({ step_id: r.step_id, tool: r.tool, status: r.status, output: r.output })),
  };
  const beat = setInterval(() => ctx.heartbeat(), 1_000);
  try {
    const res = await fetch(tenant.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': `${call.runId}:${call.step.id}` },
      body: JSON.stringify(payload),
      signal: AbortSignal.any([ctx.cancellationSignal, AbortSignal.timeout(timeoutMs)]),
    });
    if (!res.ok) throw new Error(`webhook answered ${res.status}`);
    return {
      status: 'done',
      detail: `Delivered (HTTP ${res.status}).`,
      output: { delivered: true, status: res.status, payload_digest: digestOf(payload) },
      sources: [],
    };
  } finally {
    clearInterval(beat);
  }
}

export function toolActivities(deps: { db: Db; webhookTimeoutMs: number }) {
  return {
    async runTool(call: ToolCall): Promise<StepResult> {
      let outcome: ToolOutcome;
      switch (call.step.tool) {
        case 'text_analysis':
          outcome = textAnalysis(call.step.scope);
          break;
        case 'memory_recall':
          outcome = await memoryRecall(deps.db, call);
          break;
        case 'webhook_delivery':
          outcome = await webhookDelivery(deps.db, call, deps.webhookTimeoutMs);
          break;
      }
      return { step_id: call.step.id, tool: call.step.tool, ...outcome };
    },
  };
}
