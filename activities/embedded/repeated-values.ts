// Arguments the small model wrote by repeating itself: one text filling two fields of an object (a
// conversion from a zone to itself, an entity whose type is its own name, a file whose content is its
// path) or standing twice in one list. A capable model's arguments hardly ever do this; the 135M
// model's, written under a grammar that only lets it copy spans of the request, often do when it has
// run out of what to copy. Structure only: no word of any language is read.

/** A repeated text of `value`'s, as found (for the reason); null when it has none. */
export function repeatedValue(value: unknown): string | null {
  if (Array.isArray(value)) {
    const seen = new Set<string>();
    for (const item of value) {
      const key = JSON.stringify(item);
      if (seen.has(key)) return typeof item === 'string' ? item : key;
      seen.add(key);
    }
    for (const item of value) {
      const inner = repeatedValue(item);
      if (inner !== null) return inner;
    }
    return null;
  }
  if (value && typeof value === 'object') {
    const texts = new Set<string>();
    for (const v of Object.values(value)) {
      if (typeof v === 'string' && v.trim()) {
        if (texts.has(v.trim())) return v.trim();
        texts.add(v.trim());
      }
      const inner = repeatedValue(v);
      if (inner !== null) return inner;
    }
  }
  return null;
}
