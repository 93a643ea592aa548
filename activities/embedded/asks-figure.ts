// Which requested actions ask for a figure worked out from the text (a total, a share, an average, a
// comparison, a converted time): a 135M model writes such figures wrong as often as right, and does
// not call `calculate` reliably, so on the embedded model they are left unresolved, saying a stronger
// model can do them, rather than answered with a guess (issue 63: precision first). English words,
// so they live in the embedded adapter only.
import type { RequestedAction } from '../../domain/planning/requested-actions.ts';
import { needsStronger } from '../../domain/planning/needs-stronger.js';

const FIGURE =
  /\b(?:totals?|sum|add(?:s|ed)?(?:\s+(?:them|these|those|it|all|everything|this))*\s+up|percent(?:age)?|average|mean|median|difference|altogether|in all|how much|how many|combined|per (?:person|head|month|day|week|year)|split|tip|grow|grew|growth|increase[ds]?|decrease[ds]?|more|less|fewer|greater|larger|smaller|higher|lower|most|least|convert|what time|multipl(?:y|ied)|divide[ds]?|times|work out|calculate)\b|%/i;

/** The words of a text that ask for a figure worked out, each as written. */
export const figureWordsIn = (text: string) => [...text.matchAll(new RegExp(FIGURE.source, 'gi'))].map((m) => m[0]);

/** Whether the action asks for a figure worked out from the text rather than found in it. */
export function asksFigure(action: RequestedAction): boolean {
  return FIGURE.test(action.clause);
}

/** Why such an action is left unresolved on this model. */
export const FIGURE_REASON = needsStronger('it asks for a figure worked out from the text, which the small model cannot work out reliably');
