// Completion notifications: the retry schedule of one delivery and the rules for a
// webhook endpoint's URL. Pure (no Node modules, type-only imports), so the
// workflow can import the retry policy without pulling activity code into its bundle.
import type { RetryPolicy } from '@temporalio/common';

/** Attempts per (notification, endpoint): the first and 7 retries. */
export const NOTIFICATION_MAX_ATTEMPTS = 8;

/**
 * The retry policy of `deliverNotification`. Attempts start at 0 s, +30 s, +2 min, +8 min, +32 min,
 * +2 h 8 min, +6 h, +6 h: 8 attempts over about 14 h 50 min. Every attempt carries the same
 * webhook-id. The activity marks its delivery failed on attempt NOTIFICATION_MAX_ATTEMPTS and then
 * throws a non-retryable failure, so a longer policy cannot outlive the recorded outcome.
 * Give the activity a startToCloseTimeout above WEBHOOK_TIMEOUT_MS (e.g. 30 s).
 */
export const NOTIFICATION_RETRY: RetryPolicy = {
  initialInterval: '30 seconds',
  backoffCoefficient: 4,
  maximumInterval: '6 hours',
  maximumAttempts: NOTIFICATION_MAX_ATTEMPTS,
};

/** Live endpoints a tenant may have at once; one more is 409 webhook_endpoint_limit_reached. */
export const MAX_WEBHOOK_ENDPOINTS = 10;
export const WEBHOOK_URL_MAX_LENGTH = 2048;
export const WEBHOOK_DESCRIPTION_MAX_LENGTH = 200;

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
      a === 0 || a === 10 || a === 127 || (a === 100 && b >= 64 && b <= 127) || (a === 169 && b === 254) || (a === 172 && b >= 16 && b <= 31) ||
      (a === 192 && b === 168) || (a === 192 && b === 0) || (a === 198 && (b === 18 || b === 19)) || a >= 224
    );
  }
  if (!hostname.startsWith('[')) return false;
  const v6 = hostname.slice(1, -1).toLowerCase();
  return v6 === '::' || v6 === '::1' || /^f[cd]/.test(v6) || /^fe[89ab]/.test(v6) || v6.startsWith('ff') || v6.startsWith('::ffff:');
}

export interface WebhookUrlRules {
  /** Plain http (and https) to a loopback host: outside production only (local receivers in development and tests). */
  allowLoopback: boolean;
}

/**
 * Why `value` cannot be a webhook endpoint URL, or null when it can: an absolute https URL of at most
 * 2048 characters, without user:password@ or a fragment, whose host is a name or a public address;
 * with `allowLoopback`, also http or https to localhost, 127.0.0.0/8 or [::1].
 */
export function webhookUrlProblem(value: string, rules: WebhookUrlRules): string | null {
  if (value.length > WEBHOOK_URL_MAX_LENGTH) return `must be at most ${WEBHOOK_URL_MAX_LENGTH} characters`;
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
