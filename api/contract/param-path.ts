import type { z } from 'zod';

/**
 * The contract's `param` for a validation issue: a dotted path with [index]
 * for arrays (`messages[0].content`), the unknown key for an unsupported
 * parameter, or null when the whole body is at fault.
 */
export function paramOf(issue: z.core.$ZodIssue, where: 'body' | 'query' | 'path' | 'header'): string | null {
  const segments: PropertyKey[] = [...issue.path];
  if (issue.code === 'unrecognized_keys' && issue.keys[0]) segments.push(issue.keys[0]);
  if (segments.length === 0) return where === 'body' ? null : where;
  return segments.reduce<string>((acc, seg) => {
    if (typeof seg === 'number') return `${acc}[${seg}]`;
    return acc === '' ? String(seg) : `${acc}.${String(seg)}`;
  }, '');
}
