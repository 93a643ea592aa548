// Time-zone arguments on the embedded model (issue 63): a tool's property named for a time zone
// (`timezone`, `source_timezone`) takes an IANA name, which a 135M model writes wrong ("Singapore",
// "India time"). The adapter offers it only the names the platform knows (Intl.supportedValuesOf,
// and UTC) whose place the request names as a whole word, so the grammar holds the model to them;
// a place the platform's list does not name leaves the argument without a value, and the action
// unresolved. A tool with two such properties needs two places named, and two different values; a
// sentence that names more places than the tool takes zones leaves the action unresolved too.
// A conversion ("If it's 15:00 in Singapore, what time is it in Dubai?") is held further: the one
// time the action's sentence states, in the tool's 24-hour form, from the place after "from" or named nearest it, to the one
// other place the action names; so the model cannot swap the two, nor write the time wrong.
import { sentencesOf } from '../../domain/text/analyze.ts';
import { escapeRegExp } from '../../domain/text/escape-regexp.ts';
import { namesADay } from './written-dates.ts';

/** A property that takes a time zone, by its name. */
export const isTimeZoneKey = (key: string) => /time_?zone$|^tz$/i.test(key);

let places: { zone: string; place: RegExp }[] | undefined;

// Zones IANA renamed that the platform's list still gives by their old names (ICU's canonical ids:
// Asia/Calcutta for Asia/Kolkata). A request names the city as it is called now.
const RENAMED = ['Asia/Kolkata', 'Asia/Kathmandu', 'Asia/Ho_Chi_Minh', 'Asia/Yangon', 'Europe/Kyiv', 'America/Nuuk', 'Africa/Asmara', 'Atlantic/Faroe'];

/** The zone's current IANA name, where the platform resolves a renamed zone to this old one. */
function currentName(zone: string): string {
  return RENAMED.find((now) => new Intl.DateTimeFormat('en', { timeZone: now }).resolvedOptions().timeZone === zone) ?? zone;
}

/** Each zone the platform knows with its place as a whole-word pattern, built once per process. */
function zonePlaces(): { zone: string; place: RegExp }[] {
  places ??= [...Intl.supportedValuesOf('timeZone').map(currentName), 'UTC'].map((zone) => {
    const name = zone.split('/').at(-1)!.replace(/_/g, ' ');
    return { zone, place: new RegExp(`(?<![\\p{L}])${escapeRegExp(name)}(?![\\p{L}])`, 'iu') };
  });
  return places;
}

/** Each place the text names with its zone and where it stands, in the order the text names them. */
function zonesAt(text: string): { zone: string; at: number }[] {
  // "São Paulo" is America/Sao_Paulo: letters without their accents (a letter and its marks stay one character).
  const plain = text.normalize('NFD').replace(/\p{M}/gu, '');
  const found = zonePlaces().flatMap(({ zone, place }) => {
    const g = new RegExp(place.source, 'giu');
    return [...plain.matchAll(g)].map((m) => ({ zone, at: m.index }));
  });
  return found.sort((a, b) => a.at - b.at);
}

/** The IANA time zones whose place the text names ("Tokyo" → Asia/Tokyo; "UTC" → UTC), in the order the text names them. */
export function timeZonesNamedIn(text: string): string[] {
  return [...new Set(zonesAt(text).map((f) => f.zone))];
}

/** The times of day the text states ("15:00", "3pm", "2 p.m.", "08:30", "noon"), in 24-hour HH:MM, with where each stands. */
export function statedTimes(text: string): { time: string; at: number }[] {
  const named = [...text.matchAll(/\b(noon|midday|midnight)\b/gi)].map((m) => ({ time: /midnight/i.test(m[1]!) ? '00:00' : '12:00', at: m.index }));
  return [...named, ...clockTimes(text)].sort((a, b) => a.at - b.at);
}

/** The times of day the text states on a clock ("15:00", "3pm"); not an offset ("GMT+1:00", "UTC-05:00"). */
function clockTimes(text: string): { time: string; at: number }[] {
  return [...text.matchAll(/(?<![\d:.,/+\-−]|(?:GMT|UTC)\s?)(\d{1,2})(?::([0-5]\d))?\s*(am|pm|a\.m\.|p\.m\.)?(?![\d:])/gi)].flatMap((m) => {
    const [hour, minutes, half] = [Number(m[1]), m[2], m[3]?.toLowerCase().replace(/\./g, '')];
    if (minutes === undefined && half === undefined) return [];
    if (half ? hour < 1 || hour > 12 : hour > 23) return [];
    const h = half === 'pm' ? (hour % 12) + 12 : half === 'am' ? hour % 12 : hour;
    return [{ time: `${String(h).padStart(2, '0')}:${minutes ?? '00'}`, at: m.index }];
  });
}

/** A conversion the request states: its one time, the zone named nearest that time, and the one other zone the action names. */
export interface Conversion {
  time: string;
  source: string;
  target: string;
}

/** Words that ask for the time it is now, which no stated time converts. */
const NOW = /\b(?:now|currently|at the moment)\b/i;

/** A question about the time it is now ("What time is it in Tokyo?", "the time there right now"), not at another time. */
export const asksTimeNow = (clause: string) =>
  !/\b(?:will|when)\b/i.test(clause) && (NOW.test(clause) || /\bwhat(?:'s| is) the time\b|\bwhat time is it\b/i.test(clause));

/**
 * The conversion an action asks for, or null. Its time is the one its sentence states (or, when it
 * states none, the sentence before: "… at 10:30 in Kolkata. What is that in UTC?"); its source the
 * place after "from", else the one named nearest that time; its target the one other place the action
 * names. Two times, two places to convert to, or a question about now: null.
 */
export function conversionOf(input: string, action: { clause: string; sentence: number }): Conversion | null {
  if (NOW.test(action.clause)) return null;
  const sentences = sentencesOf(input);
  const own = sentences[action.sentence] ?? action.clause;
  const stating = statedTimes(own).length ? own : (sentences[action.sentence - 1] ?? '');
  const text = stating === own ? own : `${stating} ${own}`;
  // A conversion tool converts a time of today: the day it gives is no answer where the request names another.
  if (/\b(?:day|date)\b/i.test(action.clause) && namesADay(text)) return null;
  const times = statedTimes(text);
  const named = zonesAt(text);
  if (times.length !== 1 || !named.length) return null;
  const { time, at } = times[0]!;
  // "from" names the source where the time is stated ("3pm from London"), not in the question ("I'm working from Dubai").
  const from = named.find((n) => n.at < stating.length && /\bfrom\s+(?:\S+\s+)?$/i.test(text.slice(Math.max(0, n.at - 16), n.at)));
  // The source is named beside the time: in the sentence that states it, when that sentence names a place.
  const beside = named.filter((n) => n.at < stating.length);
  const near = (beside.length ? beside : named).reduce((a, b) => (Math.abs(b.at - at) < Math.abs(a.at - at) ? b : a));
  const source = (from ?? near).zone;
  // The target the action names, or its sentence where the action points to it ("I'm working from Dubai - what time is that for me there?").
  const inClause = timeZonesNamedIn(action.clause).filter((z) => z !== source);
  const targets = inClause.length ? inClause : timeZonesNamedIn(own).filter((z) => z !== source);
  return targets.length === 1 ? { time, source, target: targets[0]! } : null;
}

// The properties of a conversion tool (`source_timezone`, `target_timezone`, `time`), by their names.
const SOURCE_KEY = /source|from/i;
const TARGET_KEY = /target|dest|^to_/i;
const TIME_KEY = /^time$/i;

/** Whether a tool's schema converts a time between two zones: a required source zone, a required target zone. */
export function convertsTime(schema: Schema): boolean {
  const required = ((schema.required as string[] | undefined) ?? []).filter(isTimeZoneKey);
  return required.some((k) => SOURCE_KEY.test(k)) && required.some((k) => TARGET_KEY.test(k));
}

/** The conversion tool's schema with its zones and time held to the one conversion the request states; null when it states none. */
function heldToConversion(schema: Schema, conversion: Conversion | null): Schema | null {
  if (!conversion) return null;
  const properties = (schema.properties ?? {}) as Record<string, Schema>;
  const value = (key: string) =>
    isTimeZoneKey(key) ? (SOURCE_KEY.test(key) ? conversion.source : conversion.target) : TIME_KEY.test(key) ? conversion.time : null;
  const held = Object.fromEntries(
    Object.keys(properties).flatMap((k) => {
      const v = value(k);
      return v === null ? [] : [[k, { enum: [v] }]];
    }),
  );
  return { ...schema, properties: { ...properties, ...held } };
}

type Schema = Record<string, unknown>;

/**
 * The argument schema with each time-zone property held to the zones the sentence names; null unless
 * it names exactly as many as the tool requires. A conversion tool is held to the request's one
 * conversion instead (conversionOf), or null when it states none.
 */
export function withTimeZones(schema: Schema, sentence: string, conversion: Conversion | null = null): Schema | null {
  const properties = (schema.properties ?? {}) as Record<string, Schema>;
  const keys = Object.keys(properties).filter(isTimeZoneKey);
  if (!keys.length) return schema;
  if (convertsTime(schema)) return heldToConversion(schema, conversion);
  const zones = timeZonesNamedIn(sentence);
  const required = new Set((schema.required as string[] | undefined) ?? []);
  // As many places as the tool takes zones: one more ("the time in Singapore, and its UTC offset") and the choice is the model's guess.
  if (zones.length !== keys.filter((k) => required.has(k)).length) return null;
  const held = Object.fromEntries(keys.map((k) => [k, zones.length ? { enum: zones } : properties[k]!]));
  return { ...schema, properties: { ...properties, ...held } };
}
