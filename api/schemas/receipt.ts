import { z } from 'zod';

export const CompletionReceipt = z
  .object({
    receipt_id: z.string(),
    subject: z.object({ kind: z.enum(['trial', 'run']), id: z.string() }),
    verification_class: z.enum(['deterministic_derivation', 'verified', 'partially_verified', 'unverified']).meta({
      description:
        "deterministic_derivation (trial): derived by deterministic rules from the input alone, no outside source consulted. verified: every requested action maps to a performed step whose output digest was recomputed and matched at verification, and nothing is unresolved. partially_verified: some requested actions were performed and checked; the rest are in unresolved. unverified: no requested action was both performed and checked. An upstream model's analysis counts as performed by its answer (digest `answer`) but never as checked: what the answer says is the model's, so a run resting on it is at best partially_verified.",
    }),
    action_boundary: z
      .object({
        effects_requested: z
          .array(z.string())
          .meta({ description: 'External effects asked for: `<tool>:<step>`, or `action_<n>:<verb>` for a requested action no tool can perform.' }),
        effects_approved: z.array(z.string()),
        approved_by: z
          .array(z.object({ effect: z.string(), key_id: z.string().nullable(), name: z.string() }))
          .optional()
          .meta({
            description:
              'Extension: who approved each approved effect (`<tool>:<step>`): the approver key and its person as the API authenticated them, or `temporal` (key_id null) for a decision sent through Temporal.',
          }),
        effects_performed: z.array(z.string()).meta({ description: 'Done and confirmed by the receiver.' }),
        effects_not_performed: z
          .array(z.string())
          .optional()
          .meta({ description: 'Certainly not done (rejected, refused, not configured, failed, or no tool can do it).' }),
        effects_outcome_unknown: z.array(z.string()).optional().meta({
          description: 'May or may not have happened (a delivery that timed out after sending). Always in unresolved; the run ends needs_attention.',
        }),
      })
      .meta({ description: 'External effects requested, approved, performed, not performed and of unknown outcome. A trial performs none.' }),
    source_coverage: z.object({
      sources: z.array(
        z.object({
          source: z.string(),
          digest: z.string(),
          characters: z.int().min(0),
          units_total: z.int().min(0).meta({ description: 'Sentences in the source.' }),
          units_used: z.int().min(0).meta({ description: 'Sentences the result drew on.' }),
        }),
      ),
      coverage_ratio: z.number().min(0).max(1),
    }),
    digests: z
      .object({ algorithm: z.literal('sha256'), input: z.string(), result: z.string() })
      .catchall(z.string())
      .meta({ description: 'sha256 over RFC 8785 canonical JSON, written sha256:<hex>.' }),
    unresolved: z.array(z.string()).meta({ description: 'What is still open. Never empty when status is needs_attention.' }),
    persisted: z.boolean().meta({ description: 'Whether anything was stored. Always false for a trial.' }),
    actions: z
      .array(
        z.object({
          n: z.int(),
          kind: z.enum(['analysis', 'delivery', 'unsupported', 'effect', 'information']).meta({
            description:
              'Tool-calling runs: effect (the part asks for a change outside the service; performed only by approved external calls that succeeded) or information (an answer or text the model writes). Runs before them: the kind of action the request was read as.',
          }),
          quote: z.string().optional().meta({ description: 'Tool-calling runs: the words of the request this part accounts for, verbatim.' }),
          outcome: z.enum(['performed', 'not_performed', 'outcome_unknown']),
          by: z.array(z.string()).meta({ description: 'The steps that carried it out, or `answer`.' }),
          checked: z.boolean().meta({
            description:
              "Every output it rests on was recomputed and matched (an exact tool's, derived again from its own arguments), or, for an effect, confirmed by its receiver after a person approved it. A model's answer is never checked.",
          }),
        }),
      )
      .optional()
      .meta({ description: 'Runs (extension): each action the input requests, in order, and what became of it.' }),
  })
  .meta({ id: 'CompletionReceipt', description: 'The evidence a result carries. An explanation alone is not evidence.' });
