// The exit codes of `gws`, documented in docs/cli.md.
import type { RunStatus } from '../../client/index.ts';

export const EXIT = {
  /** The run completed, or the command succeeded. */
  ok: 0,
  /** The run failed, or the command did (an API error, an unreachable server). */
  failed: 1,
  /** The run ended needs_attention: it stopped with something unresolved that a person must look at. */
  needsAttention: 2,
  /** Bad arguments or missing configuration (GWS_API_KEY); nothing was sent (sysexits' EX_USAGE). */
  usage: 64,
  /** Interrupted (Ctrl+C) while watching; the run itself goes on. */
  interrupted: 130,
} as const;

/** The exit code of a watched run that ended in `state`. */
export function exitCodeOfState(state: RunStatus | string): number {
  if (state === 'completed') return EXIT.ok;
  if (state === 'needs_attention') return EXIT.needsAttention;
  return EXIT.failed;
}
