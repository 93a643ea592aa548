// The catalog a tenant's run offers its model: the operator's server tools available to the tenant
// (with input schemas the service can check), as the operator classified them now, and for a
// tool-calling run the protocol's built-ins beside them. A catalog larger than a run carries is
// never cut silently: the tools left out are named, and the run's receipt says so.
import type { Db } from '../db/client.ts';
import { PROTOCOL_TOOL_IDS, protocolCatalog } from '../domain/agent/protocol-tools.ts';
import { serverSchemaValidator } from '../domain/agent/tool-args.ts';
import { estimateTokens } from '../domain/tokens.ts';
import type { ServerToolCatalog } from '../domain/tools.ts';
import { tenantById } from './tenants.ts';
import type { ToolServers } from './tool-servers.ts';

/** Bounds on what a run carries of the server tools (it travels in the plan, through Temporal, and in each prompt). */
const MAX_SERVER_TOOLS = 64;
const MAX_SCHEMA_CHARS = 16_384;
const MAX_DESCRIPTION_CHARS = 1_000;

export interface OfferedServerTools {
  serverTools: ServerToolCatalog;
  /** Available tools the run does not carry: past MAX_SERVER_TOOLS by name, or with a schema too large or that cannot be checked. */
  notShown: string[];
}

/**
 * The server tools a tenant's run may use now: those available to the tenant whose input schema the
 * service can check, at most MAX_SERVER_TOOLS of them by name, each schema at most MAX_SCHEMA_CHARS.
 * Their effect class is the operator's; the server's hints play no part.
 */
export async function offeredServerTools(
  db: Db,
  toolServers: ToolServers,
  tenantId: string,
  maxTools = MAX_SERVER_TOOLS + PROTOCOL_TOOL_IDS.length,
): Promise<OfferedServerTools> {
  const tenant = await tenantById(db, tenantId);
  const available = toolServers
    .forTenant(tenant)
    .filter((t) => t.status === 'available')
    .sort((a, b) => (a.tool.name < b.tool.name ? -1 : 1));
  const usable = available.filter((t) => JSON.stringify(t.tool.inputSchema).length <= MAX_SCHEMA_CHARS && serverSchemaValidator(t.tool.inputSchema) !== null);
  // The built-ins are always offered; server tools fill what the request may carry beside them.
  const offered = usable.slice(0, Math.max(0, Math.min(MAX_SERVER_TOOLS, maxTools - PROTOCOL_TOOL_IDS.length)));
  const carried = new Set(offered.map((t) => t.tool.name));
  const serverTools: ServerToolCatalog = Object.fromEntries(
    offered.map(({ tool }) => [
      tool.name,
      {
        server: tool.server,
        tool: tool.tool,
        effect: tool.effect,
        description: tool.description.slice(0, MAX_DESCRIPTION_CHARS),
        parameters: tool.inputSchema,
        ...(tool.classified ? {} : { classified: false }),
        ...(Object.keys(tool.fixedArguments).length ? { fixed: tool.fixedArguments } : {}),
      },
    ]),
  );
  return { serverTools, notShown: available.map((t) => t.tool.name).filter((name) => !carried.has(name)) };
}

/** The tokens of the whole catalog a tool-calling run sends with every model call (its `tools`). */
export async function catalogTokens(db: Db, toolServers: ToolServers, tenantId: string, maxTools?: number): Promise<number> {
  const { serverTools } = await offeredServerTools(db, toolServers, tenantId, maxTools);
  return estimateTokens(JSON.stringify(protocolCatalog(serverTools)));
}
