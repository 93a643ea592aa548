// Remembers a finished run in the tenant memory store (memory: true only): its
// input and the outcome line of its verification (counts only). Nothing a step
// recalled is written back, so forgetting a recalled entry leaves no copy here.
import type { Db } from '../db/client.ts';
import { truncate } from '../domain/text/analyze.ts';
import { rememberEntry } from '../services/memory.ts';

export function memoryActivities(deps: { db: Db }) {
  return {
    async rememberRun(input: { runId: string; tenantId: string; input: string; summary: string }): Promise<string> {
      return rememberEntry(deps.db, {
        tenantId: input.tenantId,
        subject: truncate(input.input, 120),
        content: `${input.input}\n\nOutcome: ${input.summary}`,
        source: `run:${input.runId}`,
        entryKey: `run:${input.runId}`,
      });
    },
  };
}
