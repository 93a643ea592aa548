// Client-side Temporal plumbing: the API's lazy connection (so the API starts
// even while Temporal is down and /health can say so), the health probe, and
// registration of this service's search attributes on an existing cluster.
// Every client encrypts and decrypts payloads with the service's codec.
import { Client, Connection } from '@temporalio/client';
import type { PayloadCodec } from '@temporalio/common';
import proto from '@temporalio/proto';
import type { Logger } from 'pino';
import { CUSTOM_SEARCH_ATTRIBUTES } from '../workflows/search-attributes.ts';
import { serviceDataConverter } from './payload-codec.ts';

export interface TemporalHandle {
  connection: Connection;
  client: Client;
  /** The payload codec the client uses (the codec endpoint serves the same one). */
  codec: PayloadCodec;
  /** Reports reachability now: no retry interceptor, so no retry timer outlives a probe (or the process's shutdown). */
  probe: () => Promise<void>;
  close(): Promise<void>;
}

export function lazyTemporalClient(address: string, namespace: string, codec: PayloadCodec): TemporalHandle {
  const connection = Connection.lazy({ address, connectTimeout: '3 seconds' });
  const probeConnection = Connection.lazy({ address, connectTimeout: '2 seconds', interceptors: [] });
  return {
    connection,
    client: new Client({ connection, namespace, dataConverter: serviceDataConverter(codec) }),
    codec,
    probe: () => probeTemporal(probeConnection),
    async close() {
      await Promise.all([connection.close(), probeConnection.close()]);
    },
  };
}

/** Resolves when the frontend answers a health check within the deadline. */
export async function probeTemporal(connection: Connection, deadlineMs = 2_000): Promise<void> {
  await connection.withDeadline(Date.now() + deadlineMs, () =>
    connection.healthService.check({ service: 'temporal.api.workflowservice.v1.WorkflowService' }),
  );
}

/** True when a Temporal frontend answers at `address`. */
export async function isTemporalReachable(address: string): Promise<boolean> {
  let connection: Connection | undefined;
  try {
    connection = await Connection.connect({ address, connectTimeout: '2 seconds' });
    await probeTemporal(connection);
    return true;
  } catch {
    return false;
  } finally {
    await connection?.close().catch(() => {});
  }
}

const KEYWORD = proto.temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD;

/**
 * Registers missing custom search attributes (idempotent). The dev server gets
 * them from its start flags; an existing cluster gets them here, if our
 * credentials allow it. Otherwise an operator must add them (README).
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
    logger.warn({ err: (err as Error).message }, 'could not register Temporal search attributes; add RunStatus and TenantId (Keyword) by hand');
  }
}
