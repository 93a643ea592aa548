// Shapes that cross the workflow/activity boundary (types only; the workflow imports nothing else from here).
import type { ToolId } from '../domain/tools.ts';

export interface ApprovalRecord {
  state: 'pending' | 'approved' | 'rejected' | 'expired';
  effects: { step_id: string; tool: ToolId; why: string }[];
  reason: string;
  deadline: string;
  decided_at: string | null;
  decision_reason: string | null;
}

export interface StepResult {
  step_id: string;
  tool: ToolId;
  /** done; not_configured (the tool cannot run for this tenant); failed (kept failing). Anything but done is unresolved. */
  status: 'done' | 'not_configured' | 'failed';
  detail: string;
  output: unknown;
  /** What the step read: `memory:<entry id>` and the like, for the receipt's source coverage. */
  sources: string[];
}
