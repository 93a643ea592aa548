// The codec endpoint (extension): Temporal's remote codec protocol, so the
// Temporal Web UI and CLI (`--codec-endpoint`) show the payloads the service
// encrypts (runtime/payload-codec.ts) in clear to an operator.
//   POST /codec/decode, POST /codec/encode   {"payloads": [{"metadata": {k: base64}, "data": base64}]}
// The UI calls it from the browser, with `Content-Type: application/json`,
// `X-Namespace` and, when configured to pass its access token, `Authorization`.
//
// Who may call it: with CODEC_ENDPOINT_TOKEN set, only a request carrying
// `Authorization: Bearer <token>` (the CLI's `--codec-auth`, a proxy in front of
// the UI, or a UI whose forwarded access token is that value). Without a token,
// only requests from this machine: a loopback peer, a loopback Host header (so a
// page that rebinds a DNS name to 127.0.0.1 is refused) and no proxy headers.
// Browsers may call it only from the configured origins (the dev UI's by default).
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Payload, PayloadCodec } from '@temporalio/common';
import type Koa from 'koa';
import { z } from 'zod';
import { ApiError } from '../../domain/errors.ts';
import { ErrorObject } from '../contract/common.ts';
import { defineRoute } from '../contract/route.ts';

export interface CodecEndpointDeps {
  codec: PayloadCodec;
  /** The namespace whose payloads it decodes; other namespaces' payloads are answered unchanged. */
  namespace: string;
  /** CODEC_ENDPOINT_TOKEN; unset means loopback only. */
  token?: string;
  /** Origins a browser may call it from (CORS). */
  corsOrigins: string[];
}

export const CODEC_PATH_PREFIX = '/codec/';

const base64 = z.string().regex(/^[A-Za-z0-9+/_-]*={0,2}$/, 'must be base64');

const PayloadJson = z
  .object({
    metadata: z.record(z.string(), base64).optional().meta({ description: 'Metadata values, base64 (protobuf JSON).' }),
    data: base64.optional().meta({ description: 'The payload bytes, base64 (protobuf JSON).' }),
  })
  .meta({ id: 'CodecPayload', description: 'A Temporal Payload in protobuf JSON form.' });

const Payloads = z.object({ payloads: z.array(PayloadJson).max(10_000) }).meta({ id: 'CodecPayloads' });

type PayloadJson = z.infer<typeof PayloadJson>;

function fromJson(p: PayloadJson): Payload {
  return {
    metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, new Uint8Array(Buffer.from(v, 'base64'))])),
    data: new Uint8Array(Buffer.from(p.data ?? '', 'base64')),
  };
}

function toJson(p: Payload): PayloadJson {
  const metadata = Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v ?? new Uint8Array()).toString('base64')]));
  return { metadata, data: Buffer.from(p.data ?? new Uint8Array()).toString('base64') };
}

const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest();
const sameSecret = (a: string, b: string) => timingSafeEqual(sha256(a), sha256(b));

const LOOPBACK_PEER = /^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|::1|::ffff:127\.\d{1,3}\.\d{1,3}\.\d{1,3})$/;
const LOOPBACK_HOST = /^(localhost|127\.\d{1,3}\.\d{1,3}\.\d{1,3}|\[::1\])(:\d+)?$/i;

/** A request made on this machine, directly (no proxy in between). */
function fromThisMachine(ctx: Koa.Context): boolean {
  const peer = ctx.req.socket.remoteAddress ?? '';
  const proxied = ['forwarded', 'x-forwarded-for', 'x-real-ip'].some((h) => ctx.get(h) !== '');
  return LOOPBACK_PEER.test(peer) && LOOPBACK_HOST.test(ctx.get('host')) && !proxied;
}

const tokenRequired = () =>
  new ApiError(401, 'authentication_error', 'invalid_api_key', 'The codec endpoint needs Authorization: Bearer <CODEC_ENDPOINT_TOKEN>.');
// 403s are invalid_request_error (api/contract/common.ts); errors.ts has no code of their own yet.
const loopbackOnly = () =>
  new ApiError(
    403,
    'invalid_request_error',
    'invalid_api_key',
    'The codec endpoint answers requests from this machine only while no CODEC_ENDPOINT_TOKEN is configured.',
  );
const originRefused = () =>
  new ApiError(403, 'invalid_request_error', 'invalid_api_key', 'This browser origin may not call the codec endpoint (CODEC_ENDPOINT_CORS_ORIGINS).');

/** Throws unless the caller is an operator as configured: the token, or this machine. */
export function authorizeCodecCall(ctx: Koa.Context, deps: Pick<CodecEndpointDeps, 'token' | 'corsOrigins'>): void {
  const origin = ctx.get('origin');
  if (origin && !deps.corsOrigins.includes(origin)) throw originRefused();
  if (deps.token) {
    const given = /^Bearer\s+(\S+)\s*$/i.exec(ctx.get('authorization'))?.[1];
    if (!given || !sameSecret(given, deps.token)) throw tokenRequired();
    return;
  }
  if (!fromThisMachine(ctx)) throw loopbackOnly();
}

/**
 * CORS for the UI's browser calls: the preflight (OPTIONS) is answered here, and the
 * allowed origin is echoed on every answer (errors included, so the UI can show them).
 */
export function codecCors(deps: Pick<CodecEndpointDeps, 'corsOrigins'>): Koa.Middleware {
  // Not async: every other request passes straight on, with no promise of this middleware's own.
  return function codecCors(ctx, next) {
    if (!ctx.path.startsWith(CODEC_PATH_PREFIX)) return next();
    const origin = ctx.get('origin');
    ctx.vary('Origin');
    const allowed = origin !== '' && deps.corsOrigins.includes(origin);
    if (allowed) {
      ctx.set('Access-Control-Allow-Origin', origin);
      ctx.set('Access-Control-Allow-Credentials', 'true');
    }
    if (ctx.method !== 'OPTIONS') return next();
    if (allowed) {
      ctx.set('Access-Control-Allow-Methods', 'POST, OPTIONS');
      ctx.set('Access-Control-Allow-Headers', 'Content-Type, Authorization, X-Namespace');
      ctx.set('Access-Control-Max-Age', '600');
      if (ctx.get('access-control-request-private-network') === 'true') ctx.set('Access-Control-Allow-Private-Network', 'true');
    }
    ctx.status = 204;
    return Promise.resolve();
  };
}

const DESCRIPTION = `Temporal's remote codec protocol (extension), for operators: the Temporal Web UI (codec endpoint setting, or \`temporal server start-dev --ui-codec-endpoint <api>/codec\`) and CLI (\`--codec-endpoint <api>/codec\`) call it to show the payloads this service encrypts (AES-256-GCM, \`binary/encrypted\`).
Guarded: served only when CODEC_ENDPOINT_ENABLED; with CODEC_ENDPOINT_TOKEN set, the request must carry \`Authorization: Bearer <token>\`; without one, only requests from this machine (loopback peer and Host, no proxy headers) are answered. Browsers may call it only from CODEC_ENDPOINT_CORS_ORIGINS. Payloads of another namespace (X-Namespace) are answered unchanged.`;

export function codecRoutes(deps: CodecEndpointDeps) {
  const route = (action: 'decode' | 'encode') =>
    defineRoute({
      method: 'post',
      path: `/codec/${action}`,
      operationId: action === 'decode' ? 'decodePayloads' : 'encodePayloads',
      summary: action === 'decode' ? 'Decode Temporal payloads for an operator (extension)' : 'Encode Temporal payloads for an operator (extension)',
      description: `${DESCRIPTION}${
        action === 'decode' ? ' A payload the service cannot decrypt (a key that is no longer configured) is answered as it came.' : ''
      }`,
      tags: ['operator'],
      auth: 'none',
      rateLimit: 'none',
      request: {
        body: Payloads,
        headers: z.object({ 'x-namespace': z.string().optional().meta({ description: 'The namespace of the payloads (the UI sends it).' }) }),
      },
      responses: {
        200: { description: `The payloads, ${action}d, in the same order.`, schema: Payloads },
        401: { description: 'A CODEC_ENDPOINT_TOKEN is configured and the request did not carry it.', schema: ErrorObject },
        403: {
          description: 'No token is configured and the request did not come from this machine, or the browser origin is not allowed.',
          schema: ErrorObject,
        },
      },
      async handler({ body, headers, ctx }) {
        authorizeCodecCall(ctx, deps);
        const payloads = body.payloads.map(fromJson);
        const namespace = headers['x-namespace'];
        if (namespace && namespace !== deps.namespace) return { status: 200, body: { payloads: body.payloads } };
        const out =
          action === 'encode'
            ? await deps.codec.encode(payloads)
            : await Promise.all(payloads.map(async (p) => (await deps.codec.decode([p]).catch(() => [p]))[0]!));
        return { status: 200, body: { payloads: out.map(toJson) }, headers: { 'Cache-Control': 'no-store' } };
      },
    });
  return [route('decode'), route('encode')];
}
