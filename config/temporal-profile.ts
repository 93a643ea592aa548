// The Temporal connection as the Temporal CLI resolves it, through @temporalio/envconfig: a profile
// of a temporal.toml (TEMPORAL_CONFIG_FILE, else the user's config dir; TEMPORAL_PROFILE, else
// `default`), then the TEMPORAL_* variables over it (config/temporal-env.ts). Read once, by
// config/env.ts; problems come back as values naming the variable or the file's field.
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TLSConfig } from '@temporalio/client';
import { type ClientConfigProfile, loadClientConfig, loadClientConfigProfile } from '@temporalio/envconfig';
import { envForEnvconfig, grpcMetadata } from './temporal-env.ts';
import { type ResolvedTemporalSettings, temporalSettings } from './temporal-connection-settings.ts';
import { loadTlsConfig, type TlsItem } from './temporal-tls.ts';

export type TemporalResolution = { ok: true; settings: ResolvedTemporalSettings } | { ok: false; problems: string[] };

const HOST_PORT = /^[^\s:/]+:\d{1,5}$/;
const TLS_VARIABLES: Record<TlsItem, string> = {
  server_ca_cert: 'TEMPORAL_TLS_SERVER_CA_CERT',
  client_cert: 'TEMPORAL_TLS_CLIENT_CERT',
  client_key: 'TEMPORAL_TLS_CLIENT_KEY',
};

const problem = {
  unreadableFile: (file: ConfigFile, err: unknown) => `${file.label}: cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
  // The message's first line only: the next ones quote the file, which may hold an API key.
  invalidFile: (file: ConfigFile | undefined, err: unknown) => {
    if (err instanceof TypeError) return `${file?.label}: has no [profile.<name>] table`;
    const line = (err as { line?: unknown }).line;
    // Without a file, only the variables can be at fault (a _PATH and a _DATA both set).
    return `${file?.label ?? 'TEMPORAL_TLS_*'}: ${(err as Error).message.split('\n')[0]}${typeof line === 'number' ? ` (line ${line})` : ''}`;
  },
  noProfile: (name: string, file: ConfigFile | undefined) =>
    `TEMPORAL_PROFILE: no profile "${name}" in ${file ? file.path : 'a temporal.toml (none found; set TEMPORAL_CONFIG_FILE)'}`,
  badAddress: (source: string) => `${source}: must be host:port, for example 127.0.0.1:7233`,
  needsAddress: (what: string) =>
    `${what}: set TEMPORAL_ADDRESS (or the profile's address) too; without an address npm start runs the embedded dev server, which takes no TLS or API key`,
};

interface ConfigFile {
  path: string;
  /** How messages name it. */
  label: string;
  text?: string;
}

/** The user's config dir as the CLI (Go's os.UserConfigDir) and @temporalio/envconfig find it. */
function userConfigDir(env: NodeJS.ProcessEnv): string | undefined {
  if (os.platform() === 'win32') return env.APPDATA || undefined;
  if (os.platform() === 'darwin') return env.HOME ? path.join(env.HOME, 'Library', 'Application Support') : undefined;
  if (env.XDG_CONFIG_HOME) return path.isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : undefined;
  return env.HOME ? path.join(env.HOME, '.config') : undefined;
}

/** The temporal.toml to read, with its text; none when there is no such file (as for the CLI, not an error). */
function readConfigFile(env: NodeJS.ProcessEnv, problems: string[]): ConfigFile | undefined {
  const dir = userConfigDir(env);
  const explicit = env.TEMPORAL_CONFIG_FILE || undefined;
  const file = explicit ?? (dir ? path.join(dir, 'temporalio', 'temporal.toml') : undefined);
  if (!file) return undefined;
  const found: ConfigFile = { path: file, label: explicit ? `TEMPORAL_CONFIG_FILE ${file}` : file };
  try {
    found.text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') problems.push(problem.unreadableFile(found, err));
    return undefined;
  }
  return found;
}

/** Only comments and blank lines: the SDK fails on such a file, the CLI reads it as no profiles. */
function isBlank(text: string): boolean {
  return text.split('\n').every((line) => /^\s*(#.*)?$/.test(line));
}

/** The profile with the variables applied, or undefined after adding a problem. */
function loadProfile(env: NodeJS.ProcessEnv, file: ConfigFile | undefined, name: string, problems: string[]): ClientConfigProfile | undefined {
  const { vars, problems: envProblems } = envForEnvconfig(env);
  problems.push(...envProblems);
  const text = file?.text !== undefined && !isBlank(file.text) ? file.text : undefined;
  try {
    const profiles = text === undefined ? {} : loadClientConfig({ configSource: { data: text } }).profiles;
    if (env.TEMPORAL_PROFILE && !(name in profiles)) {
      problems.push(problem.noProfile(name, file));
      return undefined;
    }
    return loadClientConfigProfile({
      ...(text === undefined ? { disableFile: true } : { configSource: { data: text } }),
      ...(name in profiles ? { profile: name } : {}),
      overrideEnvVars: vars,
    });
  } catch (err) {
    problems.push(problem.invalidFile(file, err));
    return undefined;
  }
}

/**
 * TLS as the SDK and the CLI decide it: on with a `tls` table (or a TEMPORAL_TLS_* variable) that is
 * not disabled, else with an API key alone (the system's roots); undefined means plaintext.
 */
function tlsOf(
  profile: ClientConfigProfile,
  apiKey: string | undefined,
  where: { env: NodeJS.ProcessEnv; file?: ConfigFile; name: string },
  problems: string[],
): TLSConfig | undefined {
  if (!profile.tls) return apiKey ? {} : undefined;
  if (profile.tls.disabled) return undefined;
  const labelOf = (item: TlsItem, kind: 'path' | 'data') => {
    const variable = TLS_VARIABLES[item];
    const fromEnv = where.env[`${variable}_PATH`] !== undefined || where.env[`${variable}_DATA`] !== undefined;
    return fromEnv ? `${variable}_${kind.toUpperCase()}` : `${where.file?.label} [profile.${where.name}.tls] ${item}_${kind}`;
  };
  return loadTlsConfig(profile.tls, labelOf, problems);
}

/** Resolves the connection from `env` (the process's environment, HOME included) and the temporal.toml it points to. */
export function resolveTemporalConnection(env: NodeJS.ProcessEnv): TemporalResolution {
  const problems: string[] = [];
  const file = readConfigFile(env, problems);
  const name = env.TEMPORAL_PROFILE || 'default';
  const profile = loadProfile(env, file, name, problems);
  if (!profile) return { ok: false, problems };

  const inProfile = (field: string) => `${file?.label} [profile.${name}] ${field}`;
  const addressSource = env.TEMPORAL_ADDRESS !== undefined ? 'TEMPORAL_ADDRESS' : inProfile('address');
  // Empty values (TEMPORAL_ADDRESS= over a profile's, say) clear the setting, as for the CLI.
  const address = profile.address || undefined;
  if (address && !HOST_PORT.test(address)) problems.push(problem.badAddress(addressSource));
  const apiKey = profile.apiKey || undefined;
  const tls = tlsOf(profile, apiKey, { env, ...(file ? { file } : {}), name }, problems);
  if (!address && apiKey) problems.push(problem.needsAddress(env.TEMPORAL_API_KEY ? 'TEMPORAL_API_KEY' : inProfile('api_key')));
  else if (!address && tls) problems.push(problem.needsAddress("TLS (TEMPORAL_TLS_* or the profile's tls)"));
  if (problems.length > 0) return { ok: false, problems };

  const settings = temporalSettings(
    {
      ...(address ? { address } : {}),
      namespace: profile.namespace || 'default',
      metadata: grpcMetadata(profile.grpcMeta, env),
      source: addressSource === 'TEMPORAL_ADDRESS' ? addressSource : `profile "${name}" in ${file?.path}`,
    },
    { tls, apiKey },
  );
  return { ok: true, settings };
}
