// Executes one plan step through its tool. A tool that cannot run for this
// tenant answers not_configured (the step stays unresolved); transient failures
// throw so Temporal retries them.
import { ApplicationFailure, Context } from '@temporalio/activity';
import { WEBHOOK_NOT_SENT } from '../workflows/messages.ts';
import { eq } from 'drizzle-orm';
import { Webhook } from 'standardwebhooks';
import type { Db } from '../db/client.ts';
import { tenants } from '../db/schema.ts';
import { digestOf } from '../domain/digest.ts';
import { deliveryMessage } from '../domain/planning/delivery-steps.ts';
import type { PlanStep } from '../domain/planning/plan.ts';
import type { RequestedAction } from '../domain/planning/requested-actions.ts';
import { contactDetailsOutput, listCountOutput, memoryRecallOutput, textAnalysisOutput } from '../domain/runs/tool-outputs.ts';
import { recallMemory } from '../services/memory.ts';
import type { DeliveryUrlRules } from '../domain/delivery-url.ts';
import { type DeliveryFetch, deliveryFetch, isDeliveryRefused, type ResolveAll } from '../services/delivery-fetch.ts';
import type { StepResult } from '../domain/runs/run-types.ts';
import { isToolId, type ToolId } from '../domain/tools.ts';
import { isProtocolTool } from '../domain/agent/protocol-tools.ts';
import { evidenceOf, exactOutput } from '../domain/runs/protocol-outputs.ts';
import type { ToolServers } from '../services/tool-servers.ts';
import { toolCallSpan } from '../services/instrumentation.ts';
import { runServerTool } from './server-tool.ts';

export interface ToolCall {
  runId: string;
  tenantId: string;
  step: PlanStep;
  input: string;
  memory: boolean;
  previous: StepResult[];
  /** The plan's requested actions, as recorded when it was made (absent for plans made before). */
  actions?: RequestedAction[];
  /** The model's answer parts, for a plan run step by step: a delivery carries them. */
  answers?: { action: number; status: string; result?: string; reason?: string }[];
  /** A call of a tool-calling run: a built-in does exactly what the step's arguments say (domain/agent/protocol-tools.ts). */
  protocol?: 'tool_calls';
}

type ToolOutcome = Omit<StepResult, 'step_id' | 'tool' | 'output_digest'>;

function textAnalysis(scope: string): ToolOutcome {
  const output = textAnalysisOutput(scope);
  return { status: 'done', detail: `Analysed ${output.sentences} sentence(s).`, output, sources: ['input'] };
}

/** The action an analysis tool answers: the first its step covers (an extra read covers none). */
const coveredAction = (call: ToolCall) => call.step.covers?.[0] ?? null;

function countListItems(call: ToolCall): ToolOutcome {
  const output = listCountOutput(call.input, coveredAction(call), call.actions);
  if (!output) return { status: 'failed', detail: 'The request gives no list (after a colon, or in quotes) to count.', output: null, sources: [] };
  return { status: 'done', detail: `Counted ${output.count} item(s).`, output, sources: ['input'] };
}

function findContactDetails(call: ToolCall): ToolOutcome {
  const output = contactDetailsOutput(call.input, coveredAction(call));
  const found = output.emails.length + output.urls.length + output.phones.length;
  return { status: 'done', detail: `Found ${found} address(es) and number(s).`, output, sources: ['input'] };
}

/**
 * Recalls entries by reference only: id, version, digest and length. The text stays in the
 * vault, so it is in no step output, run result or workflow payload, and forgetting the entry
 * leaves no copy. An upstream model gets the text in its turn (activities/agent.ts).
 */
async function memoryRecall(db: Db, call: ToolCall): Promise<ToolOutcome> {
  if (!call.memory) return { status: 'not_configured', detail: 'memory is false for this run.', output: null, sources: [] };
  const entries = await recallMemory(db, call.tenantId, call.step.scope, 3);
  return {
    status: 'done',
    detail: `Recalled ${entries.length} memory entr${entries.length === 1 ? 'y' : 'ies'}.`,
    output: memoryRecallOutput(entries),
    sources: entries.map((e) => `memory:${e.id}`),
  };
}

// Errors that prove the request never reached the receiver, so sending again is safe.
const NOT_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT']);

function neverSent(err: unknown): boolean {
  const cause = (err as { cause?: { code?: string; message?: string } })?.cause;
  // fetch itself refuses some URLs (a port on its block list) before it opens a connection.
  return (cause?.code !== undefined && NOT_SENT.has(cause.code)) || cause?.message === 'bad port';
}

/**
 * The Standard Webhooks headers of a delivery signed with the tenant's secret (`npm run tenants --
 * webhook set`): `webhook-id` is the delivery's idempotency key, so every attempt carries the same
 * id, with a fresh timestamp. Null when the secret cannot sign; the secret itself goes nowhere else
 * (no log, error, span or step result).
 */
function signatureHeaders(secret: string, webhookId: string, body: string): Record<string, string> | null {
  const sentAt = new Date();
  try {
    const signature = new Webhook(secret).sign(webhookId, sentAt, body);
    return { 'webhook-id': webhookId, 'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)), 'webhook-signature': signature };
  } catch {
    return null;
  }
}

/** POSTs the run's results so far to the tenant's webhook (signed when it has a secret), heartbeating while it waits. */
async function webhookDelivery(db: Db, call: ToolCall, timeoutMs: number, send: DeliveryFetch): Promise<ToolOutcome> {
  const [tenant] = await db.select({ url: tenants.webhookUrl, secret: tenants.webhookSecret }).from(tenants).where(eq(tenants.id, call.tenantId));
  if (!tenant?.url) {
    return { status: 'not_configured', detail: 'No webhook URL is configured for this tenant.', output: null, sources: [] };
  }
  const args = call.step.arguments ?? {};
  // A tool-calling run sends only the arguments its approval bound by digest, whatever reached the step.
  if (call.protocol === 'tool_calls' && digestOf(args) !== call.step.args_digest) {
    return { status: 'failed', detail: 'The arguments are not the ones approved (their digest differs); nothing was sent.', output: null, sources: [] };
  }
  const to = call.protocol === 'tool_calls' && typeof args.to === 'string' ? args.to : null;
  // A tool-calling run sends exactly the approved arguments; no other text is ever put in their place.
  const message = call.protocol === 'tool_calls' ? (typeof args.message === 'string' ? args.message : null) : deliveryMessage(call.step, call.answers);
  if (message === null) {
    const from = call.step.message_from;
    const detail =
      from === undefined
        ? 'The step has no message to send (the request gave none); nothing was sent.'
        : `The message was to be the result of action ${from}, which was not performed; nothing was sent.`;
    return { status: 'failed', detail, output: null, sources: [] };
  }
  const ctx = Context.current();
  const payload =
    to !== null
      ? { run_id: call.runId, step_id: call.step.id, to, message }
      : {
          run_id: call.runId,
          step_id: call.step.id,
          message,
          results: call.previous.map((r) => ({ step_id: r.step_id, tool: r.tool, status: r.status, output: r.output })),
          ...(call.answers?.length ? { answers: call.answers } : {}),
        };
  const idempotencyKey = `${call.runId}:${call.step.id}`;
  const body = JSON.stringify(payload);
  const signed = tenant.secret ? signatureHeaders(tenant.secret, idempotencyKey, body) : {};
  if (!signed) {
    return {
      status: 'failed',
      detail: "The tenant's webhook signing secret cannot sign (set the webhook again for a new one); nothing was sent.",
      output: null,
      sources: [],
    };
  }
  const beat = setInterval(() => ctx.heartbeat(), 1_000);
  try {
    let res: Awaited<ReturnType<DeliveryFetch>>;
    try {
      res = await send(tenant.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': idempotencyKey, ...signed },
        body,
        signal: AbortSignal.any([ctx.cancellationSignal, AbortSignal.timeout(timeoutMs)]),
      });
    } catch (err) {
      if (ctx.cancellationSignal.aborted) throw err;
      if (isDeliveryRefused(err)) {
        return {
          status: 'failed',
          detail: 'The webhook URL resolves to an address this deployment does not send to (private, link-local, or loopback in production); nothing was sent.',
          output: null,
          sources: [],
        };
      }
      // Safe to retry; typed so that, if every attempt ends like this, the workflow knows nothing was sent.
      if (neverSent(err)) throw ApplicationFailure.retryable('The webhook could not be reached; nothing was sent.', WEBHOOK_NOT_SENT);
      // It may have arrived: sending again could repeat the effect, and calling it failed would hide it.
      return {
        status: 'outcome_unknown',
        detail: `No answer from the webhook within ${timeoutMs} ms after sending; the receiver may or may not have it. Check with the receiver (Idempotency-Key ${call.runId}:${call.step.id}).`,
        output: null,
        sources: [],
      };
    }
    if (res.status >= 500 || res.status === 429) throw new Error(`webhook answered ${res.status}`); // retried with the same key
    if (!res.ok) return { status: 'failed', detail: `The webhook refused the delivery (HTTP ${res.status}).`, output: null, sources: [] };
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

/** A protocol built-in that computes: its output from its arguments and the run's evidence, or a failed step saying why. */
function exactBuiltin(call: ToolCall): ToolOutcome | null {
  const exact = exactOutput(call.step.tool, call.step.arguments ?? {}, evidenceOf(call.input, call.previous));
  if (!exact) return null;
  if (!exact.ok) return { status: 'failed', detail: exact.problem, output: null, sources: [] };
  return { status: 'done', detail: exact.detail, output: exact.output, sources: ['input'] };
}

export interface ToolDeps {
  db: Db;
  webhookTimeoutMs: number;
  deliveryRules: DeliveryUrlRules;
  resolveAll?: ResolveAll;
  toolServers: ToolServers;
  toolCalls: { callTimeoutMs: number; resultMaxChars: number };
}

export function toolActivities(deps: ToolDeps) {
  const send = deliveryFetch(deps.deliveryRules, deps.resolveAll);
  const serverDeps = { db: deps.db, toolServers: deps.toolServers, ...deps.toolCalls };
  const builtin = async (tool: ToolId, call: ToolCall): Promise<ToolOutcome> => {
    if (call.protocol === 'tool_calls') {
      const exact = exactBuiltin(call);
      if (exact) return exact;
    }
    switch (tool) {
      case 'text_analysis':
        return textAnalysis(call.step.scope);
      case 'count_list_items':
        return countListItems(call);
      case 'find_contact_details':
        return findContactDetails(call);
      case 'memory_recall':
        return await memoryRecall(deps.db, call);
      case 'webhook_delivery':
        return await webhookDelivery(deps.db, call, deps.webhookTimeoutMs, send);
    }
  };
  return {
    async runTool(call: ToolCall): Promise<StepResult> {
      const tool = call.step.tool;
      const outcome = await toolCallSpan(tool, async (reportOutcome) => {
        const protocolBuiltin = call.protocol === 'tool_calls' && isProtocolTool(tool);
        const result = isToolId(tool) ? await builtin(tool, call) : protocolBuiltin ? exactBuiltin(call)! : await runServerTool(serverDeps, call);
        reportOutcome(result.status);
        return result;
      });
      const output_digest = outcome.status === 'done' ? digestOf(outcome.output) : null;
      return { step_id: call.step.id, tool, ...outcome, scope: call.step.scope, output_digest };
    },
  };
}
