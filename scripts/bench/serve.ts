// `node --import tsx scripts/bench/serve.ts`: the bench's setup (Temporal dev server, a fresh
// seeded database, the API under test and the anchor servers) held open for manual
// experiments and profiling, until Ctrl-C. Prints the URLs and the seeded tenants as JSON.
import { randomBytes } from 'node:crypto';
import { createDatabase, startAnchorServer, startApi, startTemporal } from './processes.ts';
import { seed } from './seed.ts';

const [temporal, database] = await Promise.all([startTemporal(), createDatabase()]);
const s = await seed(database.url);
const payloadKey = randomBytes(32).toString('base64');
const [api, hello, onePg] = await Promise.all([
  startApi({ databaseUrl: database.url, temporalAddress: temporal.address, payloadKey, taskQueue: 'bench-no-worker' }),
  startAnchorServer('hello', database.url),
  startAnchorServer('pg', database.url),
]);
console.log(JSON.stringify({ api: api.url, hello: hello.url, pg: onePg.url, database: database.url, temporal: temporal.address, seed: s }, null, 2));
await new Promise<void>((resolve) => process.once('SIGINT', () => resolve()));
await Promise.all([api, hello, onePg].map((x) => x.stop()));
await database.drop();
await temporal.stop();
