// The TEMPORAL_* connection variables, read as the Temporal CLI reads them. @temporalio/envconfig
// applies them over a temporal.toml profile; its reading differs from the CLI's (1.9) in a few
// places, which are evened out here before it sees them (tests/temporal-cli-parity.test.ts compares):
// - TEMPORAL_TLS: the CLI takes true/1 and false/0 in any case and ignores an empty value; the SDK
//   takes only `1` and `true`, and reads anything else (`TRUE` included) as "TLS off".
// - TEMPORAL_CONFIG_FILE and TEMPORAL_PROFILE set but empty: the CLI uses the default file and
//   profile; the SDK reads no file, or no profile.
// - TEMPORAL_GRPC_META_<NAME>: the CLI turns every `_` of NAME into `-`, the SDK only the first;
//   and an empty value, which removes the header, misses a temporal.toml header in the SDK.
//   They are applied after the profile is read instead (grpcMetadata).
// Every other variable, an empty value included, means what it means to the CLI: TEMPORAL_ADDRESS=
// clears the profile's address, TEMPORAL_TLS_SERVER_NAME= turns TLS on with no server name.

/** The variables read, besides TEMPORAL_GRPC_META_<NAME> (docs/configuration.md lists them). */
export const TEMPORAL_CONNECTION_VARIABLES = [
  'TEMPORAL_CONFIG_FILE',
  'TEMPORAL_PROFILE',
  'TEMPORAL_ADDRESS',
  'TEMPORAL_NAMESPACE',
  'TEMPORAL_API_KEY',
  'TEMPORAL_TLS',
  'TEMPORAL_TLS_SERVER_NAME',
  'TEMPORAL_TLS_SERVER_CA_CERT_PATH',
  'TEMPORAL_TLS_SERVER_CA_CERT_DATA',
  'TEMPORAL_TLS_CLIENT_CERT_PATH',
  'TEMPORAL_TLS_CLIENT_CERT_DATA',
  'TEMPORAL_TLS_CLIENT_KEY_PATH',
  'TEMPORAL_TLS_CLIENT_KEY_DATA',
  'TEMPORAL_TLS_DISABLE_HOST_VERIFICATION',
] as const;

const GRPC_META_PREFIX = 'TEMPORAL_GRPC_META_';

/** `true` for true/1, `false` for false/0 (any case), undefined for anything else. */
function cliBool(value: string): boolean | undefined {
  const v = value.toLowerCase();
  if (v === 'true' || v === '1') return true;
  if (v === 'false' || v === '0') return false;
  return undefined;
}

/**
 * The variables for @temporalio/envconfig (`overrideEnvVars`), and the problems found reading them.
 * A variable with a problem is still passed on in some valid form, so that the rest is checked too.
 */
export function envForEnvconfig(env: NodeJS.ProcessEnv): { vars: Record<string, string>; problems: string[] } {
  const vars: Record<string, string> = {};
  const problems: string[] = [];
  for (const name of TEMPORAL_CONNECTION_VARIABLES) {
    const value = env[name];
    if (value !== undefined) vars[name] = value;
  }
  for (const name of ['TEMPORAL_CONFIG_FILE', 'TEMPORAL_PROFILE', 'TEMPORAL_TLS', 'TEMPORAL_TLS_DISABLE_HOST_VERIFICATION'] as const) {
    if (vars[name] === '') delete vars[name];
  }
  if (vars.TEMPORAL_TLS !== undefined) {
    const on = cliBool(vars.TEMPORAL_TLS);
    if (on === undefined) problems.push('TEMPORAL_TLS: must be true or false (or 1 or 0)');
    vars.TEMPORAL_TLS = String(on ?? false);
  }
  if (vars.TEMPORAL_TLS_DISABLE_HOST_VERIFICATION !== undefined) {
    const skip = cliBool(vars.TEMPORAL_TLS_DISABLE_HOST_VERIFICATION);
    // The TypeScript SDK cannot skip the check: connecting as if it did would only fail later, less clearly.
    if (skip === true) {
      problems.push(
        'TEMPORAL_TLS_DISABLE_HOST_VERIFICATION: not supported by the Temporal TypeScript SDK; set TEMPORAL_TLS_SERVER_NAME to a name the server certificate holds',
      );
    } else if (skip === undefined) problems.push('TEMPORAL_TLS_DISABLE_HOST_VERIFICATION: must be true or false (or 1 or 0)');
    vars.TEMPORAL_TLS_DISABLE_HOST_VERIFICATION = 'false';
  }
  for (const item of ['TEMPORAL_TLS_SERVER_CA_CERT', 'TEMPORAL_TLS_CLIENT_CERT', 'TEMPORAL_TLS_CLIENT_KEY']) {
    if (vars[`${item}_PATH`] === undefined || vars[`${item}_DATA`] === undefined) continue;
    problems.push(`${item}_PATH / ${item}_DATA: set one of them, not both`);
    delete vars[`${item}_DATA`];
  }
  return { vars, problems };
}

/** A gRPC header's name as the CLI writes it: lower case, every `_` a `-`. */
export function grpcHeaderName(name: string): string {
  return name.toLowerCase().replaceAll('_', '-');
}

/** A profile's gRPC metadata with TEMPORAL_GRPC_META_<NAME> applied: a value sets the header, an empty one removes it. */
export function grpcMetadata(fromProfile: Record<string, string> | undefined, env: NodeJS.ProcessEnv): Record<string, string> {
  const metadata: Record<string, string> = {};
  for (const [name, value] of Object.entries(fromProfile ?? {})) metadata[grpcHeaderName(name)] = value;
  for (const [variable, value] of Object.entries(env)) {
    if (!variable.startsWith(GRPC_META_PREFIX) || value === undefined) continue;
    const name = grpcHeaderName(variable.slice(GRPC_META_PREFIX.length));
    if (value === '') delete metadata[name];
    else metadata[name] = value;
  }
  return metadata;
}

/** A temporal.toml path that never exists: a child given it reads no profile. */
const NO_CONFIG_FILE = '/nonexistent/gws-no-temporal.toml';

/**
 * `env` without the user's Temporal settings: no TEMPORAL_* connection variable and no temporal.toml.
 * For the processes the tests, the bench and the drills start, which must reach the dev server they
 * name, not the cluster a developer's shell or ~/.config/temporalio/temporal.toml points at.
 */
export function withoutUserTemporalSettings(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const connection = new Set<string>(TEMPORAL_CONNECTION_VARIABLES);
  const kept = Object.entries(env).filter(([name]) => !connection.has(name) && !name.startsWith(GRPC_META_PREFIX));
  return { ...Object.fromEntries(kept), TEMPORAL_CONFIG_FILE: NO_CONFIG_FILE };
}
