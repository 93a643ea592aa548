const autocannon = require('autocannon');
process.on('message', async ({ url, seconds }) => {
  const r = await autocannon({ url, connections: 50, duration: seconds });
  process.send({ requests: r['2xx'], rps: r['2xx'] / r.duration });
});
