// Ranking continuations by the embedded model's own likelihood: the prompt is evaluated once, then
// each candidate's tokens are scored (the sum of their log-probabilities) and erased again, so every
// candidate is read after the same prompt. For a small model this chooses far better than letting it
// generate a choice under a grammar (measured in docs/models.md), and it costs one prompt evaluation
// plus a few tokens per candidate.
import type { ChatHistoryItem, Token } from 'node-llama-cpp';
import type { Loaded } from './embedded-model.ts';

export interface Ranked {
  /** Log-likelihood of each candidate, in the order given. */
  scores: number[];
  promptTokens: number;
  /** Tokens of the candidates, evaluated but not generated. */
  candidateTokens: number;
}

const FLOOR = 1e-12;

/** `prefix` starts the model's reply, and each candidate continues it. */
export async function rankContinuations(loaded: Loaded, history: ChatHistoryItem[], candidates: string[], prefix = ''): Promise<Ranked> {
  const { LlamaChat } = await import('node-llama-cpp');
  const chat = new LlamaChat({ contextSequence: loaded.sequence, chatWrapper: loaded.chatWrapper });
  try {
    const { contextText } = chat.chatWrapper.generateContextState({ chatHistory: [...history, { type: 'model', response: prefix ? [prefix] : [] }] });
    const prompt = contextText.tokenize(loaded.model.tokenizer);
    const sequence = loaded.sequence;
    await sequence.clearHistory();
    // All but the prompt's last token; that one is evaluated with each candidate, for the first token's probabilities.
    await sequence.evaluateWithoutGeneratingNewTokens(prompt.slice(0, -1));
    const start = sequence.nextTokenIndex;
    const scores: number[] = [];
    let candidateTokens = 0;
    for (const candidate of candidates) {
      const tokens = loaded.model.tokenize(candidate);
      const input = [prompt.at(-1)!, ...tokens.slice(0, -1)].map(
        (t) => [t, { generateNext: { probabilities: true } }] as [Token, { generateNext: { probabilities: true } }],
      );
      const out = await sequence.controlledEvaluate(input);
      scores.push(tokens.reduce((sum, t, i) => sum + Math.log(Math.max(out[i]?.next.probabilities?.get(t) ?? 0, FLOOR)), 0));
      candidateTokens += tokens.length;
      await sequence.eraseContextTokenRanges([{ start, end: sequence.nextTokenIndex }]);
    }
    return { scores, promptTokens: prompt.length, candidateTokens };
  } finally {
    chat.dispose({ disposeSequence: false });
  }
}
