// Where `gws` finds the API and its key: GWS_BASE_URL and GWS_API_KEY.
import { createGwsClient, type GwsClient } from '../../client/index.ts';
import { CliError } from './errors.ts';
import { EXIT } from './exit-codes.ts';

/** The API's own default listen address (HOST and PORT of the service). */
export const DEFAULT_BASE_URL = 'http://127.0.0.1:8080';

export interface CliConfig {
  baseUrl: string;
  apiKey: string;
}

export function loadCliConfig(env: NodeJS.ProcessEnv = process.env): CliConfig {
  const baseUrl = env.GWS_BASE_URL?.trim() || DEFAULT_BASE_URL;
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new CliError(`GWS_BASE_URL is not a URL: ${baseUrl}`, EXIT.usage);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new CliError(`GWS_BASE_URL must be http:// or https://, not ${url.protocol}`, EXIT.usage);
  const apiKey = env.GWS_API_KEY?.trim();
  if (!apiKey) throw new CliError('GWS_API_KEY is not set: export GWS_API_KEY=gws_core_… (a core key, `npm run keys -- create`)', EXIT.usage);
  return { baseUrl: baseUrl.replace(/\/+$/, ''), apiKey };
}

export function clientOf(config: CliConfig): GwsClient {
  return createGwsClient({ baseUrl: config.baseUrl, apiKey: config.apiKey, userAgent: 'gws-cli' });
}
