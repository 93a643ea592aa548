/**
 * The byte-count token estimate used everywhere (runs, chat, /v1/usage/estimate):
 * one token per four UTF-8 bytes, rounded up. Cheap, deterministic and an
 * over-estimate for typical English text, which is what a reservation needs.
 */
export function estimateTokens(text: string): number {
  return Math.ceil(new TextEncoder().encode(text).length / 4);
}
