// Client-side Temporal plumbing: the API's lazy client (so the API starts
// even while Temporal is down and /health can say so; its connections are in
// temporal-connection.ts), the health probe, and registration of this
// service's search attributes on an existing cluster. Every client encrypts
// and decrypts payloads with the service's codec.
import { Client, type Connection } from '@temporalio/client';
import type { PayloadCodec } from '@temporalio/common';
import proto from '@temporalio/proto';
import type { Logger } from 'pino';
import type { TemporalConnectionSettings } from '../config/temporal-connection-settings.ts';
import { CUSTOM_SEARCH_ATTRIBUTES } from '../domain/runs/search-attributes.ts';
import { isDependencyOutage } from '../services/dependency-outage.ts';
import { tracingClientInterceptors } from './temporal-tracing.ts';
import { serviceDataConverter } from './payload-codec.ts';
import { namespaceConnection, probingConnection } from './temporal-connection.ts';

/**
 * How long one call of the API's client (start, approval Update, cancel,
 * describe) may take before it fails with DEADLINE_EXCEEDED and the API
 * answers 503. Without a deadline the client's own gRPC retries keep a request
 * waiting about 20 s while Temporal is down, and an approval Update waits
 * without end while no worker runs.
 */
export const TEMPORAL_CALL_DEADLINE_MS = 5_000;
/** The health probe's deadline. */
export const PROBE_DEADLINE_MS = 2_000;

export interface TemporalHandle {
  connection: Connection;
  client: Client;
  /** The deadline every call of `client` gets (TEMPORAL_CALL_DEADLINE_MS unless given). */
  callDeadlineMs: number;
  /** The payload codec the client uses (the codec endpoint serves the same one). */
  codec: PayloadCodec;
  /** Reports reachability now: no retry interceptor, so no retry timer outlives a probe (or the process's shutdown). */
  probe: () => Promise<void>;
  close(): Promise<void>;
}

/** The client of `settings`' namespace, connected as `settings` say (address, TLS, API key, metadata). */
export function lazyTemporalClient(settings: TemporalConnectionSettings, codec: PayloadCodec, callDeadlineMs = TEMPORAL_CALL_DEADLINE_MS): TemporalHandle {
  const connection = namespaceConnection(settings, callDeadlineMs);
  const probeConnection = probingConnection(settings, PROBE_DEADLINE_MS);
  return {
    connection,
    client: new Client({
      connection,
      namespace: settings.namespace,
      dataConverter: serviceDataConverter(codec),
      interceptors: { workflow: tracingClientInterceptors() },
    }),
    callDeadlineMs,
    codec,
    probe: () => probeTemporal(probeConnection),
    async close() {
      await Promise.all([connection.close(), probeConnection.close()]);
    },
  };
}

/** Resolves when the frontend answers a health check within the probe's deadline. */
async function probeTemporal(connection: Connection): Promise<void> {
  await connection.healthService.check({ service: 'temporal.api.workflowservice.v1.WorkflowService' });
}

/** Resolves when the Temporal frontend of `settings` answers; throws the probe's error otherwise. */
export async function checkTemporal(settings: TemporalConnectionSettings): Promise<void> {
  const connection = probingConnection(settings, PROBE_DEADLINE_MS);
  try {
    await probeTemporal(connection);
  } finally {
    await connection.close().catch(() => {});
  }
}

/** True when the Temporal frontend of `settings` answers. */
export async function isTemporalReachable(settings: TemporalConnectionSettings): Promise<boolean> {
  return checkTemporal(settings).then(
    () => true,
    () => false,
  );
}

const KEYWORD = proto.temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD;

/**
 * Registers missing custom search attributes (idempotent). The dev server gets
 * them from its start flags; an existing cluster gets them here, if our
 * credentials allow it. Otherwise an operator must add them (docs/operations.md).
 * Temporal being unreachable is thrown, for start-up to wait it out (runtime/startup.ts).
 */
export async function ensureSearchAttributes(connection: Connection, namespace: string, logger: Logger): Promise<void> {
  try {
    const existing = await connection.operatorService.listSearchAttributes({ namespace });
    const missing = Object.keys(CUSTOM_SEARCH_ATTRIBUTES).filter((name) => !(name in (existing.customAttributes ?? {})));
    if (missing.length === 0) return;
    await connection.operatorService.addSearchAttributes({
      namespace,
      searchAttributes: Object.fromEntries(missing.map((name) => [name, KEYWORD])),
    });
    logger.info({ added: missing }, 'registered Temporal search attributes');
  } catch (err) {
    if (isDependencyOutage(err)) throw err;
    logger.warn({ err: (err as Error).message }, 'could not register Temporal search attributes; add RunStatus and TenantId (Keyword) by hand');
  }
}
