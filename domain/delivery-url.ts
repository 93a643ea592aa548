// The one rule for a URL this service sends data to on a tenant's behalf: completion
// webhook endpoints, the webhook_delivery tool's URL and trace export endpoints, from
// the API, the CLIs or anything else that stores one. Checked when the URL is stored,
// and again at send time on the address its name resolves to (services/delivery-fetch.ts),
// so a name that points at loopback, private or link-local space (the cloud metadata
// service at 169.254.169.254 included) is refused in production. Pure.

export const DELIVERY_URL_MAX_LENGTH = 2048;

export interface DeliveryUrlRules {
  /** Plain http (and https) to a loopback host: outside production only (local receivers in development and tests). */
  allowLoopback: boolean;
}

/** The rules of a deployment: loopback receivers outside production only. */
export function deliveryUrlRules(env: string): DeliveryUrlRules {
  return { allowLoopback: env !== 'production' };
}

function ipv4(host: string): number[] | null {
  const parts = host.split('.');
  if (parts.length !== 4 || !parts.every((p) => /^\d{1,3}$/.test(p))) return null;
  const octets = parts.map(Number);
  return octets.every((o) => o <= 255) ? octets : null;
}

/** A loopback host: localhost (and *.localhost), 127.0.0.0/8, [::1]. WHATWG URL hostnames (already normalised). */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/\.$/, '');
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (host === '[::1]') return true;
  const v4 = ipv4(host);
  return v4 !== null && v4[0] === 127;
}

/**
 * An address literal no public receiver has: unspecified, private, shared (CGNAT), link-local (cloud
 * metadata services live at 169.254.169.254), benchmark, multicast and reserved IPv4; ::, unique-local,
 * link-local, multicast and IPv4-mapped IPv6. Loopback is checked separately (isLoopbackHost).
 */
export function isNonPublicAddress(hostname: string): boolean {
  const v4 = ipv4(hostname);
  if (v4) {
    const [a, b] = v4 as [number, number, number, number];
    return (
      a === 0 ||
      a === 10 ||
      a === 127 ||
      (a === 100 && b >= 64 && b <= 127) ||
      (a === 169 && b === 254) ||
      (a === 172 && b >= 16 && b <= 31) ||
      (a === 192 && b === 168) ||
      (a === 192 && b === 0) ||
      (a === 198 && (b === 18 || b === 19)) ||
      a >= 224
    );
  }
  if (!hostname.startsWith('[')) return false;
  const v6 = hostname.slice(1, -1).toLowerCase();
  return v6 === '::' || v6 === '::1' || /^f[cd]/.test(v6) || /^fe[89ab]/.test(v6) || v6.startsWith('ff') || v6.startsWith('::ffff:');
}

/**
 * Why `value` cannot be a delivery URL, or null when it can: an absolute https URL of at most
 * 2048 characters, without user:password@ or a fragment, whose host is a name or a public address;
 * with `allowLoopback`, also http or https to localhost, 127.0.0.0/8 or [::1]. Never quotes the URL.
 */
export function deliveryUrlProblem(value: string, rules: DeliveryUrlRules): string | null {
  if (value.length > DELIVERY_URL_MAX_LENGTH) return `must be at most ${DELIVERY_URL_MAX_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an absolute https URL';
  }
  if (url.username || url.password) return 'must not carry credentials (user:password@); verify deliveries by their signature instead';
  if (url.hash) return 'must not have a fragment (#...)';
  const loopback = isLoopbackHost(url.hostname);
  if (loopback) {
    if (!rules.allowLoopback) return 'must be reachable from the internet: localhost and loopback addresses are accepted only outside production';
    return url.protocol === 'https:' || url.protocol === 'http:' ? null : 'must be an http(s) URL';
  }
  if (url.protocol !== 'https:') return 'must use https (plain http is accepted only for localhost, 127.0.0.1 or [::1] outside production)';
  if (isNonPublicAddress(url.hostname)) return 'must not name a private, link-local or reserved address';
  return null;
}

/**
 * Why a connection to `address` (an IP address as a resolver returns it: IPv6 without brackets) is
 * refused under `rules`, or null: the same address classes as deliveryUrlProblem, for a name that
 * resolves into them.
 */
export function resolvedAddressProblem(address: string, rules: DeliveryUrlRules): string | null {
  const literal = address.includes(':') ? `[${address}]` : address;
  if (isLoopbackHost(literal)) return rules.allowLoopback ? null : 'resolves to a loopback address, accepted only outside production';
  if (isNonPublicAddress(literal)) return 'resolves to a private, link-local or reserved address';
  return null;
}
