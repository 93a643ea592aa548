// The API's client (grpc-js) and the worker's native connection (Temporal Core) connect with the
// settings resolved from a temporal.toml profile or the TEMPORAL_* variables: against a fake TLS
// frontend that asks for a client certificate, the handshake carries the configured server name,
// trusts the configured CA, presents the client certificate (mTLS), and the API key arrives as
// `authorization: Bearer <key>`. The fake answers nothing useful: the attempt is what is checked.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ActivityDeps } from '../activities/index.ts';
import { type Config, loadConfig } from '../config/env.ts';
import { lazyTemporalClient } from '../runtime/temporal-client.ts';
import { startWorker } from '../runtime/worker.ts';
import { type FakeFrontend, type FrontendCall, startFakeFrontend } from './support/fake-temporal-frontend.ts';
import { codecOf } from './support/payload-codec.ts';
import { CLIENT_NAME, makeOtherCa, makeTestPki, mtlsProfileToml, SERVER_NAME, type TestPki } from './support/test-certificates.ts';

const API_KEY = `tk-${randomBytes(12).toString('hex')}`;

let scratch: string;
let pki: TestPki;
let otherCa: string;
let frontend: FakeFrontend;
let tomlFile: string;

beforeAll(async () => {
  scratch = mkdtempSync(path.join(os.tmpdir(), 'gws-temporal-tls-'));
  pki = makeTestPki(scratch);
  otherCa = makeOtherCa(scratch);
  frontend = await startFakeFrontend(pki);
  tomlFile = path.join(scratch, 'temporal.toml');
  writeFileSync(tomlFile, mtlsProfileToml(pki, frontend.address));
});

afterAll(async () => {
  await frontend?.close();
  rmSync(scratch, { recursive: true, force: true });
});

/** The configuration of `env` alone (no HOME: no temporal.toml of the machine's). */
function configOf(env: Record<string, string>): Config {
  return loadConfig({ ...env, PAYLOAD_KEY: randomBytes(32).toString('base64') });
}

/** The calls that arrived while `fn` ran. */
async function callsDuring(fn: () => Promise<unknown>): Promise<FrontendCall[]> {
  const from = frontend.calls.length;
  await fn().catch(() => {});
  return frontend.calls.slice(from);
}

/** The API's client describes a workflow (the fake refuses it). */
function apiAttempt(config: Config): Promise<FrontendCall[]> {
  const handle = lazyTemporalClient(config.temporal.connection, codecOf(config), 3_000);
  return callsDuring(() => handle.client.workflow.getHandle('tls-probe').describe()).finally(() => handle.close());
}

/** The worker connects (the fake refuses its GetSystemInfo, so start-up stops right after the handshake). */
async function workerAttempt(config: Config): Promise<FrontendCall[]> {
  frontend.refuseSystemInfo = true;
  try {
    return await callsDuring(() =>
      startWorker({
        temporal: config.temporal.connection,
        taskQueue: 'tls-probe',
        // Never reached: the connection fails first.
        activities: {} as ActivityDeps,
        payloadCodec: codecOf(config),
        logger: pino({ level: 'silent' }),
      }),
    );
  } finally {
    frontend.refuseSystemInfo = false;
  }
}

const apiKeyEnv = () => ({
  TEMPORAL_ADDRESS: frontend.address,
  TEMPORAL_NAMESPACE: 'key-ns',
  TEMPORAL_API_KEY: API_KEY,
  TEMPORAL_TLS_SERVER_NAME: SERVER_NAME,
  TEMPORAL_TLS_SERVER_CA_CERT_PATH: pki.caCert,
});

describe('a TLS connection to Temporal', () => {
  it('from a temporal.toml profile: the API client uses its server name, CA and client certificate (mTLS)', async () => {
    const calls = await apiAttempt(configOf({ TEMPORAL_CONFIG_FILE: tomlFile, TEMPORAL_PROFILE: 'mtls' }));
    expect(calls.length).toBeGreaterThan(0);
    for (const call of calls) {
      expect(call).toMatchObject({ transport: 'tls', sni: SERVER_NAME, clientCert: CLIENT_NAME });
      expect(call.headers['temporal-namespace']).toBe('mtls-ns');
      expect(call.headers.authorization).toBeUndefined();
    }
  });

  it('from a temporal.toml profile: the worker connects with the same', async () => {
    const calls = await workerAttempt(configOf({ TEMPORAL_CONFIG_FILE: tomlFile, TEMPORAL_PROFILE: 'mtls' }));
    expect(calls.map((c) => c.method)).toContain('GetSystemInfo');
    for (const call of calls) expect(call).toMatchObject({ transport: 'tls', sni: SERVER_NAME, clientCert: CLIENT_NAME });
  });

  it('trusts the configured CA only: with another, the handshake is refused', async () => {
    const refusedBefore = frontend.refusedHandshakes.length;
    const calls = await apiAttempt(configOf({ TEMPORAL_CONFIG_FILE: tomlFile, TEMPORAL_PROFILE: 'mtls', TEMPORAL_TLS_SERVER_CA_CERT_PATH: otherCa }));
    expect(calls).toEqual([]);
    expect(frontend.refusedHandshakes.length).toBeGreaterThan(refusedBefore);
  });
});

describe('an API-key connection to Temporal', () => {
  it('from the variables: the API client sends the key as a bearer token, over TLS', async () => {
    const calls = await apiAttempt(configOf(apiKeyEnv()));
    expect(calls.length).toBeGreaterThan(0);
    for (const call of calls) {
      expect(call).toMatchObject({ transport: 'tls', sni: SERVER_NAME, clientCert: null });
      expect(call.headers.authorization).toBe(`Bearer ${API_KEY}`);
      expect(call.headers['temporal-namespace']).toBe('key-ns');
    }
  });

  it('from the variables: the worker sends it too', async () => {
    const calls = await workerAttempt(configOf(apiKeyEnv()));
    expect(calls.map((c) => c.method)).toContain('GetSystemInfo');
    for (const call of calls) {
      expect(call).toMatchObject({ transport: 'tls', sni: SERVER_NAME });
      expect(call.headers.authorization).toBe(`Bearer ${API_KEY}`);
    }
  });
});
