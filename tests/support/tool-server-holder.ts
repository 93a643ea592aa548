// A process that holds a connection to one stdio tool server (server-everything) and says so:
// tests/tool-servers.test.ts kills it with SIGKILL to check its server does not outlive it.
//   node --import tsx tests/support/tool-server-holder.ts
import { createRequire } from 'node:module';
import { pino } from 'pino';
import { connectToolServers } from '../../services/tool-servers.ts';

const main = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-everything/dist/index.js');
const servers = connectToolServers(
  [{ id: 'everything', transport: 'stdio', command: process.execPath, args: [main, 'stdio'], env: {}, tools: {}, tenants: ['*'] }],
  { logger: pino({ level: 'silent' }) },
);
const timer = setInterval(() => {
  if (servers.states().everything?.state === 'available') {
    clearInterval(timer);
    process.stdout.write('ready\n');
  }
}, 50);
