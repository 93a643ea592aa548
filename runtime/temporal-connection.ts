// The API's gRPC connections to Temporal, built so that nothing in the API
// process turns on an AsyncLocalStorage. The SDK keeps per-call deadlines and
// headers in one (`Connection.withDeadline`, `withMetadata`); from its first
// use, its promise hooks run on every promise of the process, for good.
// Measured on the bench API (issue 14), CPU per request: `/health` 19 → 16.5 µs,
// one run's read 118 → 97 µs. tests/temporal-client.test.ts checks the storage
// stays off.
import { type Interceptor, InterceptingCall } from '@grpc/grpc-js';
import { Connection, type ConnectionOptions, defaultGrpcRetryOptions, makeGrpcRetryInterceptor, type Metadata } from '@temporalio/client';

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
export function namespaceConnection(address: string, namespace: string, deadlineMs: number): Connection {
  return NamespaceConnection.lazy({
    address,
    connectTimeout: '3 seconds',
    metadata: { 'temporal-namespace': namespace },
    interceptors: [callDeadline(deadlineMs), makeGrpcRetryInterceptor(defaultGrpcRetryOptions())],
  } satisfies ConnectionOptions);
}

/** A connection for health probes: lazy, no retries, `deadlineMs` per call. */
export function probingConnection(address: string, deadlineMs: number): Connection {
  return Connection.lazy({ address, connectTimeout: '2 seconds', interceptors: [callDeadline(deadlineMs)] });
}
