// The typed client of the Governed Workspace Service: openapi-fetch over the types that
// openapi-typescript generates from GET /openapi.json (client/schema.ts, `npm run client:generate`).
//
//   const gws = createGwsClient({ baseUrl: 'http://127.0.0.1:8080', apiKey: process.env.GWS_API_KEY });
//   const { data, error } = await gws.GET('/v1/agent-runs/{run_id}', { params: { path: { run_id } } });
//
// Paths, parameters, bodies and JSON responses are checked at compile time against the contract.
// Streams (server-sent events, NDJSON) are read with `parseAs: 'stream'`, or with `gws.fetch` for a
// path the document does not list yet.
import createClient, { type Client } from 'openapi-fetch';
import type { components, paths } from './schema.ts';

export type { components, operations, paths } from './schema.ts';

type Schemas = components['schemas'];
export type AgentRun = Schemas['AgentRun'];
export type AgentRunList = Schemas['AgentRunList'];
export type RunStatus = Schemas['RunStatus'];
export type RunProgress = Schemas['RunProgress'];
export type RunEvent = Schemas['RunEvent'];
export type ApprovalRequest = Schemas['ApprovalRequest'];
export type ChatCompletionRequest = Schemas['ChatCompletionRequest'];
export type ChatCompletionChunk = Schemas['ChatCompletionChunk'];
export type ErrorObject = Schemas['ErrorObject'];

export interface GwsClientOptions {
  /** The API's base address, e.g. http://127.0.0.1:8080 (no /v1). */
  baseUrl: string;
  /** A core key (`gws_core_…`) or, for /v1/vault routes, a workspace key; omit for the public routes. */
  apiKey?: string;
  /** Sent as User-Agent. */
  userAgent?: string;
  /** A fetch to use instead of the global one (tests, proxies). */
  fetch?: typeof globalThis.fetch;
}

export type GwsClient = Client<paths, 'application/json'> & {
  /** The options the client was made with, base address normalised (no trailing slash). */
  readonly options: Readonly<GwsClientOptions>;
  /**
   * fetch with the client's base address and credentials, for what the document does not type as
   * JSON (a server-sent event stream): `gws.fetch('/v1/agent-runs/r/events', { headers: { accept: 'text/event-stream' } })`.
   */
  fetch(path: string, init?: RequestInit): Promise<Response>;
};

/** The headers every request of a client carries. */
export function gwsHeaders(options: Pick<GwsClientOptions, 'apiKey' | 'userAgent'>): Record<string, string> {
  const headers: Record<string, string> = {};
  if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;
  if (options.userAgent) headers['user-agent'] = options.userAgent;
  return headers;
}

export function createGwsClient(options: GwsClientOptions): GwsClient {
  const normalised = { ...options, baseUrl: options.baseUrl.replace(/\/+$/, '') };
  // Resolved per call, so a test can swap globalThis.fetch after creating the client.
  const doFetch: typeof globalThis.fetch = (input, init) => (normalised.fetch ?? globalThis.fetch)(input, init);
  const client = createClient<paths, 'application/json'>({
    baseUrl: normalised.baseUrl,
    headers: gwsHeaders(normalised),
    fetch: (request: Request) => doFetch(request),
  });
  return Object.assign(client, {
    options: Object.freeze(normalised),
    fetch(path: string, init: RequestInit = {}) {
      const headers = new Headers(init.headers);
      for (const [name, value] of Object.entries(gwsHeaders(normalised))) if (!headers.has(name)) headers.set(name, value);
      return doFetch(`${normalised.baseUrl}${path}`, { ...init, headers });
    },
  });
}
