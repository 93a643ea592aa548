// The one delivery URL rule, at store time (the URL as written) and at send time (the
// addresses its name resolves to). Send-time refusals are shown with a resolver that answers
// a fixed address: no name is really resolved and no traffic leaves loopback.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliveryUrlProblem, resolvedAddressProblem } from '../domain/delivery-url.ts';
import { deliveryFetch, isDeliveryRefused, type ResolveAll } from '../services/delivery-fetch.ts';

const production = { allowLoopback: false };
const development = { allowLoopback: true };

/** A resolver that answers `address` for every name, and counts the names asked. */
function resolvingTo(address: string, family = address.includes(':') ? 6 : 4) {
  const asked: string[] = [];
  const resolveAll: ResolveAll = (hostname, _options, callback) => {
    asked.push(hostname);
    queueMicrotask(() => callback(null, [{ address, family }]));
  };
  return { resolveAll, asked };
}

let receiver: http.Server;
let port: number;
let received = 0;
beforeAll(async () => {
  receiver = http.createServer((req, res) => {
    received++;
    req.resume();
    res.end('ok');
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  port = (receiver.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => receiver.close(() => resolve())));

describe('the URL as stored', () => {
  it.each([
    ['http://169.254.169.254/latest/meta-data', development, /https/],
    ['https://169.254.169.254/latest/meta-data', development, /private, link-local or reserved/],
    ['https://[fd00::1]/x', development, /private, link-local or reserved/],
    ['https://10.1.2.3/x', development, /private/],
    ['http://127.0.0.1:9/hook', production, /only outside production/],
    ['https://user:pw@hooks.example.com/x', development, /credentials/],
  ])('%s is refused', (url, rules, reason) => {
    const problem = deliveryUrlProblem(url, rules);
    expect(problem).toMatch(reason);
    expect(problem).not.toContain('pw');
  });
  it('a public https name is accepted, and loopback http outside production', () => {
    expect(deliveryUrlProblem('https://hooks.example.com/x', production)).toBeNull();
    expect(deliveryUrlProblem('http://127.0.0.1:9/hook', development)).toBeNull();
  });
});

describe('the resolved address', () => {
  it.each([
    ['169.254.169.254', development],
    ['10.0.0.5', development],
    ['192.168.1.1', development],
    ['fe80::1', development],
    ['::ffff:127.0.0.1', development],
    ['127.0.0.1', production],
    ['::1', production],
  ])('%s is refused', (address, rules) => {
    expect(resolvedAddressProblem(address, rules)).not.toBeNull();
  });
  it('a public address always passes, loopback outside production', () => {
    expect(resolvedAddressProblem('203.0.113.7', production)).toBeNull();
    expect(resolvedAddressProblem('2001:db8::1', production)).toBeNull();
    expect(resolvedAddressProblem('127.0.0.1', development)).toBeNull();
  });
});

describe('sending', () => {
  it('a name resolving to the metadata service is refused before any connection, with nothing of the URL in the error', async () => {
    const { resolveAll, asked } = resolvingTo('169.254.169.254');
    const send = deliveryFetch(production, resolveAll);
    const before = received;
    const err = await send('https://metadata.example.com/latest?token=abc', { method: 'POST', body: '{}' }).catch((e: unknown) => e);
    await send.close();
    expect(isDeliveryRefused(err)).toBe(true);
    expect(asked).toEqual(['metadata.example.com']);
    const text = `${(err as Error).message} ${String((err as { cause?: Error }).cause?.message)}`;
    expect(text).not.toContain('metadata.example.com');
    expect(text).not.toContain('token');
    expect(received).toBe(before);
  });

  it('in production a name resolving to loopback is refused, though the same receiver is reached outside production', async () => {
    // A public-looking https name, so that only the resolved address can refuse it.
    const refusedSend = deliveryFetch(production, resolvingTo('127.0.0.1').resolveAll);
    expect(isDeliveryRefused(await refusedSend(`https://hooks.example.com:${port}/hook`, { method: 'POST', body: '{}' }).catch((e: unknown) => e))).toBe(true);
    await refusedSend.close();

    const url = `http://receiver.localhost:${port}/hook`;

    const before = received;
    const { resolveAll, asked } = resolvingTo('127.0.0.1');
    const send = deliveryFetch(development, resolveAll);
    const res = await send(url, { method: 'POST', body: '{}' });
    await res.body?.cancel();
    await send.close();
    expect(res.status).toBe(200);
    expect(asked).toEqual(['receiver.localhost']);
    expect(received).toBe(before + 1);
  });

  it('a URL stored before the rule is checked again when sent', async () => {
    const send = deliveryFetch(production, resolvingTo('127.0.0.1').resolveAll);
    const before = received;
    expect(isDeliveryRefused(await send(`http://127.0.0.1:${port}/hook`, { method: 'POST', body: '{}' }).catch((e: unknown) => e))).toBe(true);
    await send.close();
    expect(received).toBe(before);
  });
});
