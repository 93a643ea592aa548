// Dates as a request writes them ("31 March 2026", "March 31, 2026", "9 Oct", "2026-03-31", "31/03/2026"). Their
// numbers are no quantities: "notice by 31 March 2026 … ends 30 June 2026. How many days is that?" had the small model
// add 31, 2026, 30 and 2026 up. The month names are the platform's own (Intl), in English as the adapter reads.
const monthNames = (month: 'long' | 'short') =>
  Array.from({ length: 12 }, (_, m) => new Intl.DateTimeFormat('en', { month, timeZone: 'UTC' }).format(Date.UTC(2000, m, 1)));
// Capitalised as written: "may" is a verb, "May" a month ("Sept" too, beside the short "Sep").
const MONTH = `(?:${[...monthNames('long'), ...monthNames('short'), 'Sept'].join('|')})\\.?`;
const DAY = String.raw`\d{1,2}(?:st|nd|rd|th)?`;
const YEAR = String.raw`\d{4}`;
const DATE = new RegExp(
  [
    String.raw`\b${DAY}\s+(?:of\s+)?${MONTH}(?:,?\s+${YEAR})?\b`,
    String.raw`\b${MONTH}\s+${DAY}(?:,?\s+${YEAR})?\b`,
    String.raw`\b${MONTH}\s+${YEAR}\b`,
    String.raw`\b${YEAR}-\d{1,2}-\d{1,2}\b`,
    String.raw`\b\d{1,2}/\d{1,2}/(?:${YEAR}|\d{2})\b`,
  ].join('|'),
  'g',
);

/** The text with each written date replaced by the word "date", so its numbers are not read as quantities. */
export function withoutDates(text: string): string {
  return text.replace(DATE, 'date');
}
