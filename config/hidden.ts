// Secrets in the configuration (a Redis password, the codec token, Temporal's API key and TLS key)
// are properties that are not enumerable: logging or serialising the config never shows them.

/** `target` with `name` set to `value` as a property that is not enumerable (secrets stay out of logs and JSON). */
export function withHidden<T extends object, K extends string, V>(target: T, name: K, value: V | undefined): T & { [P in K]?: V } {
  if (value !== undefined) Object.defineProperty(target, name, { value, enumerable: false });
  return target as T & { [P in K]?: V };
}
