// The Temporal connection settings config/env.ts resolves (config/temporal-profile.ts): the dev
// server when nothing names a cluster, a problem naming the variable or the temporal.toml field for
// each bad input, and the API key and TLS key kept out of logs, JSON and messages.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../config/config-error.ts';
import { loadConfig } from '../config/env.ts';
import { describeTemporalConnection } from '../config/temporal-connection-settings.ts';
import { withoutUserTemporalSettings } from '../config/temporal-env.ts';
import { makeTestPki, type TestPki } from './support/test-certificates.ts';

const SECRET_KEY = 'tk-secret-0123456789abcdef';

// At collection time: the cases' expected messages name these paths.
const scratch = mkdtempSync(path.join(os.tmpdir(), 'gws-temporal-settings-'));
const tomlFile = path.join(scratch, 'temporal.toml');
let pki: TestPki;

beforeAll(() => {
  pki = makeTestPki(scratch);
  writeFileSync(
    tomlFile,
    `[profile.default]
namespace = "file-ns"

[profile.bad-address]
address = "https://cloud.example:7233"

[profile.missing-cert]
address = "cloud.example:7233"
[profile.missing-cert.tls]
client_cert_path = "${path.join(scratch, 'absent.pem')}"
client_key_path = "${pki.clientKey}"
`,
  );
});

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The problems loadConfig reports for `env`, or [] when it accepts it. */
function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
    return [];
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return err.problems;
  }
}

describe('with no address from the variables or a profile', () => {
  it('uses the embedded dev server, namespace default, plaintext', () => {
    const home = path.join(scratch, 'empty-home');
    mkdirSync(home, { recursive: true });
    for (const env of [{}, { HOME: home }, { TEMPORAL_ADDRESS: '' }]) {
      const { temporal } = loadConfig(env);
      expect(temporal.external).toBe(false);
      expect(describeTemporalConnection(temporal.connection)).toEqual({
        address: '127.0.0.1:7233',
        namespace: 'default',
        tls: false,
        client_cert: false,
        api_key: false,
      });
    }
    expect(loadConfig({ TEMPORAL_DEV_PORT: '7299' }).temporal.connection.address).toBe('127.0.0.1:7299');
    // A profile without an address names only the namespace the dev server is started with.
    expect(loadConfig({ TEMPORAL_CONFIG_FILE: tomlFile }).temporal).toMatchObject({ external: false, connection: { namespace: 'file-ns' } });
  });

  it("uses the cluster of the default profile in the user's temporal.toml", () => {
    const home = path.join(scratch, 'home');
    mkdirSync(path.join(home, '.config', 'temporalio'), { recursive: true });
    writeFileSync(path.join(home, '.config', 'temporalio', 'temporal.toml'), '[profile.default]\naddress = "temporal.internal:7233"\n');
    const { temporal } = loadConfig({ HOME: home });
    expect(temporal).toMatchObject({ external: true, connection: { address: 'temporal.internal:7233' } });
    expect(temporal.connection.source).toBe(`profile "default" in ${path.join(home, '.config', 'temporalio', 'temporal.toml')}`);
  });

  it("leaves the user's settings out of what the tests, the bench and the drills start", () => {
    const home = path.join(scratch, 'developer-home');
    mkdirSync(path.join(home, '.config', 'temporalio'), { recursive: true });
    writeFileSync(path.join(home, '.config', 'temporalio', 'temporal.toml'), '[profile.default]\naddress = "cloud.example:7233"\napi_key = "from-toml"\n');
    const shell = { HOME: home, TEMPORAL_NAMESPACE: 'prod', TEMPORAL_API_KEY: SECRET_KEY, TEMPORAL_GRPC_META_X_TEAM: 'ops', TEMPORAL_CLI: '/opt/temporal' };
    expect(describeTemporalConnection(loadConfig(shell).temporal.connection)).toMatchObject({ address: 'cloud.example:7233', api_key: true });

    const child = withoutUserTemporalSettings(shell);
    expect(child).toMatchObject({ HOME: home, TEMPORAL_CLI: '/opt/temporal' });
    const { temporal } = loadConfig({ ...child, TEMPORAL_ADDRESS: '127.0.0.1:7299' });
    expect(describeTemporalConnection(temporal.connection)).toEqual({
      address: '127.0.0.1:7299',
      namespace: 'default',
      tls: false,
      client_cert: false,
      api_key: false,
    });
    expect(temporal.connection.metadata).toEqual({});
  });
});

describe('a bad Temporal setting stops start-up with a problem naming it', () => {
  const cases: [string, () => Record<string, string>, string][] = [
    ['a malformed TEMPORAL_ADDRESS', () => ({ TEMPORAL_ADDRESS: 'http://x' }), 'TEMPORAL_ADDRESS: must be host:port'],
    [
      "a malformed profile's address",
      () => ({ TEMPORAL_CONFIG_FILE: tomlFile, TEMPORAL_PROFILE: 'bad-address' }),
      `TEMPORAL_CONFIG_FILE ${tomlFile} [profile.bad-address] address: must be host:port`,
    ],
    [
      'a profile that is not in the file',
      () => ({ TEMPORAL_CONFIG_FILE: tomlFile, TEMPORAL_PROFILE: 'prod' }),
      `TEMPORAL_PROFILE: no profile "prod" in ${tomlFile}`,
    ],
    [
      'a profile with no file at all',
      () => ({ TEMPORAL_CONFIG_FILE: path.join(scratch, 'none.toml'), TEMPORAL_PROFILE: 'prod' }),
      'TEMPORAL_PROFILE: no profile "prod"',
    ],
    [
      'a certificate file that cannot be read (variable)',
      () => ({ TEMPORAL_ADDRESS: 'cloud.example:7233', TEMPORAL_TLS_SERVER_CA_CERT_PATH: path.join(scratch, 'absent.pem') }),
      `TEMPORAL_TLS_SERVER_CA_CERT_PATH: cannot read ${path.join(scratch, 'absent.pem')} (ENOENT)`,
    ],
    [
      'a certificate file that cannot be read (profile)',
      () => ({ TEMPORAL_CONFIG_FILE: tomlFile, TEMPORAL_PROFILE: 'missing-cert' }),
      `TEMPORAL_CONFIG_FILE ${tomlFile} [profile.missing-cert.tls] client_cert_path: cannot read`,
    ],
    [
      'a client certificate without its key',
      () => ({ TEMPORAL_ADDRESS: 'cloud.example:7233', TEMPORAL_TLS_CLIENT_CERT_PATH: pki.clientCert }),
      'TEMPORAL_TLS_CLIENT_CERT_PATH: a client certificate needs its key',
    ],
    [
      'a client key without its certificate',
      () => ({ TEMPORAL_ADDRESS: 'cloud.example:7233', TEMPORAL_TLS_CLIENT_KEY_DATA: readFileSync(pki.clientKey, 'utf8') }),
      'TEMPORAL_TLS_CLIENT_KEY_DATA: a client key needs its certificate',
    ],
    [
      'a client certificate as a file and its key as text (the CLI refuses it too)',
      () => ({
        TEMPORAL_ADDRESS: 'cloud.example:7233',
        TEMPORAL_TLS_CLIENT_CERT_PATH: pki.clientCert,
        TEMPORAL_TLS_CLIENT_KEY_DATA: readFileSync(pki.clientKey, 'utf8'),
      }),
      'TEMPORAL_TLS_CLIENT_CERT_PATH / TEMPORAL_TLS_CLIENT_KEY_DATA: give the client certificate and its key alike',
    ],
    [
      'a key that is not the certificate’s',
      () => ({ TEMPORAL_ADDRESS: 'cloud.example:7233', TEMPORAL_TLS_CLIENT_CERT_PATH: pki.serverCert, TEMPORAL_TLS_CLIENT_KEY_PATH: pki.clientKey }),
      'TEMPORAL_TLS_CLIENT_CERT_PATH / TEMPORAL_TLS_CLIENT_KEY_PATH: not a usable PEM certificate and private key pair',
    ],
    [
      'a CA that is not a PEM certificate',
      () => ({ TEMPORAL_ADDRESS: 'cloud.example:7233', TEMPORAL_TLS_SERVER_CA_CERT_DATA: 'not a certificate' }),
      'TEMPORAL_TLS_SERVER_CA_CERT_DATA: not a usable PEM CA certificate',
    ],
    [
      'a file and PEM text for the same item',
      () => ({ TEMPORAL_ADDRESS: 'cloud.example:7233', TEMPORAL_TLS_SERVER_CA_CERT_PATH: pki.caCert, TEMPORAL_TLS_SERVER_CA_CERT_DATA: 'x' }),
      'TEMPORAL_TLS_SERVER_CA_CERT_PATH / TEMPORAL_TLS_SERVER_CA_CERT_DATA: set one of them, not both',
    ],
    ['TEMPORAL_TLS not a boolean', () => ({ TEMPORAL_ADDRESS: 'cloud.example:7233', TEMPORAL_TLS: 'yes' }), 'TEMPORAL_TLS: must be true or false'],
    [
      'host verification turned off (the TypeScript SDK cannot)',
      () => ({ TEMPORAL_ADDRESS: 'cloud.example:7233', TEMPORAL_TLS_DISABLE_HOST_VERIFICATION: 'true' }),
      'TEMPORAL_TLS_DISABLE_HOST_VERIFICATION: not supported',
    ],
    ['an API key without an address', () => ({ TEMPORAL_API_KEY: SECRET_KEY }), 'TEMPORAL_API_KEY: set TEMPORAL_ADDRESS'],
    [
      'a temporal.toml that is not TOML',
      () => {
        const file = path.join(scratch, 'broken.toml');
        writeFileSync(file, '[profile.default\naddress = 1\n');
        return { TEMPORAL_CONFIG_FILE: file };
      },
      `TEMPORAL_CONFIG_FILE ${path.join(scratch, 'broken.toml')}: `,
    ],
  ];
  for (const [name, env, problem] of cases) {
    it(name, () => {
      const problems = problemsOf(env());
      expect(problems).toHaveLength(1);
      expect(problems[0]).toContain(problem);
    });
  }

  it('together with the other variables’ problems', () => {
    const names = problemsOf({ PORT: 'eighty', TEMPORAL_ADDRESS: 'http://x', TEMPORAL_TLS: 'maybe' }).map((p) => p.split(':')[0]);
    expect(names.sort()).toEqual(['PORT', 'TEMPORAL_ADDRESS', 'TEMPORAL_TLS']);
  });

  it('from `npm start`, in one message that names the variable and shows no key', () => {
    const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'silent', TEMPORAL_CONFIG_FILE: path.join(scratch, 'none.toml') };
    for (const name of Object.keys(env)) if (name.startsWith('TEMPORAL_') && name !== 'TEMPORAL_CONFIG_FILE' && name !== 'TEMPORAL_CLI') delete env[name];
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'bin/start.ts'], {
      env: {
        ...env,
        TEMPORAL_ADDRESS: 'cloud.example:7233',
        TEMPORAL_API_KEY: SECRET_KEY,
        TEMPORAL_TLS_CLIENT_CERT_PATH: path.join(scratch, 'absent.pem'),
        TEMPORAL_TLS_CLIENT_KEY_PATH: pki.clientKey,
      },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('Invalid configuration');
    expect(run.stderr).toContain(`TEMPORAL_TLS_CLIENT_CERT_PATH: cannot read ${path.join(scratch, 'absent.pem')}`);
    expect(run.stderr + run.stdout).not.toContain(SECRET_KEY);
  });
});

describe('the API key and the TLS key', () => {
  it('never show in the configuration as logged or serialised', () => {
    const config = loadConfig({
      TEMPORAL_ADDRESS: 'cloud.example:7233',
      TEMPORAL_API_KEY: SECRET_KEY,
      TEMPORAL_TLS_CLIENT_CERT_PATH: pki.clientCert,
      TEMPORAL_TLS_CLIENT_KEY_PATH: pki.clientKey,
    });
    const { connection } = config.temporal;
    expect(connection.apiKey).toBe(SECRET_KEY);
    expect(connection.tls?.clientCertPair?.key).toBeDefined();
    const keyPem = readFileSync(pki.clientKey, 'utf8');
    const keyBase64 = readFileSync(pki.clientKey, 'utf8').split('\n')[1]!;
    for (const shown of [JSON.stringify(config), JSON.stringify(describeTemporalConnection(connection)), String(Object.values(connection))]) {
      expect(shown).not.toContain(SECRET_KEY);
      expect(shown).not.toContain(keyBase64);
      expect(shown).not.toContain(keyPem);
    }
    expect(describeTemporalConnection(connection)).toEqual({
      address: 'cloud.example:7233',
      namespace: 'default',
      tls: true,
      client_cert: true,
      api_key: true,
    });
  });
});
