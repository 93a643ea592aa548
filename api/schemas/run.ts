import { z } from 'zod';
import { RUN_STATES, RUN_STEPS, TRANSITION_GRAPH } from '../../domain/runs/states.ts';
import { TOOL_IDS } from '../../domain/tools.ts';
import { CompletionReceipt } from './receipt.ts';

export const RunStatus = z.enum(RUN_STATES).meta({
  id: 'RunStatus',
  description: `Wire states. failed and needs_attention are real, reportable outcomes. Transitions:\n\n\`\`\`\n${TRANSITION_GRAPH}\n\`\`\``,
});

export const CreateRunRequest = z
  .strictObject({
    input: z.string().trim().min(1).max(20_000).meta({ description: 'The work to perform, 1 to 20000 characters.' }),
    memory: z.boolean().default(false).meta({
      description: 'true: the run may recall from and write to the tenant memory store. false (default): it does neither.',
    }),
  })
  .meta({ id: 'CreateRunRequest' });

export const UsageEstimate = z
  .object({
    basis: z.object({
      input_tokens: z.int(),
      output_tokens_max: z.int(),
      tool_calls: z.partialRecord(z.enum(TOOL_IDS), z.int()),
    }),
    amounts: z.object({ model: z.int(), tools: z.int(), total: z.int() }).meta({ description: 'Credits.' }),
    terms: z.object({
      unit: z.literal('credit'),
      pricing_version: z.string(),
      credits_per_1k_tokens: z.int(),
      tool_credits: z.record(z.string(), z.int()),
      method: z.string(),
      settlement: z.string(),
    }),
  })
  .meta({ id: 'UsageEstimate', description: 'Expected usage basis and the commercial terms, shown before money is reserved.' });

const PlanStep = z.object({
  id: z.string(),
  tool: z.enum(TOOL_IDS),
  effect: z.enum(['read', 'external']),
  purpose: z.string(),
  scope: z.string(),
});

const StepResult = z.object({
  step_id: z.string(),
  tool: z.enum(TOOL_IDS),
  status: z.enum(['done', 'not_configured', 'failed']),
  detail: z.string(),
  output: z.unknown(),
  sources: z.array(z.string()),
});

export const Approval = z
  .object({
    state: z.enum(['pending', 'approved', 'rejected', 'expired']),
    effects: z.array(z.object({ step_id: z.string(), tool: z.enum(TOOL_IDS), why: z.string() })).meta({
      description: 'The external effects awaiting a decision, and why each is in the plan.',
    }),
    reason: z.string(),
    deadline: z.string().meta({ description: 'After this the run ends needs_attention with nothing external done.' }),
    decided_at: z.string().nullable(),
    decision_reason: z.string().nullable(),
  })
  .meta({ id: 'ApprovalRequest' });

export const Run = z
  .object({
    object: z.literal('agent_run'),
    run_id: z.string(),
    status_url: z.string().meta({ description: 'Poll this URL (GET) for progress.' }),
    status: RunStatus,
    current_step: z.enum(RUN_STEPS).nullable().meta({ description: 'The workflow step in progress; null once terminal.' }),
    input: z.string(),
    memory: z.boolean(),
    idempotency_key: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
    completed_at: z.string().nullable(),
    estimate: UsageEstimate.nullable(),
    reservation: z.object({ amount: z.int().optional(), status: z.enum(['held', 'settled', 'released']) }).nullable(),
    usage: z
      .object({
        input_tokens: z.int(),
        output_tokens: z.int(),
        tool_calls: z.record(z.string(), z.int()),
        amount: z.int(),
        charged: z.int(),
        released: z.int(),
      })
      .nullable()
      .meta({ description: 'Actual usage; `charged` never exceeds the reservation, `released` is the rest.' }),
    plan: z.object({ planner: z.string(), steps: z.array(PlanStep) }).nullable(),
    approval: Approval.nullable(),
    result: z
      .object({ summary: z.string().optional(), key_phrases: z.array(z.string()).optional(), steps: z.array(StepResult) })
      .nullable()
      .meta({ description: 'Step results as they finish; the summary once verified.' }),
    receipt: CompletionReceipt.nullable(),
    failure: z.object({ code: z.string(), message: z.string() }).nullable().meta({
      description: 'Why a run ended failed or needs_attention: insufficient_credits, approval_rejected, approval_expired, cancelled, unresolved_remainder, run_failed.',
    }),
  })
  .meta({ id: 'AgentRun' });

export const RunList = z
  .object({
    object: z.literal('list'),
    data: z.array(Run),
    has_more: z.boolean(),
    next_cursor: z.string().nullable().meta({ description: 'Pass as `cursor` for the next page.' }),
  })
  .meta({ id: 'AgentRunList' });

export const RunListQuery = z.object({
  status: RunStatus.optional(),
  created_after: z.iso.datetime({ offset: true }).optional(),
  created_before: z.iso.datetime({ offset: true }).optional(),
  q: z.string().min(1).max(200).optional().meta({ description: 'Case-insensitive text contained in the run input.' }),
});

export const ApprovalRequestBody = z
  .strictObject({
    decision: z.enum(['approve', 'reject']),
    reason: z.string().max(1000).optional(),
  })
  .meta({ id: 'ApprovalDecision' });
