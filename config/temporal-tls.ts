// The TLS material a Temporal profile names (files, or PEM text inline), read and checked at
// start-up: a missing file, a certificate without its key or a key that is not the certificate's
// stops start-up naming the variable or the temporal.toml field, instead of failing each connection.
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createSecureContext } from 'node:tls';
import type { TLSConfig } from '@temporalio/client';
import type { ClientConfigTLS, ConfigDataSource } from '@temporalio/envconfig';

export type TlsItem = 'server_ca_cert' | 'client_cert' | 'client_key';

/** The name of where an item was set, for messages: its variable, or its field in the profile. */
export type TlsItemLabel = (item: TlsItem, kind: 'path' | 'data') => string;

const problem = {
  unreadable: (label: string, file: string, err: unknown) => `${label}: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
  unusable: (label: string, what: string, err: unknown) => `${label}: not a usable ${what} (${(err as Error).message.replace(/^error:[0-9A-F]+:/, '')})`,
  certWithoutKey: (label: string) =>
    `${label}: a client certificate needs its key (TEMPORAL_TLS_CLIENT_KEY_PATH or TEMPORAL_TLS_CLIENT_KEY_DATA, or client_key_path or client_key_data in the profile)`,
  keyWithoutCert: (label: string) =>
    `${label}: a client key needs its certificate (TEMPORAL_TLS_CLIENT_CERT_PATH or TEMPORAL_TLS_CLIENT_CERT_DATA, or client_cert_path or client_cert_data in the profile)`,
  mixedPair: (cert: string, key: string) =>
    `${cert} / ${key}: give the client certificate and its key alike, both as files (_PATH) or both as PEM text (_DATA), as the Temporal CLI requires`,
};

interface Material {
  bytes: Buffer;
  label: string;
  kind: 'path' | 'data';
}

/** An item's bytes; none when unset or set empty (the CLI's reading: an empty variable clears the profile's value). */
function material(source: ConfigDataSource | undefined, item: TlsItem, labelOf: TlsItemLabel, problems: string[]): Material | undefined {
  if (!source) return undefined;
  if ('path' in source) {
    if (!source.path) return undefined;
    const label = labelOf(item, 'path');
    try {
      return { bytes: readFileSync(source.path), label, kind: 'path' };
    } catch (err) {
      problems.push(problem.unreadable(label, source.path, err));
      return undefined;
    }
  }
  if (source.data.length === 0) return undefined;
  return { bytes: Buffer.from(source.data), label: labelOf(item, 'data'), kind: 'data' };
}

/** Whether OpenSSL (the API's gRPC client) accepts the material: grpc-js would otherwise throw as the connection is made. */
function checkUsable(ca: Material | undefined, cert: Material | undefined, key: Material | undefined, problems: string[]): void {
  if (ca) {
    try {
      new X509Certificate(ca.bytes);
    } catch (err) {
      problems.push(problem.unusable(ca.label, 'PEM CA certificate', err));
    }
  }
  if (cert && key) {
    try {
      createSecureContext({ cert: cert.bytes, key: key.bytes });
    } catch (err) {
      problems.push(problem.unusable(`${cert.label} / ${key.label}`, 'PEM certificate and private key pair', err));
    }
  }
}

/** The TLS settings of an enabled `tls` section; problems are added to `problems`. */
export function loadTlsConfig(tls: ClientConfigTLS, labelOf: TlsItemLabel, problems: string[]): TLSConfig {
  const found: string[] = [];
  const ca = material(tls.serverCACert, 'server_ca_cert', labelOf, found);
  const cert = material(tls.clientCert, 'client_cert', labelOf, found);
  const key = material(tls.clientKey, 'client_key', labelOf, found);
  // Checked only once everything was read: an unreadable certificate is the one problem, not also "a key without it".
  if (found.length === 0) {
    if (cert && !key) found.push(problem.certWithoutKey(cert.label));
    if (key && !cert) found.push(problem.keyWithoutCert(key.label));
    if (cert && key && cert.kind !== key.kind) found.push(problem.mixedPair(cert.label, key.label));
  }
  if (found.length === 0) checkUsable(ca, cert, key, found);
  problems.push(...found);
  return {
    ...(tls.serverName ? { serverNameOverride: tls.serverName } : {}),
    ...(ca ? { serverRootCACertificate: ca.bytes } : {}),
    ...(cert && key ? { clientCertPair: { crt: cert.bytes, key: key.bytes } } : {}),
  };
}
