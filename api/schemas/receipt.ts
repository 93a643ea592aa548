import { z } from 'zod';

export const CompletionReceipt = z
  .object({
    receipt_id: z.string(),
    subject: z.object({ kind: z.enum(['trial', 'run']), id: z.string() }),
    verification_class: z.enum(['deterministic_derivation', 'verified', 'partially_verified']).meta({
      description:
        'deterministic_derivation: derived by deterministic rules from the input alone, no outside source consulted; verified: every step passed its check; partially_verified: see unresolved.',
    }),
    action_boundary: z
      .object({
        effects_requested: z.array(z.string()),
        effects_approved: z.array(z.string()),
        effects_performed: z.array(z.string()),
      })
      .meta({ description: 'External effects requested, approved and actually performed. A trial performs none.' }),
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
  })
  .meta({ id: 'CompletionReceipt', description: 'The evidence a result carries. An explanation alone is not evidence.' });
