// Credential values must never enter routes that take credential references.
// This recognises what looks like a secret: known key prefixes, private keys,
// JWTs, bearer strings, and long high-entropy tokens.
import { walkJson } from './json-walk.ts';

const KNOWN_PREFIXES = [
  /^sk-[A-Za-z0-9_-]{8,}/,
  /^sk_(live|test)_/,
  /^pk_(live|test)_/,
  /^rk_(live|test)_/,
  /^ghp_/,
  /^gho_/,
  /^ghs_/,
  /^github_pat_/,
  /^xox[abpr]-/,
  /^AKIA[0-9A-Z]{16}$/,
  /^ASIA[0-9A-Z]{16}$/,
  /^AIza[0-9A-Za-z_-]{20,}/,
  /^gws_(core|ws)_/,
  /^glpat-/,
  /^hf_[A-Za-z0-9]{20,}/,
  /^SG\.[A-Za-z0-9_-]{10,}/,
  /^npm_[A-Za-z0-9]{20,}/,
];

function shannonBitsPerChar(s: string): number {
  const counts = new Map<string, number>();
  for (const c of s) counts.set(c, (counts.get(c) ?? 0) + 1);
  let bits = 0;
  for (const n of counts.values()) {
    const p = n / s.length;
    bits -= p * Math.log2(p);
  }
  return bits;
}

/** A bare token (no URL, no reference) that looks like a credential value. */
function looksLikeToken(v: string): boolean {
  if (/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(v)) return true;
  if (/^bearer\s+\S{8,}/i.test(v)) return true;
  if (/^(basic|token)\s+[A-Za-z0-9+/=._-]{8,}$/i.test(v)) return true;
  if (/^eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/.test(v)) return true;
  if (KNOWN_PREFIXES.some((p) => p.test(v))) return true;
  // This service's own identifiers (run_…, trace_…: a short prefix and hex) are names, not secrets.
  if (/^[a-z]{2,8}_[0-9a-f]{8,64}$/.test(v)) return false;
  // A long token with no spaces, mixed character classes and high entropy.
  if (v.length >= 24 && !/\s/.test(v)) {
    const classes = [/[a-z]/, /[A-Z]/, /[0-9]/].filter((r) => r.test(v)).length;
    if (classes >= 2 && shannonBitsPerChar(v) >= 3.5) return true;
  }
  return false;
}

// Query parameters that carry credentials whatever their value looks like.
const CREDENTIAL_PARAM =
  /^(api[_-]?key|apikey|key|token|access[_-]?token|auth|authorization|secret|client[_-]?secret|password|passwd|pwd|sig|signature|x-api-key|code)$/i;

/** A URL that carries a credential: user:password@ (any userinfo), or a credential in its query. */
function urlCarriesCredential(v: string): boolean {
  let url: URL;
  try {
    url = new URL(v);
  } catch {
    return false;
  }
  if (url.username || url.password) return true;
  for (const [name, value] of url.searchParams) {
    if (value && (CREDENTIAL_PARAM.test(name) || looksLikeToken(value))) return true;
  }
  return false;
}

/** A number that passes the Luhn check, 13 to 19 digits (spaces and dashes allowed): a payment card. */
export function looksLikeCardNumber(value: string): boolean {
  if (!/^[\d -]{13,23}$/.test(value.trim())) return false;
  const digits = value.replace(/\D/g, '');
  if (digits.length < 13 || digits.length > 19) return false;
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
    sum += d;
  }
  return sum % 10 === 0;
}

export function looksLikeSecret(value: string): boolean {
  const v = value.trim();
  // A reference names where a secret lives; a "reference" whose name is itself a token is a value.
  const reference = /^(?:secret:\/\/|env:)(.*)$/i.exec(v);
  if (reference) return reference[1]!.split('/').some((part) => looksLikeToken(part));
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(v)) return urlCarriesCredential(v);
  return looksLikeToken(v) || looksLikeCardNumber(v);
}

/** The text with every whitespace-separated token that looks like a secret replaced by `[redacted]`. */
export function redactSecrets(text: string): string {
  return text.replace(/\S+/g, (token) => {
    const bare = token.replace(/^[("'<[]+|[)"'>\].,;:!?]+$/g, '');
    return bare && looksLikeSecret(bare) ? token.replace(bare, '[redacted]') : token;
  });
}

/** The path of the first string in `value` that looks like a secret, or null (the root itself: ''). Iterative. */
export function findSecret(value: unknown): string | null {
  for (const node of walkJson(value)) if (typeof node.value === 'string' && looksLikeSecret(node.value)) return node.path || null;
  return null;
}

/** A credential reference names where a secret lives, never the secret: env:NAME or secret://path. */
export const CREDENTIAL_REFERENCE = /^(env:[A-Z_][A-Z0-9_]{0,127}|secret:\/\/[A-Za-z0-9._/-]{1,200})$/;
