// Dates as a request writes them ("31 March 2026", "on March 31", "9 Oct", "2026-03-31", "31/03/2026"). Their
// numbers are no quantities: "notice by 31 March 2026 … ends 30 June 2026. How many days is that?" had the small model
// add 31, 2026, 30 and 2026 up. The month names are the platform's own (Intl), in English as the adapter reads. A month
// before a bare number is a date only with a year, an ordinal or a word that leads a date ("on", "by"): "Jan 8" in
// "Piet 6.5, Jan 8, Sanne 7.25" is Jan's hours, "Revenue: Jan 1200, Feb 1350" January's revenue.
const monthNames = (month: 'long' | 'short') =>
  Array.from({ length: 12 }, (_, m) => new Intl.DateTimeFormat('en', { month, timeZone: 'UTC' }).format(Date.UTC(2000, m, 1)));
// Capitalised as written: "may" is a verb, "May" a month ("Sept" too, beside the short "Sep").
const MONTH = `(?:${[...monthNames('long'), ...monthNames('short'), 'Sept'].join('|')})\\.?`;
const DAY = String.raw`(?<![\d.,])\d{1,2}`;
const ORDINAL = `${DAY}(?:st|nd|rd|th)`;
const YEAR = String.raw`(?:19|20)\d\d`;
const LEADS = String.raw`\b(?:on|by|from|until|till|to|since|before|after|due|of|between|and)\s+`;
const DATE = new RegExp(
  `(?:${[
    String.raw`${DAY}(?:st|nd|rd|th)?\s+(?:of\s+)?${MONTH}(?:,?\s+${YEAR})?`,
    String.raw`\b${MONTH}\s+(?:${ORDINAL}|${DAY},?\s+${YEAR})(?:,?\s+${YEAR})?`,
    String.raw`(?<=${LEADS})${MONTH}\s+${DAY}`,
    String.raw`\b${MONTH}\s+${YEAR}`,
    String.raw`\b${YEAR}-\d{1,2}-\d{1,2}`,
    String.raw`\b\d{1,2}/\d{1,2}/(?:${YEAR}|\d{2})`,
  ].join('|')})(?![.,]?\\d)`,
  'g',
);

/** The text with each written date replaced by the word "date", so its numbers are not read as quantities. */
export function withoutDates(text: string): string {
  return text.replace(DATE, 'date');
}

const WEEKDAYS = Array.from({ length: 7 }, (_, d) => new Intl.DateTimeFormat('en', { weekday: 'long', timeZone: 'UTC' }).format(Date.UTC(2000, 0, 2 + d)));
const NAMES_A_DAY = new RegExp(`\\b(?:${WEEKDAYS.join('|')}|tomorrow|yesterday)\\b`, 'i');

/** Whether the text names a day: a weekday (the platform's names), tomorrow or yesterday, or a written date. */
export function namesADay(text: string): boolean {
  return NAMES_A_DAY.test(text) || withoutDates(text) !== text;
}
