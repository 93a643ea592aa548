import { z } from 'zod';
import { DateTime } from '../contract/common.ts';
import { RUN_STATES, RUN_STEPS, TRANSITION_GRAPH } from '../../domain/runs/states.ts';
import { MODEL_IDS } from '../../domain/models.ts';
import { PROVIDERS } from '../../domain/pricing.ts';
import { TOOL_IDS } from '../../domain/tools.ts';
import { CompletionReceipt } from './receipt.ts';

export const RunStatus = z.enum(RUN_STATES).meta({
  id: 'RunStatus',
  description: `Wire states. failed and needs_attention are real, reportable outcomes. Transitions:\n\n\`\`\`\n${TRANSITION_GRAPH}\n\`\`\``,
});

export const RunModel = z
  .string()
  .min(1)
  .max(100)
  .default('svc-workspace')
  .meta({
    description: `The model alias (extension): one of ${MODEL_IDS.join(', ')} (default svc-workspace); any other id is 404 model_not_found, as in chat. The tenant's routing policy (POST /v1/routing-policies) sends it to the local provider or the OpenAI-compatible upstream, as for chat; the estimate and the hold use its rate.`,
  });

export const CreateRunRequest = z
  .strictObject({
    input: z.string().max(20_000).trim().min(1).meta({ description: 'The work to perform, 1 to 20000 characters.' }),
    memory: z.boolean().default(false).meta({
      description: 'true: the run may recall from and write to the tenant memory store. false (default): it does neither.',
    }),
    model: RunModel,
  })
  .meta({ id: 'CreateRunRequest' });

export const UsageEstimate = z
  .object({
    model: z.enum(MODEL_IDS).optional().meta({ description: 'The model alias priced (extension).' }),
    provider: z.enum(PROVIDERS).optional().meta({
      description:
        "Where the tenant's routing policy (or, without one, the deployment's default provider) sends the model (extension): the local model-free provider, the configured OpenAI-compatible upstream, or the embedded in-process model.",
    }),
    served_model: z.string().nullable().optional().meta({
      description:
        "The provider's own model that serves the alias (extension): the upstream's mapped model name or the embedded model's file name; null for the local provider, which runs no model.",
    }),
    basis: z.object({
      input_tokens: z.int(),
      output_tokens_max: z.int(),
      tool_calls: z.partialRecord(z.enum([...TOOL_IDS, 'server_tool']), z.int()),
      model_calls_max: z.int().optional().meta({ description: 'Upstream runs: planning attempts plus turns, each priced at its full max_tokens.' }),
      max_turns: z.int().optional().meta({ description: 'Upstream runs: model turns the execute loop may take.' }),
      max_tool_calls: z.int().optional().meta({ description: 'Upstream runs: tool calls the loop may make.' }),
      catalog_tokens: z
        .int()
        .optional()
        .meta({ description: 'Tool-calling runs: the tokens of the catalog (descriptions and schemas) every model call carries.' }),
      tool_results_tokens_max: z
        .int()
        .optional()
        .meta({ description: 'Tool-calling runs: the most tokens of tool results, all together, the model is shown; the rest is withheld.' }),
    }),
    protocol: z.enum(['tool_calls']).optional().meta({
      description:
        'Extension. tool_calls: the upstream model plans and acts with tool calls over the whole catalog (docs/runs.md, "The tool-calling protocol").',
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

/** A built-in tool, or an operator's server tool `<server_id>__<tool_name>` (extension). */
const ToolName = z.string().meta({
  description:
    'A built-in tool (memory_recall, text_analysis, count_list_items, find_contact_details, calculate, webhook_delivery) or a server tool `<server_id>__<tool_name>` (extension).',
});

const ArgsDigest = z.string().meta({ description: 'sha256 of the canonical JSON of the arguments (extension): what an approval binds to.' });

const PlanStep = z.object({
  id: z.string(),
  tool: ToolName,
  effect: z.enum(['read', 'external']).meta({ description: "Always the tool catalog's effect class, whatever a planner or model said." }),
  purpose: z.string(),
  scope: z.string(),
  covers: z.array(z.int()).optional().meta({
    description: 'The requested actions (receipt.actions[].n) this step carries out. Key-phrase extraction (text_analysis) prepares input and covers none.',
  }),
  arguments: z
    .record(z.string(), z.unknown())
    .optional()
    .meta({ description: "Tool arguments: a webhook_delivery step's `message` (copied from the request), or a model's arguments for its tool." }),
  args_digest: ArgsDigest.optional(),
  proposed_digest: z.string().optional().meta({ description: 'Set when a person edited the arguments at approval: the digest of what the model proposed.' }),
  message_from: z.int().optional().meta({
    description: 'Extension: a webhook_delivery with no message of its own sends the result of this requested action (its answer, written after approval).',
  }),
  call_id: z.string().optional().meta({ description: "Tool-calling runs (extension): the id of the model's tool call this step is; the report cites it." }),
  round: z.int().optional().meta({ description: 'Tool-calling runs (extension): the approval round that decided this external step.' }),
  decision: z.enum(['approved', 'rejected']).optional().meta({ description: 'Tool-calling runs (extension): what that round decided for it.' }),
  approved_by: z
    .array(z.object({ key_id: z.string().nullable(), name: z.string() }))
    .optional()
    .meta({ description: 'Tool-calling runs (extension): who approved this step in its round (approver keys and their people, or `temporal`).' }),
});

const StepResult = z.object({
  step_id: z.string().meta({ description: 'A plan step, or call_<turn>_<k> for an extra read a model asked for.' }),
  tool: ToolName,
  status: z.enum(['done', 'not_configured', 'failed', 'outcome_unknown', 'refused']).meta({
    description:
      'done: performed; not_configured: the tool cannot run for this tenant; failed: nothing was done; outcome_unknown: an effect may or may not have happened (a delivery that timed out after sending); refused: not in the approved plan, or invalid. Anything but done is unresolved.',
  }),
  detail: z.string(),
  output: z.unknown(),
  scope: z.string().optional(),
  output_digest: z.string().nullable().optional().meta({ description: 'sha256 of the output when the tool produced it; verification recomputes it.' }),
  sources: z.array(z.string()),
});

/** Who decided: the approver key the API authenticated, or the Temporal channel. */
const Approver = z
  .object({
    key_id: z.string().nullable().meta({ description: 'The approver key; null for a decision sent through Temporal.' }),
    name: z.string().meta({ description: "The approver key's person, as minted; `temporal` for a decision sent through Temporal." }),
  })
  .meta({ id: 'Approver' });

export const Approval = z
  .object({
    state: z.enum(['pending', 'approved', 'rejected', 'expired', 'cancelled']).meta({ description: 'cancelled: the run was cancelled before anyone decided.' }),
    effects: z
      .array(
        z.object({
          step_id: z.string(),
          tool: ToolName,
          why: z.string(),
          server: z.string().optional().meta({ description: 'Server tools (extension): the tool server that performs the effect.' }),
          server_tool: z.string().optional().meta({ description: 'Server tools (extension): the tool on that server.' }),
          arguments: z
            .record(z.string(), z.unknown())
            .optional()
            .meta({ description: "Extension: exactly the arguments that will be sent (a webhook_delivery's `message`, a server tool's call)." }),
          message_from: z.object({ action: z.int(), request: z.string() }).optional().meta({
            description:
              "Extension: a webhook_delivery that sends an earlier action's result: that action and its words. The result is written after approval; an edited `message` replaces it.",
          }),
          args_digest: ArgsDigest.optional(),
          proposed_digest: z
            .string()
            .optional()
            .meta({ description: 'Set when the arguments were edited at approval: the digest of what the model proposed.' }),
          required: z.int().min(1).max(5).optional().meta({
            description: 'Extension: distinct approvers this effect needs, from the approval policy the run started with; 1 when absent.',
          }),
          allowed_approvers: z.array(z.string()).optional().meta({
            description: 'Extension: the approver keys whose approval counts for this effect, from its policy; absent: any approver key of the tenant.',
          }),
          approved_by: z.array(Approver).optional().meta({
            description: 'Extension: the approvers whose approval counts for these exact arguments. An edit voids the approvals given before it.',
          }),
        }),
      )
      .meta({
        description:
          'The external effects awaiting a decision, and why each is in the plan. Each shows its arguments and their digest (a delivery its message, a server tool step its server, tool and call).',
      }),
    reason: z.string(),
    round: z.int().optional().meta({
      description:
        'Tool-calling runs (extension): which approval round this is, from 1. A model that asks for further external calls after seeing results waits for another round.',
    }),
    deadline: z.string().meta({ description: 'After this the run ends needs_attention with nothing external done.' }),
    decided_at: z.string().nullable(),
    decision_reason: z.string().nullable(),
    approvals: z
      .array(
        z.object({
          by: Approver,
          decision: z.enum(['approve', 'reject']),
          reason: z.string().nullable(),
          at: z.string(),
          channel: z.enum(['api', 'temporal:update', 'temporal:signal']),
          edited: z.array(z.string()).optional().meta({ description: 'The effects (step ids) whose arguments this decision edited.' }),
        }),
      )
      .optional()
      .meta({ description: 'Extension: every decision on this round, in order: who, what, when, why, and which effects they edited.' }),
    approvals_needed: z.int().min(0).optional().meta({
      description:
        "Extension: approvals still needed before the effects may go ahead (for the effect that needs the most), as of the last decision counted; present from the start when a policy asks more than one. A revoked approver key's approval is discounted when the last approval needed arrives.",
    }),
  })
  .meta({ id: 'ApprovalRequest' });

export const RunProgressSchema = z
  .object({
    state: RunStatus,
    steps_done: z.int().min(0).meta({ description: 'Plan steps finished (done, failed or refused alike).' }),
    steps_total: z.int().min(0).meta({ description: 'Steps in the plan; 0 until the plan exists.' }),
    current_step: z.enum(RUN_STEPS).nullable().meta({ description: 'The workflow step (estimate … settle); null once the run ended.' }),
    current_plan_step: z.string().nullable().meta({ description: 'The plan step id being run while executing (as in plan.steps[].id), else null.' }),
    waiting_for: z
      .enum(['approval'])
      .nullable()
      .meta({ description: "approval: the run waits for a person's decision (POST /v1/agent-runs/{run_id}/approval); null: it waits for nothing." }),
  })
  .meta({
    id: 'RunProgress',
    description:
      "Content-free progress (extension): counts, step names and plan step ids, never input, output or reason text. Recorded by the run's workflow at every state change; for rows and events recorded before progress was, derived from the run (steps_total from the plan, steps_done from the plan steps with a result or the run.step_finished events so far).",
  });

export const Run = z
  .object({
    object: z.literal('agent_run'),
    run_id: z.string(),
    status_url: z
      .string()
      .meta({ description: "Poll this URL (GET) for progress, or follow it live: `{status_url}/events` is a server-sent event stream of the run's progress." }),
    status: RunStatus,
    current_step: z.enum(RUN_STEPS).nullable().meta({ description: 'The workflow step in progress; null once terminal.' }),
    progress: RunProgressSchema,
    input: z.string(),
    memory: z.boolean(),
    model: z.enum(MODEL_IDS).meta({ description: 'The model alias the run asked for (extension).' }),
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
        model_calls: z.int().optional().meta({ description: 'Upstream runs: model calls made, charged by the usage the model reported.' }),
        usage_basis: z.enum(['reported', 'estimated', 'mixed']).optional().meta({
          description:
            'How the usage was known (extension): reported by the model provider for every call, estimated (byte count: the provider reported none, or the local provider), or mixed. Absent on runs settled before it was recorded.',
        }),
        amount: z.int().meta({ description: 'Credits: the exact cost of every model call summed, rounded up once for the run, plus tool credits.' }),
        charged: z.int(),
        released: z.int(),
      })
      .nullable()
      .meta({ description: 'Actual usage; `charged` never exceeds the reservation, `released` is the rest.' }),
    plan: z
      .object({
        planner: z.string().meta({
          description: "local-deterministic, or model (a model planned against the request's own plan schema: one entry per requested action).",
        }),
        execution: z.enum(['steps']).optional().meta({
          description:
            "Extension. steps: the service runs the approved steps as planned and the model writes only its answer to each action (the embedded model's plans). Absent: the model carries the plan out through tool calls, turn by turn.",
        }),
        choice: z.enum(['ranked']).optional().meta({
          description: "Extension. ranked: the model chose each action's option by its own likelihood among the options offered (the embedded model).",
        }),
        hints: z
          .array(z.object({ action: z.int(), offered: z.array(z.string()), why: z.string() }))
          .optional()
          .meta({
            description:
              'Extension: for each action, the options the model chose among and everything deterministic that shaped them (the kind of action the request reads as, a shortlist for a small model, material never given, text arguments limited to the request). Absent: the model was given the whole plan schema at once (upstream).',
          }),
        actions: z
          .array(
            z.object({
              n: z.int(),
              clause: z.string(),
              sentence: z.int(),
              kind: z.enum(['analysis', 'delivery', 'unsupported']),
              verb: z.string().nullable(),
              missing: z.string().nullable().meta({ description: 'What the action works on or sends that the run was never given; it stays unresolved.' }),
              message: z.string().optional().meta({ description: 'delivery: the message the request gives, copied from it.' }),
              messageFrom: z.int().optional().meta({ description: 'delivery: the earlier action whose result it sends.' }),
              given: z.literal(true).optional().meta({ description: 'The input gives material to work on (statements, text after a colon, quotes).' }),
            }),
          )
          .optional()
          .meta({
            description:
              'Extension: the requested actions as read when the plan was made (receipt.actions[].n). Execution, verification and the receipt read them from here. Absent on plans made before they were recorded.',
          }),
        steps: z.array(PlanStep),
        answer: z.array(z.int()).optional().meta({
          description:
            'Model-planned runs (extension): the requested actions the model said it would carry out in its final answer. Each counts as performed only where the answer has a specific part for that action.',
        }),
        gaps: z
          .array(z.object({ action: z.int(), reason: z.string() }))
          .optional()
          .meta({ description: 'Requested actions no step covers, and why.' }),
        protocol: z.enum(['tool_calls']).optional().meta({
          description:
            'Extension. tool_calls: the model planned and acted with tool calls over the whole catalog; `steps` are the calls it made, in order (reads call_N, external calls step_N), and the request is accounted for by its report (receipt.actions: one part each, with its verbatim quote). Absent: plans made before.',
        }),
        not_shown: z.array(z.string()).optional().meta({ description: 'Tool-calling runs (extension): tools of the catalog the model was not shown.' }),
        serverTools: z
          .record(
            z.string(),
            z.object({
              server: z.string(),
              tool: z.string(),
              effect: z.enum(['read', 'external']),
              description: z.string(),
              parameters: z.record(z.string(), z.unknown()),
              classified: z.boolean().optional().meta({ description: 'false: the operator did not classify the tool, so it counts as external.' }),
              fixed: z
                .record(z.string(), z.union([z.string(), z.number(), z.boolean()]))
                .optional()
                .meta({ description: "The operator's fixed arguments: not in `parameters`, set on every call of the tool (an edit may not change them)." }),
            }),
          )
          .optional()
          .meta({
            description:
              "Extension: the tenant's server tools offered to the model when it planned, by name, as the operator classified them then; edited arguments are checked against these schemas.",
          }),
      })
      .nullable(),
    approval: Approval.nullable(),
    result: z
      .object({
        summary: z.string().optional(),
        key_phrases: z.array(z.string()).optional().meta({ description: 'Local runs: key phrases of the analysed text.' }),
        answer: z.string().optional().meta({ description: "Upstream runs: the model's final answer." }),
        steps: z.array(StepResult),
      })
      .nullable()
      .meta({ description: "Step results as they finish; the summary (and an upstream model's answer) once verified." }),
    receipt: CompletionReceipt.nullable(),
    failure: z.object({ code: z.string(), message: z.string() }).nullable().meta({
      description:
        'Why a run ended failed or needs_attention: insufficient_credits, budget_exceeded, approval_rejected, approval_expired, cancelled, unresolved_remainder, run_failed, start_failed (a keyless run whose workflow could not be started); upstream runs also plan_invalid, turn_limit, hold_exhausted, model_unavailable, model_refused.',
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
  created_after: DateTime.optional(),
  created_before: DateTime.optional(),
  q: z.string().min(1).max(200).optional().meta({ description: 'Case-insensitive text contained in the run input.' }),
});

export const ApprovalPreviewBody = z
  .strictObject({
    edits: z
      .array(z.strictObject({ step_id: z.string().min(1).max(64), arguments: z.record(z.string(), z.unknown()) }))
      .min(1)
      .max(64)
      .meta({ description: 'Replacement arguments, as an approval would carry them in `edits`.' }),
  })
  .meta({ id: 'ApprovalPreviewRequest' });

export const ApprovalPreview = z
  .object({
    object: z.literal('approval_preview'),
    run_id: z.string(),
    effects: Approval.shape.effects.meta({
      description:
        'The effects awaiting approval as the edits would leave them: an edited effect has its new `arguments` and `args_digest`, and `proposed_digest` for what was proposed.',
    }),
  })
  .meta({ id: 'ApprovalPreview' });

export const ApprovalRequestBody = z
  .strictObject({
    decision: z.enum(['approve', 'reject']),
    reason: z.string().max(1000).optional(),
    digests: z
      .array(z.string().regex(/^sha256:[0-9a-f]{64}$/, 'must be sha256:<64 hex digits>'))
      .max(64)
      .optional()
      .meta({
        description:
          'Extension: the argument digests (approval.effects[].args_digest) this decision is about. One that no effect awaiting approval has answers 409 approval_stale and records nothing.',
      }),
    edits: z
      .array(z.strictObject({ step_id: z.string().min(1).max(64), arguments: z.record(z.string(), z.unknown()) }))
      .max(64)
      .optional()
      .meta({
        description:
          "Extension, with approve: replacement arguments for external steps awaiting approval (a webhook_delivery's `message`, a server tool's call), checked against the tool's input schema (400 naming the field). The step runs with them; the receipt keeps both digests.",
      }),
  })
  .meta({ id: 'ApprovalDecision' });
