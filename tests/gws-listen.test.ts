// `gws listen`: the real CLI (bin/gws.mjs) spawned on a free port, sent deliveries signed with
// standardwebhooks (with the right secret, a wrong signature, none), checked by what it prints and
// answers; the secret from --secret or GWS_WEBHOOK_SECRET, --json lines, Ctrl+C and a port in use.
// Needs no API, database or Temporal server (it is in the unit project).
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from './support/free-port.ts';
import { until } from './support/until.ts';

const GWS = fileURLToPath(new URL('../bin/gws.mjs', import.meta.url));
const newSecret = () => `whsec_${randomBytes(24).toString('base64')}`;

interface Listener {
  child: ChildProcess;
  port: number;
  output: { stdout: string; stderr: string };
  exited: Promise<number | null>;
}

const started: Listener[] = [];
afterEach(() => {
  for (const l of started.splice(0)) if (l.child.exitCode === null && l.child.signalCode === null) l.child.kill('SIGKILL');
});

/** Spawns `gws listen --port P …args` with GWS_WEBHOOK_SECRET only as `env` gives it. */
function spawnListen(port: number, args: string[], env: Record<string, string> = {}): Listener {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env };
  if (!('GWS_WEBHOOK_SECRET' in env)) delete childEnv.GWS_WEBHOOK_SECRET;
  const child = spawn(process.execPath, [GWS, 'listen', '--port', String(port), ...args], { env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  const output = { stdout: '', stderr: '' };
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (output.stdout += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (output.stderr += d));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const listener = { child, port, output, exited };
  started.push(listener);
  return listener;
}

/** A listener that says it is ready. */
async function startListen(args: string[], env: Record<string, string> = {}): Promise<Listener> {
  const l = spawnListen(await freePort(), args, env);
  await until(() => l.output.stderr.includes(`listening on http://127.0.0.1:${l.port}`) || l.child.exitCode !== null, 'gws listen to be ready');
  expect(l.child.exitCode, l.output.stderr).toBeNull();
  return l;
}

/** POSTs `payload` to the listener; `sign`: with this secret, with a wrong signature, or unsigned. */
async function deliver(l: Listener, path: string, payload: object, sign: { secret: string } | 'wrong' | 'none') {
  const id = `run_${randomBytes(4).toString('hex')}:step_1`;
  const body = JSON.stringify(payload);
  const now = new Date();
  const headers: Record<string, string> = { 'content-type': 'application/json', 'idempotency-key': id };
  if (sign !== 'none') {
    headers['webhook-id'] = id;
    headers['webhook-timestamp'] = String(Math.floor(now.getTime() / 1000));
    headers['webhook-signature'] = new Webhook(sign === 'wrong' ? newSecret() : sign.secret).sign(id, now, body);
  }
  const res = await fetch(`http://127.0.0.1:${l.port}${path}`, { method: 'POST', headers, body });
  return { id, status: res.status, answer: await res.text() };
}

/** The human block printed for the delivery with this idempotency key, once whole (a blank line ends it). */
function blockOf(stdout: string, id: string): string {
  return (
    stdout
      .split('\n\n')
      .slice(0, -1)
      .find((b) => b.includes(`idempotency-key: ${id}`)) ?? ''
  );
}

describe('gws listen', () => {
  it('with --secret: a valid signature is ok (200), a wrong or missing one INVALID (400); each delivery printed; Ctrl+C exits 0', async () => {
    const secret = newSecret();
    const l = await startListen(['--secret', secret]);
    expect(l.output.stderr).not.toContain(secret);

    const payload = { run_id: 'run_x', step_id: 'step_1', results: [{ step_id: 'step_0', tool: 'text_analysis', status: 'done' }] };
    const good = await deliver(l, '/hook', payload, { secret });
    const wrong = await deliver(l, '/elsewhere/deep?x=1', payload, 'wrong');
    const unsigned = await deliver(l, '/hook', payload, 'none');
    expect(good.status).toBe(200);
    expect(JSON.parse(good.answer)).toEqual({ received: true, signature: 'ok' });
    expect(wrong.status).toBe(400);
    expect(JSON.parse(wrong.answer).error.code).toBe('invalid_signature');
    expect(unsigned.status).toBe(400);

    await until(() => [good, wrong, unsigned].every((d) => blockOf(l.output.stdout, d.id)), 'three deliveries printed');
    const [g, w, u] = [good, wrong, unsigned].map((d) => blockOf(l.output.stdout, d.id));
    expect(g).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z {2}POST \/hook {2}→ 200$/m);
    expect(g).toContain(`webhook-id: ${good.id}`);
    expect(g).toMatch(/^ {2}signature ok$/m);
    // The body, pretty-printed.
    expect(g).toContain(
      JSON.stringify(payload, null, 2)
        .split('\n')
        .map((line) => `  ${line}`)
        .join('\n'),
    );
    expect(w).toContain('POST /elsewhere/deep?x=1  → 400');
    expect(w).toContain('signature INVALID (no matching signature');
    expect(u).toContain('webhook-id: (none)');
    expect(u).toContain('signature INVALID (missing webhook-id, webhook-timestamp or webhook-signature header)');
    expect(l.output.stdout + l.output.stderr).not.toContain(secret);

    l.child.kill('SIGINT');
    expect(await l.exited).toBe(0);
    expect(l.output.stderr).toContain('Stopped.');
  });

  it('without a secret: unsigned and signed deliveries are both answered 200, said unchecked', async () => {
    const l = await startListen([]);
    expect(l.output.stderr).toContain('not checking signatures');
    const unsigned = await deliver(l, '/hook', { n: 1 }, 'none');
    const signed = await deliver(l, '/hook', { n: 2 }, { secret: newSecret() });
    expect([unsigned.status, signed.status]).toEqual([200, 200]);
    await until(() => blockOf(l.output.stdout, unsigned.id) && blockOf(l.output.stdout, signed.id), 'two deliveries printed');
    expect(blockOf(l.output.stdout, unsigned.id)).toContain('unsigned (no --secret given)');
    expect(blockOf(l.output.stdout, signed.id)).toContain('signed, not checked');
    l.child.kill('SIGTERM');
    expect(await l.exited).toBe(0);
  });

  it('--json with the secret in GWS_WEBHOOK_SECRET: one JSON line per delivery on stdout', async () => {
    const secret = newSecret();
    const l = await startListen(['--json'], { GWS_WEBHOOK_SECRET: secret });
    const good = await deliver(l, '/hook', { run_id: 'run_j' }, { secret });
    const bad = await deliver(l, '/hook', { run_id: 'run_j' }, 'wrong');
    expect([good.status, bad.status]).toEqual([200, 400]);
    const lines = await until(() => {
      const all = l.output.stdout.split('\n').filter(Boolean);
      return all.length >= 2 ? all.map((line) => JSON.parse(line) as Record<string, unknown>) : null;
    }, 'two JSON lines');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({
      kind: 'gws.delivery',
      method: 'POST',
      path: '/hook',
      idempotency_key: good.id,
      webhook_id: good.id,
      signature: 'ok',
      status: 200,
      body: { run_id: 'run_j' },
    });
    expect(Date.parse(lines[0]!.time as string)).not.toBeNaN();
    expect(lines[1]).toMatchObject({ idempotency_key: bad.id, signature: 'invalid', status: 400 });
    expect(lines[1]!.signature_error).toContain('no matching signature');
  });

  it('a port in use: a clear error naming --port, exit 64', async () => {
    const holder = net.createServer();
    const port = await freePort();
    await new Promise<void>((resolve) => holder.listen(port, '127.0.0.1', resolve));
    try {
      const l = spawnListen(port, []);
      expect(await l.exited).toBe(64);
      expect(l.output.stderr).toContain(`port ${port} on 127.0.0.1 is already in use; choose another with --port N`);
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
  });

  it('a secret that is not whsec_ and base64 is a usage error that does not echo it (exit 64)', async () => {
    const l = spawnListen(await freePort(), ['--secret', 'not-a-secret-value']);
    expect(await l.exited).toBe(64);
    expect(l.output.stderr).toContain('is not a Standard Webhooks secret');
    expect(l.output.stderr).not.toContain('not-a-secret-value');
  });
});
