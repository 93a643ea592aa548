// Iterative walks over parsed JSON: request bodies can be nested thousands of
// levels deep, so no scan may recurse. Paths are written as the contract's
// `param` is: `a.b[0].c`.

export interface JsonNode {
  path: string;
  /** 0 for the root value; each object or array adds one. */
  depth: number;
  value: unknown;
  /** The key under which `value` sits in its parent object, if it does. */
  key?: string;
}

function childPath(parent: string, key: string | number): string {
  if (typeof key === 'number') return `${parent}[${key}]`;
  return parent === '' ? key : `${parent}.${key}`;
}

/** Every value in `root`, parents before children, depth-first, without recursion. */
export function* walkJson(root: unknown): Generator<JsonNode> {
  const stack: JsonNode[] = [{ path: '', depth: 0, value: root }];
  while (stack.length > 0) {
    const node = stack.pop()!;
    yield node;
    const { value, path, depth } = node;
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push({ path: childPath(path, i), depth: depth + 1, value: value[i] });
    } else if (value !== null && typeof value === 'object') {
      const entries = Object.entries(value);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, child] = entries[i]!;
        stack.push({ path: childPath(path, key), depth: depth + 1, value: child, key });
      }
    }
  }
}

/** How deeply `root` nests objects and arrays, counting stops once past `limit`. */
export function exceedsDepth(root: unknown, limit: number): boolean {
  for (const node of walkJson(root)) if (node.depth > limit) return true;
  return false;
}

/** The path of the first string (value or object key) for which `test` holds; '' is the root itself. */
export function findString(root: unknown, test: (s: string) => boolean): string | null {
  for (const node of walkJson(root)) {
    if ((node.key !== undefined && test(node.key)) || (typeof node.value === 'string' && test(node.value))) return node.path;
  }
  return null;
}
