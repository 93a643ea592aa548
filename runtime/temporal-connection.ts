// The options every connection to Temporal is made with (the API's, the
// worker's, `npm run deploy`'s, the drills'), from the settings resolved once
// (config/temporal-profile.ts); and the API's gRPC connections, built so that
// nothing in the API process turns on an AsyncLocalStorage. The SDK keeps
// per-call deadlines and headers in one (`Connection.withDeadline`,
// `withMetadata`); from its first use, its promise hooks run on every promise
// of the process, for good. Measured on the bench API (issue 14), CPU per
// request: `/health` 19 → 16.5 µs, one run's read 118 → 97 µs.
// tests/temporal-client.test.ts checks the storage stays off.
import { type Interceptor, InterceptingCall } from '@grpc/grpc-js';
import { Connection, type ConnectionOptions, defaultGrpcRetryOptions, makeGrpcRetryInterceptor, type Metadata, type TLSConfig } from '@temporalio/client';
import type { TemporalConnectionSettings } from '../config/temporal-connection-settings.ts';

/** What both the client's Connection and the worker's NativeConnection take. */
export interface TemporalConnectOptions {
  address: string;
  tls: TLSConfig | false;
  apiKey?: string;
  metadata: Record<string, string>;
}

/**
 * The connection options of `settings`. TLS is passed as `false` when off: left unset, the SDK
 * would turn it on for an API key, where the settings (TEMPORAL_TLS=false) asked for plaintext.
 * The namespace goes in a `temporal-namespace` header, as the CLI and the SDK's client send it;
 * calls made on the bare connection (the operator service's, the deploy commands') carry it too.
 */
export function temporalConnectOptions(settings: TemporalConnectionSettings): TemporalConnectOptions {
  return {
    address: settings.address,
    tls: settings.tls ?? false,
    ...(settings.apiKey ? { apiKey: settings.apiKey } : {}),
    metadata: { ...settings.metadata, 'temporal-namespace': settings.namespace },
  };
}

/**
 * Gives every call on a connection a deadline `ms` after it starts, unless the
 * caller set one: a gRPC interceptor, where `withDeadline` would use the
 * storage. Listed first, it is the outermost interceptor, so the client's
 * retries share the one deadline.
 */
export function callDeadline(ms: number): Interceptor {
  return (options, nextCall) => new InterceptingCall(nextCall(options.deadline === undefined ? { ...options, deadline: Date.now() + ms } : options));
}

/**
 * A connection for one namespace. The SDK sends each workflow-service call's
 * namespace as a `temporal-namespace` header through `withMetadata`. Here that
 * header is static metadata, so a `withMetadata` that adds nothing new (and is
 * not inside another call's scope) runs its call directly.
 */
class NamespaceConnection extends Connection {
  override async withMetadata<R>(metadata: Metadata, fn: () => Promise<R>): Promise<R> {
    const fixed = this.options.metadata;
    const adds = Object.entries(metadata).some(([name, value]) => fixed[name] !== value);
    if (adds || this.callContextStorage.getStore() !== undefined) return await super.withMetadata(metadata, fn);
    return await fn();
  }
}

/** The client's connection: lazy (the API starts while Temporal is down), the SDK's retries, `deadlineMs` per call. */
export function namespaceConnection(settings: TemporalConnectionSettings, deadlineMs: number): Connection {
  return NamespaceConnection.lazy({
    ...temporalConnectOptions(settings),
    connectTimeout: '3 seconds',
    interceptors: [callDeadline(deadlineMs), makeGrpcRetryInterceptor(defaultGrpcRetryOptions())],
  } satisfies ConnectionOptions);
}

/** A connection for health probes: lazy, no retries, `deadlineMs` per call. */
export function probingConnection(settings: TemporalConnectionSettings, deadlineMs: number): Connection {
  return Connection.lazy({ ...temporalConnectOptions(settings), connectTimeout: '2 seconds', interceptors: [callDeadline(deadlineMs)] });
}
