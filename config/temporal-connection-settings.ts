// How a process reaches Temporal, resolved once (config/temporal-profile.ts, the way the Temporal
// CLI resolves it) and handed to every connection: the API's client, the worker's native
// connection, `npm run deploy` and the drills (runtime/temporal-connection.ts builds their options).
import type { TLSConfig } from '@temporalio/client';
import { withHidden } from './hidden.ts';

export interface TemporalConnectionSettings {
  /** The frontend, `host:port`. */
  address: string;
  namespace: string;
  /** TLS settings (`{}`: the system's roots), or undefined for plaintext. Not enumerable: it may hold a client key. */
  readonly tls?: TLSConfig;
  /** Sent as `authorization: Bearer <key>`. Not enumerable. */
  readonly apiKey?: string;
  /** gRPC metadata every call carries (a profile's `grpc_meta`, `TEMPORAL_GRPC_META_*`). */
  metadata: Record<string, string>;
  /** What set the address, for messages: `TEMPORAL_ADDRESS`, a temporal.toml profile, or the dev server. */
  source: string;
}

/** As resolved from the environment and temporal.toml: without an address, `npm start` runs the embedded dev server. */
export type ResolvedTemporalSettings = Omit<TemporalConnectionSettings, 'address'> & { address?: string };

interface VisibleSettings {
  address?: string;
  namespace: string;
  metadata?: Record<string, string>;
  source: string;
}
type Secrets = { tls?: TLSConfig; apiKey?: string };

/** Settings whose secrets stay out of logs and JSON. */
export function temporalSettings(visible: VisibleSettings & { address: string }, secrets?: Secrets): TemporalConnectionSettings;
export function temporalSettings(visible: VisibleSettings, secrets?: Secrets): ResolvedTemporalSettings;
export function temporalSettings(visible: VisibleSettings, secrets: Secrets = {}): ResolvedTemporalSettings {
  const settings = {
    ...(visible.address ? { address: visible.address } : {}),
    namespace: visible.namespace,
    metadata: visible.metadata ?? {},
    source: visible.source,
  };
  return withHidden(withHidden(settings, 'tls', secrets.tls), 'apiKey', secrets.apiKey);
}

/** A plaintext connection to a local server: the embedded dev server, a drill's or a test's. */
export function localTemporal(address: string, namespace = 'default'): TemporalConnectionSettings {
  return temporalSettings({ address, namespace, source: `the Temporal server at ${address}` });
}

/** The settings to connect with: the resolved cluster's, or (none resolved) the dev server's at `devServerAddress`. */
export function connectionSettings(resolved: ResolvedTemporalSettings, devServerAddress: string): TemporalConnectionSettings {
  if (resolved.address) return resolved as TemporalConnectionSettings;
  return temporalSettings({
    address: devServerAddress,
    namespace: resolved.namespace,
    metadata: resolved.metadata,
    source: 'the dev server on TEMPORAL_DEV_PORT',
  });
}

/** What may be logged or shown about a connection: whether TLS, a client certificate and an API key are used, never their values. */
export function describeTemporalConnection(settings: TemporalConnectionSettings): {
  address: string;
  namespace: string;
  tls: boolean;
  client_cert: boolean;
  api_key: boolean;
} {
  return {
    address: settings.address,
    namespace: settings.namespace,
    tls: settings.tls !== undefined,
    client_cert: settings.tls?.clientCertPair !== undefined,
    api_key: settings.apiKey !== undefined,
  };
}
