// Text arguments a small model may only copy: every run of up to a few words of the request, as
// written (a path stays whole; quotes and the sentence's closing punctuation are not part of a
// span). Held to these as an enum, the embedded model can write a tool's text arguments from the
// request but cannot invent one. An argument that names a path (by its property name) is offered
// the request's paths only, and any other text argument the spans that are not paths: a hint the
// plan records (Plan.hints).

const MAX_WORDS = 12;
const MAX_SPANS = 400;

/** The request's words, with quotes and closing punctuation trimmed from their ends. */
function wordsAsWritten(text: string): string[] {
  return text
    .split(/\s+/)
    .map((w) => w.replace(/^["'“‘(]+/, '').replace(/["'”’),;:!?.]+$/, ''))
    .filter(Boolean);
}

/** Every run of 1 to MAX_WORDS words, shortest first, at most MAX_SPANS of them. */
export function requestSpans(text: string): string[] {
  const words = wordsAsWritten(text);
  const spans = new Set<string>();
  for (let n = 1; n <= MAX_WORDS; n++) {
    for (let i = 0; i + n <= words.length; i++) spans.add(words.slice(i, i + n).join(' '));
  }
  return [...spans].slice(0, MAX_SPANS);
}

type Schema = Record<string, unknown>;

/** A property that names a file or a place (`path`, `repo_path`, `targetDir`): it takes one of the request's paths, nothing else. */
const PATH_KEY = /^(?:file|filename|destination|source|target|uri|url)$|(?:path|dir|directory|folder)$/i;
const PATH_SPAN = /^(?:[a-z][a-z0-9+.-]*:\/\/\S+|~?\.{0,2}\/\S*|[\w.-]+(?:\/[\w.-]+)+|[\w-]+\.[a-z][a-z0-9]{0,4})$/i;

/** Whether a path's last part has an extension, so it names a file ("notes.txt", "/srv/a/b.csv"), not a folder. */
export const namesFile = (path: string) => /(?:^|\/)[\w-]+\.[a-z][a-z0-9]{0,4}$/i.test(path);

/**
 * The spans without the folders a request names beside its files ("timetable.csv in /srv/share"): for a
 * tool that reads one file, the folder is where the file is, not what is read. Unchanged when no file is named.
 */
export function withoutFolders(spans: string[]): string[] {
  if (!spans.some((s) => PATH_SPAN.test(s) && namesFile(s))) return spans;
  return spans.filter((s) => !PATH_SPAN.test(s) || namesFile(s));
}

/** The paths the text names, in order (words of it that read as one). */
export const pathsNamed = (text: string): string[] => wordsAsWritten(text).filter((w) => PATH_SPAN.test(w));

/** Whether the text names a path (a word of it that reads as one). */
export function namesPath(text: string): boolean {
  return pathsNamed(text).length > 0;
}

/** Whether a tool's parameters (a JSON Schema object) take a path: a string property named as one, at any depth. */
export function takesPath(schema: unknown): boolean {
  const properties = (schema as { properties?: Record<string, unknown> } | null)?.properties;
  if (!properties || typeof properties !== 'object') return false;
  return Object.entries(properties).some(([key, value]) => PATH_KEY.test(key) || takesPath(value) || takesPath((value as { items?: unknown })?.items));
}

/** The spans a property may take: a path-like property the request's paths, any other its spans that are not paths. */
export function spansFor(key: string, spans: string[]): string[] {
  const paths = spans.filter((s) => PATH_SPAN.test(s));
  if (PATH_KEY.test(key)) return paths;
  const others = spans.filter((s) => !paths.includes(s));
  return others.length ? others : spans;
}

/**
 * A bounded argument schema whose strings are spans of the request (spansFor: a path argument one of
 * its paths); null when some required string has no span that fits (the request states no value for it).
 */
export function withSpanStrings(schema: Schema, spans: string[], key = ''): Schema | null {
  if (schema.type === 'string') {
    spans = spansFor(key, spans);
    const min = (schema.minLength as number | undefined) ?? 0;
    const max = (schema.maxLength as number | undefined) ?? Number.POSITIVE_INFINITY;
    const fitting = spans.filter((s) => s.length >= min && s.length <= max);
    return fitting.length ? { enum: fitting } : null;
  }
  if (schema.type === 'array') {
    const items = withSpanStrings(schema.items as Schema, spans, key);
    return items ? { ...schema, items } : null;
  }
  if (schema.type === 'object') {
    const properties: Record<string, Schema> = {};
    for (const [name, value] of Object.entries((schema.properties ?? {}) as Record<string, Schema>)) {
      const bounded = withSpanStrings(value, spans, name);
      if (!bounded) return null;
      properties[name] = bounded;
    }
    return { ...schema, properties };
  }
  if (Array.isArray(schema.oneOf)) {
    const branches = (schema.oneOf as Schema[]).map((b) => withSpanStrings(b, spans, key)).filter((b): b is Schema => b !== null);
    return branches.length ? { oneOf: branches } : null;
  }
  return schema;
}
