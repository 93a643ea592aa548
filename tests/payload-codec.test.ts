// The payload codec (runtime/payload-codec.ts), where its key comes from
// (config/env.ts, runtime/payload-keys.ts), and the codec endpoint the Temporal
// UI decodes through (api/routes/codec.ts), over a real socket.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../config/config-error.ts';
import { loadConfig, payloadKeyOf } from '../config/env.ts';
import { EncryptionCodec, ENCRYPTED_ENCODING, METADATA_ENCRYPTION_KEY_ID, PayloadKeyMissingError } from '../runtime/payload-codec.ts';
import { PAYLOAD_KEY_FILE, PayloadKeyRequiredError, resolvePayloadKeyring } from '../runtime/payload-keys.ts';
import { ApiClient } from './support/client.ts';
import { testCodec } from './support/payload-codec.ts';
import { startTestApp, type TestApp } from './support/test-app.ts';

const key = (id: string) => payloadKeyOf(id, randomBytes(32));
const utf8 = new TextDecoder();
const toPayload = (v: unknown) => defaultPayloadConverter.toPayload(v);
const fromPayload = (p: Payload) => defaultPayloadConverter.fromPayload(p);

describe('the payload codec', () => {
  it('encrypts each payload whole (AES-256-GCM), names the key, and decrypts it again', async () => {
    const codec = new EncryptionCodec({ current: key('k1'), previous: [] });
    const plain = [toPayload({ input: 'Quarterly numbers are confidential.' }), toPayload(undefined), toPayload(new Uint8Array([1, 2, 3]))];
    const sealed = await codec.encode(plain);
    for (const p of sealed) {
      expect(utf8.decode(p.metadata!.encoding!)).toBe(ENCRYPTED_ENCODING);
      expect(utf8.decode(p.metadata![METADATA_ENCRYPTION_KEY_ID]!)).toBe('k1');
      expect(utf8.decode(p.data!)).not.toContain('confidential');
      expect(Object.keys(p.metadata!).sort()).toEqual(['encoding', METADATA_ENCRYPTION_KEY_ID]); // the inner encoding is hidden too
    }
    const opened = await codec.decode(sealed);
    expect(opened.map(fromPayload)).toEqual([{ input: 'Quarterly numbers are confidential.' }, undefined, new Uint8Array([1, 2, 3])]);
    // A fresh IV each time: the same value never gives the same ciphertext.
    const [again] = await codec.encode([plain[0]!]);
    expect(Buffer.from(again!.data!).equals(Buffer.from(sealed[0]!.data!))).toBe(false);
  });

  it('passes payloads without the encrypted encoding through (histories recorded before the codec)', async () => {
    const codec = new EncryptionCodec({ current: key('k1'), previous: [] });
    const plain = toPayload({ recorded: 'before the codec' });
    expect(await codec.decode([plain])).toEqual([plain]);
  });

  it('decrypts by the key id in the metadata: a previous key still reads what it wrote (rotation)', async () => {
    const old = key('2025-01');
    const current = key('2025-07');
    const [sealedOld] = await new EncryptionCodec({ current: old, previous: [] }).encode([toPayload('written before the rotation')]);
    const rotated = new EncryptionCodec({ current, previous: [old] });
    expect(fromPayload((await rotated.decode([sealedOld!]))[0]!)).toBe('written before the rotation');
    const [sealedNew] = await rotated.encode([toPayload('after')]);
    expect(utf8.decode(sealedNew!.metadata![METADATA_ENCRYPTION_KEY_ID]!)).toBe('2025-07');
    // Without the old key it refuses, naming the key id to configure.
    await expect(new EncryptionCodec({ current, previous: [] }).decode([sealedOld!])).rejects.toThrow(PayloadKeyMissingError);
    await expect(new EncryptionCodec({ current, previous: [] }).decode([sealedOld!])).rejects.toThrow(/"2025-01".*PAYLOAD_KEYS_PREVIOUS/);
  });

  it('refuses a payload that was altered, or sealed with another key under the same id', async () => {
    const codec = new EncryptionCodec({ current: key('k1'), previous: [] });
    const [sealed] = await codec.encode([toPayload('intact')]);
    const tampered = { ...sealed!, data: Uint8Array.from(sealed!.data!, (b, i) => (i === 20 ? b ^ 1 : b)) };
    await expect(codec.decode([tampered])).rejects.toThrow();
    await expect(new EncryptionCodec({ current: key('k1'), previous: [] }).decode([sealed!])).rejects.toThrow();
  });
});

describe('payload key configuration', () => {
  const good = randomBytes(32).toString('base64');

  it('validates PAYLOAD_KEY, PAYLOAD_KEY_ID and PAYLOAD_KEYS_PREVIOUS, naming each bad variable', () => {
    const problems = (env: Record<string, string>) => {
      try {
        loadConfig(env);
        return [];
      } catch (err) {
        expect(err).toBeInstanceOf(ConfigError);
        return (err as ConfigError).problems.map((p) => p.split(':')[0]);
      }
    };
    expect(problems({ PAYLOAD_KEY: randomBytes(16).toString('base64') })).toEqual(['PAYLOAD_KEY']);
    expect(problems({ PAYLOAD_KEY: 'not base64 at all' })).toEqual(['PAYLOAD_KEY']);
    expect(problems({ PAYLOAD_KEY: good, PAYLOAD_KEY_ID: 'has space' })).toEqual(['PAYLOAD_KEY_ID']);
    expect(problems({ PAYLOAD_KEY: good, PAYLOAD_KEYS_PREVIOUS: 'old' })).toEqual(['PAYLOAD_KEYS_PREVIOUS']);
    expect(problems({ PAYLOAD_KEY_ID: 'lonely' })).toEqual(['PAYLOAD_KEY_ID']);
    expect(problems({ PAYLOAD_KEY: good, PAYLOAD_KEY_ID: 'a', PAYLOAD_KEYS_PREVIOUS: `a:${good}` })).toEqual(['PAYLOAD_KEYS_PREVIOUS']);
    expect(problems({ CODEC_ENDPOINT_TOKEN: 'short' })).toEqual(['CODEC_ENDPOINT_TOKEN']);

    const old = randomBytes(32).toString('base64');
    const config = loadConfig({ PAYLOAD_KEY: good, PAYLOAD_KEY_ID: '2025-07', PAYLOAD_KEYS_PREVIOUS: `2025-01:${old}` });
    expect(config.payload.key?.id).toBe('2025-07');
    expect(config.payload.key?.bytes.toString('base64')).toBe(good);
    expect(config.payload.previous.map((k) => [k.id, k.bytes.toString('base64')])).toEqual([['2025-01', old]]);
    // Key bytes never show when the config is logged or serialised.
    expect(JSON.stringify(config)).not.toContain(good);
    expect(JSON.stringify(config)).not.toContain(old);
    // Without an id, the key gets a fingerprint id: two keys never share one.
    expect(loadConfig({ PAYLOAD_KEY: good }).payload.key?.id).toMatch(/^k-[0-9a-f]{12}$/);
  });

  it('enables the codec endpoint by default outside production, on the dev UI origins', () => {
    expect(loadConfig({}).codecEndpoint).toEqual({ enabled: true, corsOrigins: ['http://127.0.0.1:8233', 'http://localhost:8233'] });
    expect(loadConfig({ NODE_ENV: 'production' }).codecEndpoint.enabled).toBe(false);
    const token = randomBytes(24).toString('hex');
    const configured = loadConfig({ CODEC_ENDPOINT_TOKEN: token, CODEC_ENDPOINT_CORS_ORIGINS: 'https://temporal.example.com/' });
    expect(configured.codecEndpoint.token).toBe(token);
    expect(configured.codecEndpoint.corsOrigins).toEqual(['https://temporal.example.com']);
    expect(JSON.stringify(configured)).not.toContain(token);
  });

  describe('the key in DATA_DIR', () => {
    let dataDir: string;
    beforeAll(() => {
      dataDir = mkdtempSync(path.join(os.tmpdir(), 'gws-payload-key-'));
    });
    afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

    it('is generated once (mode 0600) when PAYLOAD_KEY is unset, then reused', () => {
      const config = loadConfig({ DATA_DIR: dataDir });
      const first = resolvePayloadKeyring(config, { allowDataDirKey: true });
      expect(first.source).toBe('data-dir');
      const file = path.join(dataDir, PAYLOAD_KEY_FILE);
      expect(first.createdFile).toBe(file);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      const stored = JSON.parse(readFileSync(file, 'utf8'));
      expect(stored.id).toBe(first.keyring.current.id);
      const second = resolvePayloadKeyring(config, { allowDataDirKey: true });
      expect(second.createdFile).toBeUndefined();
      expect(second.keyring.current.bytes.equals(first.keyring.current.bytes)).toBe(true);
    });

    it('is refused where PAYLOAD_KEY is required (production)', () => {
      expect(() => resolvePayloadKeyring(loadConfig({ DATA_DIR: dataDir, NODE_ENV: 'production' }), { allowDataDirKey: false })).toThrow(
        PayloadKeyRequiredError,
      );
    });

    it('so `npm run api` in production without PAYLOAD_KEY stops at start-up, saying why', () => {
      const run = spawnSync(process.execPath, ['--import', 'tsx', 'bin/api.ts'], {
        env: {
          ...process.env,
          NODE_ENV: 'production',
          PAYLOAD_KEY: '',
          DATA_DIR: dataDir,
          DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none',
          TEMPORAL_ADDRESS: '127.0.0.1:1',
        },
        encoding: 'utf8',
        timeout: 30_000,
      });
      expect(run.status).toBe(1);
      expect(run.stdout + run.stderr).toContain('PAYLOAD_KEY is required when NODE_ENV=production');
    });

    it('still decrypts once PAYLOAD_KEY is set, so histories written under it stay readable', async () => {
      const generated = resolvePayloadKeyring(loadConfig({ DATA_DIR: dataDir }), { allowDataDirKey: true }).keyring.current;
      const [sealed] = await new EncryptionCodec({ current: generated, previous: [] }).encode([toPayload('dev history')]);
      const resolved = resolvePayloadKeyring(loadConfig({ DATA_DIR: dataDir, PAYLOAD_KEY: randomBytes(32).toString('base64') }), { allowDataDirKey: false });
      expect(resolved.source).toBe('env');
      expect(resolved.keyring.previous.map((k) => k.id)).toEqual([generated.id]);
      expect(fromPayload((await new EncryptionCodec(resolved.keyring).decode([sealed!]))[0]!)).toBe('dev history');
    });
  });
});

/** POSTs with node:http, which (unlike fetch) may set Host. */
function rawPost(url: string, body: unknown, headers: Record<string, string>): Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text }));
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

const asJson = (p: Payload) => ({
  metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v!).toString('base64')])),
  data: Buffer.from(p.data ?? new Uint8Array()).toString('base64'),
});
const fromJson = (p: { metadata: Record<string, string>; data: string }): Payload => ({
  metadata: Object.fromEntries(Object.entries(p.metadata).map(([k, v]) => [k, new Uint8Array(Buffer.from(v, 'base64'))])),
  data: new Uint8Array(Buffer.from(p.data, 'base64')),
});

describe('the codec endpoint', () => {
  const UI = 'http://127.0.0.1:8233';
  let app: TestApp;
  let api: ApiClient;
  beforeAll(async () => {
    app = await startTestApp();
    api = await ApiClient.connect(app.url);
  });
  afterAll(() => app.close());

  it('decodes for the Temporal UI what the service encrypted, and encodes for it', async () => {
    const [sealed] = await testCodec().encode([toPayload({ run: 'Summarise the board minutes. The budget was approved.' })]);
    const decoded = await api.post('/codec/decode', { payloads: [asJson(sealed!)] }, { headers: { origin: UI, 'x-namespace': 'default' } });
    expect(decoded.status).toBe(200);
    expect(decoded.headers.get('access-control-allow-origin')).toBe(UI);
    expect(fromPayload(fromJson(decoded.json.payloads[0]))).toEqual({ run: 'Summarise the board minutes. The budget was approved.' });

    const encoded = await api.post('/codec/encode', { payloads: [asJson(toPayload('a signal from the UI'))] }, { headers: { origin: UI } });
    expect(encoded.status).toBe(200);
    const payload = fromJson(encoded.json.payloads[0]);
    expect(utf8.decode(payload.metadata!.encoding!)).toBe(ENCRYPTED_ENCODING);
    expect(fromPayload((await testCodec().decode([payload]))[0]!)).toBe('a signal from the UI');
  });

  it('answers the browser preflight for the UI origin only', async () => {
    const preflight = (origin: string) =>
      fetch(`${app.url}/codec/decode`, {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,x-namespace,authorization' },
      });
    const ok = await preflight(UI);
    expect(ok.status).toBe(204);
    expect(ok.headers.get('access-control-allow-origin')).toBe(UI);
    expect(ok.headers.get('access-control-allow-headers')).toMatch(/X-Namespace/i);
    expect(ok.headers.get('access-control-allow-methods')).toContain('POST');
    const other = await preflight('https://evil.example');
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
    const refused = await api.post('/codec/decode', { payloads: [] }, { headers: { origin: 'https://evil.example' } });
    expect(refused.status).toBe(403);
  });

  it('leaves alone what it cannot decrypt and payloads of other namespaces', async () => {
    const [foreign] = await new EncryptionCodec({ current: key('someone-else'), previous: [] }).encode([toPayload('not ours')]);
    const [ours] = await testCodec().encode([toPayload('ours')]);
    const r = await api.post('/codec/decode', { payloads: [asJson(foreign!), asJson(ours!)] });
    expect(r.json.payloads[0]).toEqual(asJson(foreign!));
    expect(fromPayload(fromJson(r.json.payloads[1]))).toBe('ours');
    const elsewhere = await api.post('/codec/decode', { payloads: [asJson(ours!)] }, { headers: { 'x-namespace': 'another' } });
    expect(elsewhere.json.payloads).toEqual([asJson(ours!)]);
    expect((await api.post('/codec/decode', { payloads: [{ data: '%%%' }] })).status).toBe(400);
  });

  it('without a token, serves this machine only: a Host that is not loopback, or a proxy header, is refused', async () => {
    const url = `${app.url}/codec/decode`;
    expect((await rawPost(url, { payloads: [] }, {})).status).toBe(200);
    expect((await rawPost(url, { payloads: [] }, { host: 'attacker.example' })).status).toBe(403);
    expect((await rawPost(url, { payloads: [] }, { 'x-forwarded-for': '203.0.113.9' })).status).toBe(403);
  });

  it('with CODEC_ENDPOINT_TOKEN, requires it as a bearer token', async () => {
    const token = randomBytes(24).toString('hex');
    const guarded = await startTestApp({ CODEC_ENDPOINT_TOKEN: token });
    try {
      const client = await ApiClient.connect(guarded.url);
      expect((await client.post('/codec/decode', { payloads: [] })).status).toBe(401);
      expect((await client.post('/codec/decode', { payloads: [] }, { headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
      expect((await client.post('/codec/decode', { payloads: [] }, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
      // A proxy in front is fine then: the token is the credential.
      expect(
        (await rawPost(`${guarded.url}/codec/decode`, { payloads: [] }, { authorization: `Bearer ${token}`, 'x-forwarded-for': '203.0.113.9' })).status,
      ).toBe(200);
    } finally {
      await guarded.close();
    }
  });

  it('is absent when CODEC_ENDPOINT_ENABLED=false', async () => {
    const off = await startTestApp({ CODEC_ENDPOINT_ENABLED: 'false' });
    try {
      const client = await ApiClient.connect(off.url);
      expect((await client.post('/codec/decode', { payloads: [] })).status).toBe(404);
      expect((await client.get('/openapi.json')).json.paths['/codec/decode']).toBeUndefined();
    } finally {
      await off.close();
    }
  });

  it('is documented in the OpenAPI document as an operator extension', async () => {
    const doc = (await api.get('/openapi.json')).json;
    expect(doc.paths['/codec/decode'].post).toMatchObject({ operationId: 'decodePayloads', tags: ['operator'], security: [] });
    expect(doc.paths['/codec/encode'].post.summary).toContain('(extension)');
  });
});
