// A throwaway PKI for the TLS tests, made with openssl: a CA, a server certificate for
// SERVER_NAME signed by it, and a client certificate (CN CLIENT_NAME) for mTLS.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';

export const SERVER_NAME = 'temporal.test.internal';
export const CLIENT_NAME = 'gws-test-client';

export interface TestPki {
  caCert: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
}

const openssl = (args: string[]) => execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
const EC_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];

/** A CA's certificate and key in `dir` (named `<name>-ca.pem`, `<name>-ca.key`). */
function makeCa(dir: string, name: string): { cert: string; key: string } {
  const cert = path.join(dir, `${name}-ca.pem`);
  const key = path.join(dir, `${name}-ca.key`);
  openssl(['req', '-x509', ...EC_KEY, '-days', '2', '-subj', `/CN=${name} test CA`, '-keyout', key, '-out', cert]);
  return { cert, key };
}

/** A certificate for `cn` signed by `ca`, with `extensions` (an openssl extfile's lines). */
function makeLeaf(dir: string, name: string, cn: string, ca: { cert: string; key: string }, extensions: string): { cert: string; key: string } {
  const cert = path.join(dir, `${name}.pem`);
  const key = path.join(dir, `${name}.key`);
  const csr = path.join(dir, `${name}.csr`);
  const ext = path.join(dir, `${name}.ext`);
  writeFileSync(ext, extensions);
  openssl(['req', ...EC_KEY, '-subj', `/CN=${cn}`, '-keyout', key, '-out', csr]);
  openssl(['x509', '-req', '-in', csr, '-CA', ca.cert, '-CAkey', ca.key, '-CAcreateserial', '-days', '2', '-extfile', ext, '-out', cert]);
  return { cert, key };
}

/** Paths of a fresh PKI in `dir`. */
export function makeTestPki(dir: string): TestPki {
  const ca = makeCa(dir, 'test');
  const server = makeLeaf(dir, 'server', 'fake temporal', ca, `subjectAltName=DNS:${SERVER_NAME}\nextendedKeyUsage=serverAuth\n`);
  const client = makeLeaf(dir, 'client', CLIENT_NAME, ca, 'extendedKeyUsage=clientAuth\n');
  return { caCert: ca.cert, serverCert: server.cert, serverKey: server.key, clientCert: client.cert, clientKey: client.key };
}

/** A CA that signed nothing here: trusting it instead of the test CA must fail the handshake. */
export function makeOtherCa(dir: string): string {
  return makeCa(dir, 'other').cert;
}

/** A temporal.toml profile `[profile.mtls]` reaching `address` with mutual TLS from `pki`'s files. */
export function mtlsProfileToml(pki: TestPki, address: string): string {
  return `[profile.mtls]
address = "${address}"
namespace = "mtls-ns"
[profile.mtls.tls]
server_name = "${SERVER_NAME}"
server_ca_cert_path = "${pki.caCert}"
client_cert_path = "${pki.clientCert}"
client_key_path = "${pki.clientKey}"
`;
}
