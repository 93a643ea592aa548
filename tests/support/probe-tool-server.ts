// A small stdio MCP server, on the SDK's own McpServer, for what the reference servers cannot show:
// `add-tool` registers a new tool after the client connected (the SDK then sends
// notifications/tools/list_changed), and `wait` runs until it is cancelled, and then writes
// `cancelled` into the directory it was given, so a test can see that MCP cancellation arrived.
//   node --import tsx tests/support/probe-tool-server.ts <dir>
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const dir = process.argv[2] ?? '.';
const server = new McpServer({ name: 'probe', version: '1' });

server.registerTool('add-tool', { description: 'Registers the tool `added`.', inputSchema: {} }, async () => {
  server.registerTool('added', { description: 'Registered after start.', inputSchema: {} }, async () => ({ content: [{ type: 'text', text: 'added' }] }));
  return { content: [{ type: 'text', text: 'ok' }] };
});

server.registerTool('wait', { description: 'Waits until cancelled.', inputSchema: { seconds: z.number().max(300) } }, (args, extra) => {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve({ content: [{ type: 'text', text: 'waited' }] }), args.seconds * 1000);
    extra.signal.addEventListener('abort', () => {
      clearTimeout(timer);
      writeFileSync(path.join(dir, 'cancelled'), String(extra.requestId));
      resolve({ content: [{ type: 'text', text: 'cancelled' }], isError: true });
    });
  });
});

await server.connect(new StdioServerTransport());
