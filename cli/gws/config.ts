// Where `gws` finds the API and its keys: GWS_BASE_URL, GWS_API_KEY (a core key, which submits and reads
// runs) and GWS_APPROVER_KEY (a person's approver key, the only kind that decides approvals).
import { createGwsClient, type GwsClient } from '../../client/index.ts';
import { CliError } from './errors.ts';
import { EXIT } from './exit-codes.ts';

/** The API's own default listen address (HOST and PORT of the service). */
export const DEFAULT_BASE_URL = 'http://127.0.0.1:8080';

export interface CliConfig {
  baseUrl: string;
  apiKey: string;
}

/** Which key a command needs: a core key to submit and read, an approver key to decide. */
export type KeyRole = 'core' | 'approver';

const KEY_ENV: Record<KeyRole, { name: string; hint: string }> = {
  core: { name: 'GWS_API_KEY', hint: 'export GWS_API_KEY=gws_core_… (a core key, `npm run keys -- create --kind core`)' },
  approver: {
    name: 'GWS_APPROVER_KEY',
    hint: 'export GWS_APPROVER_KEY=gws_apv_… (your approver key, `npm run keys -- create --kind approver --name "…"`); a core key never decides',
  },
};

export function loadCliConfig(env: NodeJS.ProcessEnv = process.env, role: KeyRole = 'core'): CliConfig {
  const baseUrl = env.GWS_BASE_URL?.trim() || DEFAULT_BASE_URL;
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new CliError(`GWS_BASE_URL is not a URL: ${baseUrl}`, EXIT.usage);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new CliError(`GWS_BASE_URL must be http:// or https://, not ${url.protocol}`, EXIT.usage);
  const { name, hint } = KEY_ENV[role];
  const apiKey = env[name]?.trim();
  if (!apiKey) throw new CliError(`${name} is not set: ${hint}`, EXIT.usage);
  return { baseUrl: baseUrl.replace(/\/+$/, ''), apiKey };
}

export function clientOf(config: CliConfig): GwsClient {
  return createGwsClient({ baseUrl: config.baseUrl, apiKey: config.apiKey, userAgent: 'gws-cli' });
}
