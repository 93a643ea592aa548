/** What every trial recipe returns: its result, what stays unresolved, and which objective sentences it used. */
export interface RecipeOutput<T> {
  result: T;
  unresolved: string[];
  usedSentences: string[];
}
