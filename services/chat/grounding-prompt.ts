// The customer context a model answers from (recalled memory, a linked document), as one system message.
// Upstream and embedded providers send the same words.
export function groundingPrompt(g: { memory: { subject: string; content: string }[]; document: string | null }): string {
  const parts = ['Ground your answer in this customer context.'];
  for (const m of g.memory) parts.push(`Memory - ${m.subject}: ${m.content}`);
  if (g.document) parts.push(`Linked document: ${g.document}`);
  return parts.join('\n');
}
