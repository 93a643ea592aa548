// Sends to a delivery URL (domain/delivery-url.ts) with the rule checked again at send
// time: the stored URL once more (it may predate the rule), then every address its name
// resolves to, inside the connection's own lookup, so the address checked is the address
// connected to (no window for a name to change its answer in between). A refused address
// fails before any connection is opened.
import dns, { type LookupAddress, type LookupAllOptions } from 'node:dns';
import { Agent, fetch, type RequestInit, type Response } from 'undici';
import { deliveryUrlProblem, type DeliveryUrlRules, resolvedAddressProblem } from '../domain/delivery-url.ts';

/** The code of the error (as the `cause` of fetch's TypeError) when a target is refused; nothing was sent. */
export const DELIVERY_REFUSED = 'GWS_DELIVERY_TARGET_REFUSED';

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;
/** A resolver in dns.lookup's shape, all addresses at once; tests pass one that answers a fixed address. */
export type ResolveAll = (
  hostname: string,
  options: LookupAllOptions,
  callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

function refused(problem: string): NodeJS.ErrnoException {
  // The message names the rule, never the URL or the address: a URL may carry what its owner keeps private.
  return Object.assign(new Error(`The delivery target ${problem}; refused before connecting, nothing was sent.`), { code: DELIVERY_REFUSED });
}

/** net's `lookup` option: resolves as dns.lookup does, and fails when any address breaks the rule. */
export function guardedLookup(rules: DeliveryUrlRules, resolveAll: ResolveAll = dns.lookup as unknown as ResolveAll) {
  return (hostname: string, options: dns.LookupOptions, callback: LookupCallback): void => {
    resolveAll(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      const problem = addresses.map((a) => resolvedAddressProblem(a.address, rules)).find((p) => p !== null);
      if (problem) return callback(refused(problem), []);
      if (options.all) return callback(null, addresses);
      const first = addresses[0];
      if (!first) return callback(Object.assign(new Error('No address found.'), { code: 'ENOTFOUND' }), []);
      callback(null, first.address, first.family);
    });
  };
}

/** True when `err` (thrown by deliveryFetch) is a refusal by the rule: nothing was sent. */
export function isDeliveryRefused(err: unknown): boolean {
  const e = err as { code?: string; cause?: { code?: string } } | null;
  return e?.code === DELIVERY_REFUSED || e?.cause?.code === DELIVERY_REFUSED;
}

export interface DeliveryFetch {
  (url: string, init: RequestInit): Promise<Response>;
  close(): Promise<void>;
}

/** A fetch for delivery URLs under `rules`, with its own connection pool. */
export function deliveryFetch(rules: DeliveryUrlRules, resolveAll?: ResolveAll): DeliveryFetch {
  const dispatcher = new Agent({ connect: { lookup: guardedLookup(rules, resolveAll) as never } });
  const send = async (url: string, init: RequestInit): Promise<Response> => {
    const problem = deliveryUrlProblem(url, rules);
    if (problem) throw refused(problem);
    return fetch(url, { ...init, dispatcher });
  };
  return Object.assign(send, { close: () => dispatcher.close() });
}
