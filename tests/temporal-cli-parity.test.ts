// The service resolves its Temporal connection as the Temporal CLI does (config/temporal-profile.ts):
// the same temporal.toml profile, the same TEMPORAL_* variables over it. `temporal config get` shows
// a profile's fields but not the variables applied over them; so, for those, both connect to a fake
// frontend (tests/support/fake-temporal-frontend.ts) and what arrived is compared: plaintext or TLS,
// the SNI name, the client certificate, the namespace header, the API key and the other headers.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../config/env.ts';
import { lazyTemporalClient } from '../runtime/temporal-client.ts';
import { resolveTemporalCli } from '../runtime/temporal-dev-server.ts';
import { type FakeFrontend, type FrontendCall, startFakeFrontend } from './support/fake-temporal-frontend.ts';
import { codecOf } from './support/payload-codec.ts';
import { CLIENT_NAME, makeTestPki, mtlsProfileToml, SERVER_NAME, type TestPki } from './support/test-certificates.ts';

const execFileAsync = promisify(execFile);

/** Headers the CLI and the SDK send of their own (or compared on their own, as namespace and authorization). */
const OWN_HEADERS =
  /^(:|content-type$|user-agent$|te$|grpc-|accept-encoding$|client-name$|client-version$|supported-server-versions$|caller-type$|temporal-namespace$|authorization$)/;

type Observation =
  | { reached: false }
  | { refusedHandshake: true; sni: string | null }
  | (Pick<FrontendCall, 'transport' | 'sni' | 'clientCert'> & { namespace: string | null; authorization: string | null; metadata: Record<string, string> });

let scratch: string;
let pki: TestPki;
let frontend: FakeFrontend;
let cli: string;
/** A HOME with no temporal.toml, and one with a temporal.toml in its default place. */
let emptyHome: string;
let homeWithConfig: string;
let file: string;
const missingFile = () => path.join(scratch, 'missing.toml');

function profiles(address: string): string {
  return `
[profile.default]
address = "127.0.0.1:1"
namespace = "file-ns"
[profile.default.grpc_meta]
team_name_x = "payments"
Custom_Header = "c"

${mtlsProfileToml(pki, address)}
[profile.cloud]
address = "${address}"
namespace = "cloud-ns"
api_key = "file-key"
[profile.cloud.tls]
server_name = "${SERVER_NAME}"
server_ca_cert_data = """
${readFileSync(pki.caCert, 'utf8').trim()}
"""
`;
}

beforeAll(async () => {
  scratch = mkdtempSync(path.join(os.tmpdir(), 'gws-cli-parity-'));
  pki = makeTestPki(scratch);
  frontend = await startFakeFrontend(pki);
  cli = await resolveTemporalCli(process.env.TEMPORAL_CLI);
  file = path.join(scratch, 'temporal.toml');
  writeFileSync(file, profiles(frontend.address));
  emptyHome = path.join(scratch, 'empty-home');
  mkdirSync(emptyHome);
  homeWithConfig = path.join(scratch, 'home');
  mkdirSync(path.join(homeWithConfig, '.config', 'temporalio'), { recursive: true });
  writeFileSync(
    path.join(homeWithConfig, '.config', 'temporalio', 'temporal.toml'),
    `[profile.default]\naddress = "${frontend.address}"\nnamespace = "home-ns"\n`,
  );
});

afterAll(async () => {
  await frontend?.close();
  rmSync(scratch, { recursive: true, force: true });
});

/** The SNI name sent, none for an IP address: the CLI (Go) sends none then, as RFC 6066 says; Node's TLS still sends the IP. */
function sniName(sni: string | null): string | null {
  return sni && isIP(sni) === 0 ? sni : null;
}

function observed(callsFrom: number, refusedFrom: number): Observation {
  const call = frontend.calls.slice(callsFrom).find((c) => c.method === 'DescribeWorkflowExecution');
  if (call) {
    const { transport, clientCert, headers } = call;
    const sni = sniName(call.sni);
    const metadata = Object.fromEntries(Object.entries(headers).filter(([name]) => !OWN_HEADERS.test(name)));
    return { transport, sni, clientCert, namespace: headers['temporal-namespace'] ?? null, authorization: headers.authorization ?? null, metadata };
  }
  const refused = frontend.refusedHandshakes.slice(refusedFrom)[0];
  return refused ? { refusedHandshake: true, sni: sniName(refused.sni) } : { reached: false };
}

/** What the frontend saw of `fn`'s attempt to describe a workflow. */
async function observe(fn: () => Promise<unknown>): Promise<Observation> {
  const callsFrom = frontend.calls.length;
  const refusedFrom = frontend.refusedHandshakes.length;
  await fn().catch(() => {});
  // A refused handshake is reported by the server a moment after the client gave up.
  await new Promise((r) => setTimeout(r, 100));
  return observed(callsFrom, refusedFrom);
}

/** The CLI, in an environment of `env` alone (HOME without a temporal.toml unless `env` says otherwise). */
function viaCli(env: Record<string, string>): Promise<Observation> {
  return observe(() =>
    execFileAsync(cli, ['workflow', 'describe', '--workflow-id', 'parity-probe', '--command-timeout', '3s'], {
      env: { PATH: process.env.PATH, HOME: emptyHome, ...env },
      timeout: 20_000,
    }),
  );
}

/** The API's client, configured by loadConfig from the same environment. */
function viaService(env: Record<string, string>): Promise<Observation> {
  const config = loadConfig({ HOME: emptyHome, ...env, PAYLOAD_KEY: randomBytes(32).toString('base64') });
  const handle = lazyTemporalClient(config.temporal.connection, codecOf(config), 3_000);
  return observe(() => handle.client.workflow.getHandle('parity-probe').describe()).finally(() => handle.close());
}

describe('the Temporal connection resolves as the Temporal CLI resolves it', () => {
  const cases: { name: string; env: () => Record<string, string>; expected: Partial<Record<string, unknown>> }[] = [
    {
      name: "a profile's namespace and headers, its address replaced by TEMPORAL_ADDRESS, headers added and removed by TEMPORAL_GRPC_META_*",
      env: () => ({
        TEMPORAL_CONFIG_FILE: file,
        TEMPORAL_ADDRESS: frontend.address,
        TEMPORAL_GRPC_META_X_REQUEST_SOURCE: 'gws',
        TEMPORAL_GRPC_META_CUSTOM_HEADER: '',
      }),
      expected: { transport: 'plain', namespace: 'file-ns', metadata: { 'team-name-x': 'payments', 'x-request-source': 'gws' } },
    },
    {
      name: 'mTLS from a profile (TEMPORAL_PROFILE): server name, CA file, client certificate and key',
      env: () => ({ TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'mtls' }),
      expected: { transport: 'tls', sni: SERVER_NAME, clientCert: CLIENT_NAME, namespace: 'mtls-ns', authorization: null },
    },
    {
      name: "TEMPORAL_API_KEY and TEMPORAL_NAMESPACE over a profile's, with its inline CA",
      env: () => ({ TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'cloud', TEMPORAL_API_KEY: 'env-key', TEMPORAL_NAMESPACE: 'env-ns' }),
      expected: { transport: 'tls', sni: SERVER_NAME, clientCert: null, namespace: 'env-ns', authorization: 'Bearer env-key' },
    },
    {
      name: "TEMPORAL_TLS=FALSE turns a profile's TLS off, its API key still sent",
      env: () => ({ TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'cloud', TEMPORAL_TLS: 'FALSE' }),
      expected: { transport: 'plain', namespace: 'cloud-ns', authorization: 'Bearer file-key' },
    },
    {
      name: 'TLS from the variables alone (TEMPORAL_TLS=TRUE, the CA as PEM text, the client pair as files), no config file',
      env: () => ({
        TEMPORAL_CONFIG_FILE: missingFile(),
        TEMPORAL_ADDRESS: frontend.address,
        TEMPORAL_TLS: 'TRUE',
        TEMPORAL_TLS_SERVER_NAME: SERVER_NAME,
        TEMPORAL_TLS_SERVER_CA_CERT_DATA: readFileSync(pki.caCert, 'utf8'),
        TEMPORAL_TLS_CLIENT_CERT_PATH: pki.clientCert,
        TEMPORAL_TLS_CLIENT_KEY_PATH: pki.clientKey,
      }),
      expected: { transport: 'tls', sni: SERVER_NAME, clientCert: CLIENT_NAME, namespace: 'default' },
    },
    {
      name: "an API key alone turns TLS on, trusting the system's roots (so this handshake is refused)",
      env: () => ({ TEMPORAL_CONFIG_FILE: missingFile(), TEMPORAL_ADDRESS: frontend.address, TEMPORAL_API_KEY: 'k' }),
      expected: { refusedHandshake: true, sni: null },
    },
    {
      name: 'an empty TEMPORAL_PROFILE is the default profile; an empty TEMPORAL_CONFIG_FILE the default file under HOME',
      env: () => ({ HOME: homeWithConfig, TEMPORAL_CONFIG_FILE: '', TEMPORAL_PROFILE: '' }),
      expected: { transport: 'plain', namespace: 'home-ns' },
    },
    {
      name: "an empty TEMPORAL_API_KEY clears the profile's key; its TLS stays",
      env: () => ({ TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'cloud', TEMPORAL_API_KEY: '' }),
      expected: { transport: 'tls', sni: SERVER_NAME, authorization: null },
    },
    {
      name: "an empty TEMPORAL_TLS_SERVER_NAME clears the profile's (the IP address is then checked, and refused)",
      env: () => ({ TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'cloud', TEMPORAL_TLS_SERVER_NAME: '' }),
      expected: { refusedHandshake: true, sni: null },
    },
  ];

  for (const c of cases) {
    it(c.name, async () => {
      const byCli = await viaCli(c.env());
      expect(byCli, 'what the CLI sent').toMatchObject(c.expected);
      expect(await viaService(c.env()), 'what the service sent, against the CLI').toEqual(byCli);
    });
  }

  it('reads the same profile fields as `temporal config get`', async () => {
    for (const profile of ['default', 'mtls', 'cloud']) {
      const { stdout } = await execFileAsync(cli, ['config', 'get', '--profile', profile, '-o', 'json'], {
        env: { PATH: process.env.PATH, HOME: emptyHome, TEMPORAL_CONFIG_FILE: file },
      });
      const shown = JSON.parse(stdout) as {
        address: string;
        namespace?: string;
        api_key?: string;
        grpc_meta?: Record<string, string>;
        tls?: { server_name?: string };
      };
      const { connection } = loadConfig({ HOME: emptyHome, TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: profile }).temporal;
      expect({ address: connection.address, namespace: connection.namespace, metadata: connection.metadata }, profile).toEqual({
        address: shown.address,
        namespace: shown.namespace ?? 'default',
        metadata: shown.grpc_meta ?? {},
      });
      expect(connection.apiKey, profile).toBe(shown.api_key);
      expect(connection.tls?.serverNameOverride, profile).toBe(shown.tls?.server_name);
      expect(connection.tls !== undefined, profile).toBe(shown.tls !== undefined || shown.api_key !== undefined);
    }
  });
});
