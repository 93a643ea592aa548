// The payload key of this test run: global setup makes one per run; the test
// API, workers, spawned service processes and every test client use it, as
// production's api and worker share PAYLOAD_KEY.
import { inject } from 'vitest';
import { loadConfig } from '../../config/env.ts';
import { type EncryptionCodec, serviceDataConverter } from '../../runtime/payload-codec.ts';
import { payloadCodecFor, resolvePayloadKeyring } from '../../runtime/payload-keys.ts';

export const TEST_PAYLOAD_KEY_ID = 'test-run';

/** The environment that gives a process (or loadConfig) this run's payload key. */
export function payloadEnv(): Record<string, string> {
  return { PAYLOAD_KEY: inject('payloadKey'), PAYLOAD_KEY_ID: TEST_PAYLOAD_KEY_ID };
}

/** The environment of a service process (bin/api.ts, bin/worker.ts) a test spawns: quiet, this run's payload key, then `extra`. */
export function serviceProcessEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  return { ...process.env, NODE_ENV: 'test', LOG_LEVEL: 'silent', ...payloadEnv(), ...extra };
}

/** The codec of a configuration: its PAYLOAD_KEY (the tests never fall back to a DATA_DIR key). */
export function codecOf(config: ReturnType<typeof loadConfig>): EncryptionCodec {
  return payloadCodecFor(resolvePayloadKeyring(config, { allowDataDirKey: false }));
}

export function testCodec(): EncryptionCodec {
  return codecOf(loadConfig(payloadEnv()));
}

/** For `new Client({ connection, dataConverter })` in tests that start workflows or read their results. */
export function testDataConverter() {
  return serviceDataConverter(testCodec());
}
