// The operator's tool servers (MCP): the JSON file named by TOOL_SERVERS_FILE, validated at
// start. Secrets in it are references to environment variables ({ "from_env": "NAME" }), never
// values, so the file can be committed and nothing secret reaches a response, log or payload.
// The effect class of each tool is the operator's decision: a tool the file does not classify is
// `external` (it needs a person's approval), whatever the server's own hints say.
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { ConfigError } from './config-error.ts';

const ENV_NAME = /^[A-Z_][A-Z0-9_]*$/;
/** Server ids and tool names form `<server>__<tool>`: a server id has no double underscore. */
const SERVER_ID = /^[a-z0-9](?:[a-z0-9-]|_(?!_)){0,31}$/;

const FromEnv = z.strictObject({ from_env: z.string().regex(ENV_NAME, 'must name an environment variable (A-Z, 0-9, _)') });
export type SecretRef = z.infer<typeof FromEnv>;

const ToolPolicy = z.strictObject({ effect: z.enum(['read', 'external']) });

const common = {
  id: z.string().regex(SERVER_ID, 'lower-case letters, digits, - and single _, at most 32'),
  /** Classified tools; any other tool of the server is external. */
  tools: z.record(z.string().min(1).max(128), ToolPolicy).default({}),
  /** The server's tools not listed in `tools`: offered to runs as external (`offer`, the default), or not offered at all (`hide`). */
  unlisted_tools: z.enum(['offer', 'hide']).optional(),
  /** Tenant names (or ids) that may use the server; "*" for every tenant. */
  tenants: z.array(z.string().min(1).max(128)).min(1).default(['*']),
  /**
   * Arguments the operator sets for every tool of the server whose input schema names them (a repository's path, an
   * account id): models never see them, and each call carries these values. Shown to approvers, so never a secret.
   */
  fixed_arguments: z.record(z.string().min(1).max(128), z.union([z.string().max(4096), z.number(), z.boolean()])).optional(),
  /** How long one call may take before it is cancelled; below the tool activity's 2-minute limit. */
  timeout_ms: z.number().int().min(100).max(110_000).optional(),
};

const StdioServer = z.strictObject({
  ...common,
  transport: z.literal('stdio'),
  command: z.string().min(1),
  args: z.array(z.string()).default([]),
  /** Environment of the server process: values are references, never literals. */
  env: z.record(z.string().regex(ENV_NAME, 'must be an environment variable name'), FromEnv).default({}),
  cwd: z.string().min(1).optional(),
});

const HttpServer = z.strictObject({
  ...common,
  transport: z.literal('streamable_http'),
  url: z.url({ protocol: /^https?$/ }),
  /** Request headers: values are references, never literals. */
  headers: z.record(z.string().min(1).max(128), FromEnv).default({}),
});

export const ToolServerSpec = z.discriminatedUnion('transport', [StdioServer, HttpServer]);
export type ToolServerSpec = z.infer<typeof ToolServerSpec>;

const ToolServersFile = z
  .strictObject({ servers: z.array(ToolServerSpec).max(64) })
  .refine((f) => new Set(f.servers.map((s) => s.id)).size === f.servers.length, { message: 'server ids must be unique', path: ['servers'] });

/** Parses a tool servers file's text; a ConfigError names the file and each bad field. */
export function parseToolServers(text: string, file: string): ToolServerSpec[] {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new ConfigError([`TOOL_SERVERS_FILE ${file}: not valid JSON`]);
  }
  const parsed = ToolServersFile.safeParse(json);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((i) => `TOOL_SERVERS_FILE ${file}: ${i.path.map(String).join('.') || '(root)'}: ${i.message}`));
  }
  return parsed.data.servers;
}

/** The servers of the file at `file`, or none when no file is configured. */
export function loadToolServers(file: string | undefined): ToolServerSpec[] {
  if (!file) return [];
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError([`TOOL_SERVERS_FILE ${file}: cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`]);
  }
  return parseToolServers(text, file);
}
