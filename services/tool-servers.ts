// The operator's tool servers (MCP), connected with the SDK's client: each server's tools, kept
// current on notifications/tools/list_changed, and calls to them. A server that cannot start or
// answer is retried with backoff and never stops the service or hides the others' tools; a stdio
// server that crashes is started again the same way, and close() stops every server it started.
// Secrets are resolved from the environment only when connecting, and never leave this module.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { type CallToolResult, CallToolResultSchema, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import type { SecretRef, ToolServerSpec } from '../config/tool-servers.ts';
import { type FixedArguments, withoutFixedProperties } from '../domain/agent/fixed-arguments.ts';
import { serverSchemaValidator } from '../domain/agent/tool-args.ts';
import { type EffectClass, serverToolName } from '../domain/tools.ts';

/** A tool of a configured server, as the service shows and uses it. */
export interface ServerTool {
  /** `<server>__<tool>`: the name runs and GET /v1/tools use. */
  name: string;
  server: string;
  tool: string;
  description: string;
  inputSchema: Record<string, unknown>;
  /** The operator's class; `external` when the operator did not classify the tool. */
  effect: EffectClass;
  classified: boolean;
  /** The server's own annotations (readOnlyHint…): shown, never trusted. */
  hints: Record<string, unknown> | null;
  /** The operator's fixed arguments that apply to it; `inputSchema` is shown without them. */
  fixedArguments: FixedArguments;
  /** Why the operator's configuration makes it unusable (a fixed value its schema refuses); it is then not offered. */
  misconfigured?: string;
}

export type ServerState = { state: 'connecting' } | { state: 'available' } | { state: 'down'; reason: string };

export interface ToolAvailability {
  tool: ServerTool;
  status: 'available' | 'not_configured';
  reason: string | null;
}

export interface CallOptions {
  signal?: AbortSignal;
  timeoutMs: number;
  onProgress?: () => void;
}

const RETRY_FIRST_MS = 1_000;
const RETRY_MAX_MS = 30_000;
const CLIENT_INFO = { name: 'governed-workspace-service', version: '1' };

/** A server's environment or headers with each reference resolved; the names of those not set. */
function resolve(refs: Record<string, SecretRef>, env: NodeJS.ProcessEnv): { values: Record<string, string>; missing: string[] } {
  const values: Record<string, string> = {};
  const missing: string[] = [];
  for (const [key, ref] of Object.entries(refs)) {
    const value = env[ref.from_env];
    if (value === undefined || value === '') missing.push(ref.from_env);
    else values[key] = value;
  }
  return { values, missing };
}

/** The fixed arguments a tool's own schema refuses (the operator's value of the wrong type or format), by name. */
function refusedFixedArguments(schema: Record<string, unknown>, fixed: FixedArguments): string[] {
  const properties = (schema.properties ?? {}) as Record<string, unknown>;
  return Object.keys(fixed).filter((name) => {
    const validate = serverSchemaValidator({ type: 'object', properties: { [name]: properties[name] } });
    return validate !== null && !validate({ [name]: fixed[name] });
  });
}

/** One configured server: its connection, its tools, and its reconnection with backoff. */
class ServerConnection {
  state: ServerState = { state: 'connecting' };
  tools: ServerTool[] = [];
  private client: Client | undefined;
  private retryMs = RETRY_FIRST_MS;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    readonly spec: ToolServerSpec,
    private readonly env: NodeJS.ProcessEnv,
    private readonly logger: Logger,
  ) {}

  start(): void {
    void this.connect();
  }

  private transport(): Transport | string {
    const spec = this.spec;
    if (spec.transport === 'stdio') {
      const { values, missing } = resolve(spec.env, this.env);
      if (missing.length) return `${missing.join(', ')} not set`;
      // stderr is the server's own log: it may carry what the tools handled, so it is not kept.
      return new StdioClientTransport({
        command: spec.command,
        args: spec.args,
        env: { ...getDefaultEnvironment(), ...values },
        cwd: spec.cwd,
        stderr: 'ignore',
      });
    }
    const { values, missing } = resolve(spec.headers, this.env);
    if (missing.length) return `${missing.join(', ')} not set`;
    return new StreamableHTTPClientTransport(new URL(spec.url), { requestInit: { headers: values } });
  }

  private async connect(): Promise<void> {
    this.timer = undefined;
    if (this.closed) return;
    const transport = this.transport();
    if (typeof transport === 'string') {
      // A missing variable does not appear by retrying: the operator sets it and restarts.
      this.state = { state: 'down', reason: `not started: ${transport}` };
      this.logger.warn({ server: this.spec.id, reason: this.state.reason }, 'tool server not started');
      return;
    }
    const client = new Client(CLIENT_INFO, { capabilities: {} });
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      void this.refresh(client).catch(() => {});
    });
    client.onclose = () => {
      if (this.client === client) this.lost('the connection closed');
    };
    try {
      await client.connect(transport);
      await this.refresh(client);
    } catch (err) {
      await client.close().catch(() => {});
      this.lost(`could not connect (${(err as Error).name})`);
      return;
    }
    if (this.closed) {
      await client.close().catch(() => {});
      return;
    }
    this.client = client;
    this.retryMs = RETRY_FIRST_MS;
    this.state = { state: 'available' };
    this.logger.info({ server: this.spec.id, tools: this.tools.length }, 'tool server connected');
  }

  private lost(reason: string): void {
    const client = this.client;
    this.client = undefined;
    if (client) void client.close().catch(() => {});
    if (this.closed) return;
    this.state = { state: 'down', reason };
    this.logger.warn({ server: this.spec.id, reason, retry_ms: this.retryMs }, 'tool server down; retrying');
    this.timer = setTimeout(() => void this.connect(), this.retryMs);
    this.timer.unref();
    this.retryMs = Math.min(this.retryMs * 2, RETRY_MAX_MS);
  }

  private async refresh(client: Client): Promise<void> {
    const listed: ServerTool[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor ? { cursor } : undefined);
      for (const t of page.tools) {
        const policy = this.spec.tools[t.name];
        const { schema, fixed } = withoutFixedProperties(t.inputSchema as Record<string, unknown>, this.spec.fixed_arguments ?? {});
        const refused = refusedFixedArguments(t.inputSchema as Record<string, unknown>, fixed);
        listed.push({
          name: serverToolName(this.spec.id, t.name),
          server: this.spec.id,
          tool: t.name,
          description: t.description ?? t.title ?? '',
          inputSchema: schema,
          effect: policy?.effect ?? 'external',
          classified: policy !== undefined,
          hints: (t.annotations as Record<string, unknown> | undefined) ?? null,
          fixedArguments: fixed,
          ...(refused.length ? { misconfigured: `its schema refuses the fixed_arguments ${refused.join(', ')} of the server ${this.spec.id}` } : {}),
        });
      }
      cursor = page.nextCursor;
    } while (cursor);
    this.tools = listed;
  }

  async call(tool: string, args: Record<string, unknown>, options: CallOptions): Promise<CallToolResult> {
    const client = this.client;
    if (!client || this.state.state !== 'available') throw new ToolServerUnavailable(this.spec.id, this.describeState());
    // The server's own limit, when the operator set one, else the service's.
    const timeoutMs = this.spec.timeout_ms ?? options.timeoutMs;
    return (await client.callTool({ name: tool, arguments: args }, CallToolResultSchema, {
      signal: options.signal,
      timeout: timeoutMs,
      maxTotalTimeout: timeoutMs,
      ...(options.onProgress ? { onprogress: options.onProgress, resetTimeoutOnProgress: false } : {}),
    })) as CallToolResult;
  }

  describeState(): string {
    return this.state.state === 'down' ? this.state.reason : this.state.state;
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    const client = this.client;
    this.client = undefined;
    await client?.close().catch(() => {});
  }
}

/** A call to a server that is not connected: nothing was sent. */
export class ToolServerUnavailable extends Error {
  constructor(
    readonly server: string,
    readonly reason: string,
  ) {
    super(`tool server ${server} is unavailable (${reason})`);
    this.name = 'ToolServerUnavailable';
  }
}

export interface ToolServers {
  /** Every tool of every server, with its status for the tenant (a tenant not enabled sees not_configured). */
  forTenant(tenant: { id: string; name: string }): ToolAvailability[];
  /** The tool called `name` (`<server>__<tool>`), when its server has listed it. */
  find(name: string): ServerTool | undefined;
  call(tool: ServerTool, args: Record<string, unknown>, options: CallOptions): Promise<CallToolResult>;
  /** The state of each server, by id. */
  states(): Record<string, ServerState>;
  close(): Promise<void>;
}

function enabledFor(spec: ToolServerSpec, tenant: { id: string; name: string }): boolean {
  return spec.tenants.some((t) => t === '*' || t === tenant.name || t === tenant.id);
}

/** The tools of a server that has not listed any (down, or still connecting): those the operator classified. */
function configuredTools(spec: ToolServerSpec): ServerTool[] {
  return Object.entries(spec.tools).map(([tool, policy]) => ({
    name: serverToolName(spec.id, tool),
    server: spec.id,
    tool,
    description: '',
    inputSchema: { type: 'object' },
    effect: policy.effect,
    classified: true,
    hints: null,
    fixedArguments: {},
  }));
}

/** Connects to every server in the background; nothing waits for a server to come up. */
export function connectToolServers(specs: ToolServerSpec[], options: { logger: Logger; env?: NodeJS.ProcessEnv }): ToolServers {
  const connections = new Map(specs.map((spec) => [spec.id, new ServerConnection(spec, options.env ?? process.env, options.logger)]));
  for (const c of connections.values()) c.start();
  return {
    forTenant(tenant) {
      return [...connections.values()].flatMap((c) => {
        const available = c.state.state === 'available';
        const tools = available ? c.tools : configuredTools(c.spec);
        const reason = !enabledFor(c.spec, tenant)
          ? `the server ${c.spec.id} is not enabled for this tenant`
          : available
            ? null
            : `the server ${c.spec.id} is ${c.describeState()}`;
        // A tool the operator did not list, on a server whose unlisted tools are hidden, is never offered.
        const hidden = `the operator offers only the listed tools of ${c.spec.id}`;
        return tools.map((tool) => {
          const why = reason ?? tool.misconfigured ?? (c.spec.unlisted_tools === 'hide' && !tool.classified ? hidden : null);
          // The fixed values are the enabled tenants' business (a customer's repository), never another's.
          const shown = enabledFor(c.spec, tenant) ? tool : { ...tool, fixedArguments: {} };
          return { tool: shown, status: why === null ? ('available' as const) : ('not_configured' as const), reason: why };
        });
      });
    },
    find(name) {
      for (const c of connections.values()) {
        const found = c.tools.find((t) => t.name === name);
        if (found) return found;
      }
      return undefined;
    },
    call(tool, args, callOptions) {
      const c = connections.get(tool.server);
      if (!c) return Promise.reject(new ToolServerUnavailable(tool.server, 'not configured'));
      return c.call(tool.tool, args, callOptions);
    },
    states() {
      return Object.fromEntries([...connections].map(([id, c]) => [id, c.state]));
    },
    async close() {
      await Promise.all([...connections.values()].map((c) => c.close()));
    },
  };
}
