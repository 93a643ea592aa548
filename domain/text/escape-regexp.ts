/** The text as a regular expression that matches it literally ("3.5" matches "3.5", not "3x5"). */
export const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
