// The tool catalogs the eval runs its cases on: both plug in the reference filesystem MCP server with
// the same two tools classified (read_text_file read, write_file external). `readme` hides the rest,
// as the README shows; `full` offers every tool, as an operator who does not hide gets them, so the
// other twelve are unclassified and count as external. Planning must choose right on both (issue 49).

export const CATALOGS = ['readme', 'full'] as const;
export type Catalog = (typeof CATALOGS)[number];

/** The TOOL_SERVERS_FILE contents for `catalog`, with the server given `dir` and run from `server` (its index.js). */
export function toolServersFile(catalog: Catalog, server: string, dir: string) {
  return {
    servers: [
      {
        id: 'files',
        transport: 'stdio',
        command: 'node',
        args: [server, dir],
        tools: { read_text_file: { effect: 'read' }, write_file: { effect: 'external' } },
        ...(catalog === 'readme' ? { unlisted_tools: 'hide' } : {}),
      },
    ],
  };
}

/** The catalogs of the scripted capable model's cases (scripts/eval/scripted/catalogs.json, `--provider scripted`). */
export const SCRIPTED_CATALOGS = ['readme', 'servers'] as const;
export type ScriptedCatalog = (typeof SCRIPTED_CATALOGS)[number];
