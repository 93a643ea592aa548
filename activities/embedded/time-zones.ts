// Time-zone arguments on the embedded model (issue 63): a tool's property named for a time zone
// (`timezone`, `source_timezone`) takes an IANA name, which a 135M model writes wrong ("Singapore",
// "India time"). The adapter offers it only the names the platform knows (Intl.supportedValuesOf,
// and UTC) whose place the request names as a whole word, so the grammar holds the model to them;
// a place the platform's list does not name leaves the argument without a value, and the action
// unresolved. A tool with two such properties needs two places named, and two different values; a
// sentence that names more places than the tool takes zones leaves the action unresolved too.

/** A property that takes a time zone, by its name. */
export const isTimeZoneKey = (key: string) => /time_?zone$|^tz$/i.test(key);

let places: { zone: string; place: RegExp }[] | undefined;

/** Each zone the platform knows with its place as a whole-word pattern, built once per process. */
function zonePlaces(): { zone: string; place: RegExp }[] {
  places ??= [...Intl.supportedValuesOf('timeZone'), 'UTC'].map((zone) => {
    const name = zone.split('/').at(-1)!.replace(/_/g, ' ');
    return { zone, place: new RegExp(`(?<![\\p{L}])${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![\\p{L}])`, 'iu') };
  });
  return places;
}

/** The IANA time zones whose place the text names ("Tokyo" → Asia/Tokyo; "UTC" → UTC), in the order the text names them. */
export function timeZonesNamedIn(text: string): string[] {
  const found = zonePlaces().flatMap(({ zone, place }) => {
    const at = place.exec(text);
    return at ? [{ zone, at: at.index }] : [];
  });
  return found.sort((a, b) => a.at - b.at).map((f) => f.zone);
}

type Schema = Record<string, unknown>;

/**
 * The argument schema with each time-zone property held to the zones the text names; null unless the
 * text names exactly as many as the tool requires.
 */
export function withTimeZones(schema: Schema, input: string): Schema | null {
  const properties = (schema.properties ?? {}) as Record<string, Schema>;
  const keys = Object.keys(properties).filter(isTimeZoneKey);
  if (!keys.length) return schema;
  const zones = timeZonesNamedIn(input);
  const required = new Set((schema.required as string[] | undefined) ?? []);
  // As many places as the tool takes zones: one more ("the time in Singapore, and its UTC offset") and the choice is the model's guess.
  if (zones.length !== keys.filter((k) => required.has(k)).length) return null;
  const held = Object.fromEntries(keys.map((k) => [k, zones.length ? { enum: zones } : properties[k]!]));
  return { ...schema, properties: { ...properties, ...held } };
}
