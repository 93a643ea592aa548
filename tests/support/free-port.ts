import { readFileSync } from 'node:fs';
import net from 'node:net';

/**
 * The lowest port the kernel hands out for outgoing connections (and for bind to port 0). A port below it
 * is never taken by one of the many connections the tests open between freePort() and the server's bind,
 * seconds later; a port from bind(0) could be (seen in CI: `npm start` never got its dev server's port).
 */
function ephemeralFloor(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 12_000 ? low : 32_768;
  } catch {
    return 32_768;
  }
}

const FLOOR = ephemeralFloor();
const FROM = 10_000;

function tryListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** A TCP port that was free a moment ago on 127.0.0.1, below the ephemeral range (random, so parallel callers rarely meet). */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = FROM + Math.floor(Math.random() * (FLOOR - FROM));
    if (await tryListen(port)) return port;
  }
  throw new Error(`no free port found between ${FROM} and ${FLOOR}`);
}
