// One process, four phases alternating: Koa /health (requestId + fast path) vs a raw handler, with an
// AsyncLocalStorage enabled or not. CPU µs per request from process.cpuUsage over each phase.
import http from 'node:http';
import { AsyncLocalStorage } from 'node:async_hooks';
import { createRequire } from 'node:module';
import Koa from 'koa';
const autocannon = createRequire(import.meta.url)('autocannon');
const body = Buffer.from(JSON.stringify({ status: 'ok', service: 'governed-workspace-service' }));
const app = new Koa();
app.use(function requestId(ctx, next) { ctx.set('x-request-id', 'req_' + Math.random().toString(36).slice(2, 14)); return next(); });
app.use(function health(ctx, next) { if (ctx.path !== '/health') return next(); ctx.set('content-type', 'application/json; charset=utf-8'); ctx.body = body; });
const koaHandler = app.callback();
let mode = 'koa';
const server = http.createServer((req, res) => {
  if (mode === 'raw' && req.url === '/health') {
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length, 'x-request-id': 'req_' + Math.random().toString(36).slice(2, 14) });
    res.end(body);
    return;
  }
  koaHandler(req, res);
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const url = `http://127.0.0.1:${server.address().port}/health`;
const als = new AsyncLocalStorage();
const { fork } = await import('node:child_process');
// load generator in a child process
const gen = fork(new URL('./.diag-gen.cjs', import.meta.url), [], { stdio: 'inherit' });
const measure = (seconds) => new Promise((resolve) => { gen.once('message', resolve); gen.send({ url, seconds }); });
const results = {};
for (let round = 0; round < 6; round++) {
  for (const [m, alsOn] of [['koa', false], ['raw', false], ['koa', true], ['raw', true]]) {
    mode = m;
    if (alsOn) als.enterWith({ on: true }); else als.disable();
    await measure(1);
    const c0 = process.cpuUsage();
    const r = await measure(4);
    const c = process.cpuUsage(c0);
    const us = (c.user + c.system) / r.requests;
    (results[`${m}${alsOn ? '+als' : ''}`] ??= []).push(Math.round(us * 10) / 10);
  }
}
gen.kill();
for (const [k, v] of Object.entries(results)) console.log(k, 'µs/req', v.join(' '), 'median', [...v].sort((a, b) => a - b)[3]);
server.close();
process.exit(0);
