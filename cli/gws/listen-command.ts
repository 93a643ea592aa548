// `gws listen [--port N] [--secret whsec_…]`: a local receiver for the service's webhook deliveries,
// as `stripe listen` is for Stripe's. It listens on 127.0.0.1 only, takes a POST on any path, prints
// each delivery (method, path, time, its idempotency-key and webhook-id headers, the JSON body) and
// answers 200. With a secret (--secret or GWS_WEBHOOK_SECRET) it checks the Standard Webhooks
// signature: a delivery whose signature is missing or wrong is answered 400, so its sender sees it.
// Status lines go to stderr, deliveries to stdout (with --json, one JSON object per delivery).
// Ctrl+C (or SIGTERM) stops it: exit 0. A port in use is a usage error: exit 64.
import http from 'node:http';
import { InvalidArgumentError } from 'commander';
import { Webhook } from 'standardwebhooks';
import type { CommandContext } from './context.ts';
import { writeJson, writeLine } from './context.ts';
import { CliError } from './errors.ts';
import { EXIT } from './exit-codes.ts';

export const DEFAULT_LISTEN_PORT = 9999;
export const LISTEN_HOST = '127.0.0.1';
/** The env var the secret is read from when --secret is not given. */
export const WEBHOOK_SECRET_ENV = 'GWS_WEBHOOK_SECRET';
/** A delivery's body is read up to this size; a larger one is answered 413. */
const MAX_BODY_BYTES = 10 * 1024 * 1024;

export interface ListenOptions {
  port: number;
  /** From --secret, or GWS_WEBHOOK_SECRET (commander reads it). Never printed. */
  secret?: string;
}

type ListenContext = Pick<CommandContext, 'mode' | 'out' | 'err' | 'signal'>;

/** How a delivery's signature stood: checked (ok / invalid), or not checked for want of a secret. */
export type SignatureVerdict = 'ok' | 'invalid' | 'unchecked' | 'unsigned';

/** One delivery as `--json` prints it (a line of NDJSON). */
export interface DeliveryRecord {
  kind: 'gws.delivery';
  time: string;
  method: string;
  path: string;
  idempotency_key: string | null;
  webhook_id: string | null;
  signature: SignatureVerdict;
  /** Why the signature is invalid; absent otherwise. */
  signature_error?: string;
  /** The status this receiver answered. */
  status: number;
  /** The body, parsed; null when it is empty or not JSON (then `body_text` has it). */
  body: unknown;
  body_text?: string;
}

/** A `--port` value: a whole number from 1 to 65535. */
export function portNumber(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isInteger(n) || n < 1 || n > 65_535) throw new InvalidArgumentError('must be a whole number from 1 to 65535');
  return n;
}

/** The checker of a secret, or a usage error that never quotes it. */
function webhookOf(secret: string): Webhook {
  const problem = () =>
    new CliError(
      `the signing secret (--secret or ${WEBHOOK_SECRET_ENV}) is not a Standard Webhooks secret: whsec_ and base64, as \`npm run tenants -- webhook set\` prints it`,
      EXIT.usage,
    );
  if (!secret.startsWith('whsec_')) throw problem();
  try {
    return new Webhook(secret);
  } catch {
    throw problem();
  }
}

const header = (req: http.IncomingMessage, name: string): string | null => {
  const value = req.headers[name];
  if (value === undefined) return null;
  return Array.isArray(value) ? value.join(', ') : value;
};

/** What a failed check means, in words (standardwebhooks' own messages are terse). */
function reasonOf(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  if (message === 'Missing required headers') return 'missing webhook-id, webhook-timestamp or webhook-signature header';
  if (message === 'No matching signature found') return 'no matching signature: another secret, or the body was changed';
  if (message === 'Invalid Signature Headers') return 'webhook-timestamp is not a number';
  if (message === 'Message timestamp too old' || message === 'Message timestamp too new') return `${message.toLowerCase()} (more than 5 minutes off)`;
  return message;
}

function readBody(req: http.IncomingMessage): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        resolve(null);
        req.resume();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(size > MAX_BODY_BYTES ? null : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function answer(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
}

/** The human form of a delivery: a heading line, its keys, the verdict, then the body pretty-printed. */
function humanLines(d: DeliveryRecord): string[] {
  const verdict = {
    ok: 'signature ok',
    invalid: `signature INVALID (${d.signature_error})`,
    unchecked: 'signed, not checked (no --secret given)',
    unsigned: 'unsigned (no --secret given)',
  }[d.signature];
  const body = d.body !== null ? JSON.stringify(d.body, null, 2) : d.body_text ? `(not JSON) ${d.body_text}` : '(empty body)';
  return [
    `${d.time}  ${d.method} ${d.path}  → ${d.status}`,
    `  idempotency-key: ${d.idempotency_key ?? '(none)'}`,
    `  webhook-id: ${d.webhook_id ?? '(none)'}`,
    `  ${verdict}`,
    ...body.split('\n').map((l) => `  ${l}`),
    '',
  ];
}

export async function listenCommand(ctx: ListenContext, options: ListenOptions): Promise<number> {
  const secret = options.secret?.trim() || undefined;
  const webhook = secret ? webhookOf(secret) : null;

  const print = (d: DeliveryRecord) => {
    if (ctx.mode === 'json') writeJson(ctx.out, d);
    else ctx.out.write(`${humanLines(d).join('\n')}\n`); // one write: a delivery's lines stay together
  };

  const server = http.createServer(async (req, res) => {
    const path = req.url ?? '/';
    if (req.method !== 'POST') {
      writeLine(ctx.err, `${req.method} ${path}: not a delivery (only POST is taken); answered 405`);
      answer(res, 405, { error: { code: 'method_not_allowed', message: 'POST a delivery, on any path.' } }, { allow: 'POST' });
      return;
    }
    const time = new Date().toISOString();
    let raw: Buffer | null;
    try {
      raw = await readBody(req);
    } catch {
      return; // the sender went away mid-body: nothing to print or answer
    }
    if (raw === null) {
      writeLine(ctx.err, `POST ${path}: body over ${MAX_BODY_BYTES} bytes; answered 413`);
      answer(res, 413, { error: { code: 'payload_too_large', message: `At most ${MAX_BODY_BYTES} bytes.` } });
      return;
    }
    const text = raw.toString('utf8');
    let signature: SignatureVerdict;
    let signatureError: string | undefined;
    if (webhook) {
      try {
        webhook.verify(text, {
          'webhook-id': header(req, 'webhook-id') ?? '',
          'webhook-timestamp': header(req, 'webhook-timestamp') ?? '',
          'webhook-signature': header(req, 'webhook-signature') ?? '',
        });
        signature = 'ok';
      } catch (err) {
        signature = 'invalid';
        signatureError = reasonOf(err);
      }
    } else signature = header(req, 'webhook-signature') ? 'unchecked' : 'unsigned';

    let body: unknown = null;
    let bodyText: string | undefined;
    if (text.length > 0) {
      try {
        body = JSON.parse(text);
      } catch {
        bodyText = text;
      }
    }
    const status = signature === 'invalid' ? 400 : 200;
    print({
      kind: 'gws.delivery',
      time,
      method: req.method,
      path,
      idempotency_key: header(req, 'idempotency-key'),
      webhook_id: header(req, 'webhook-id'),
      signature,
      ...(signatureError ? { signature_error: signatureError } : {}),
      status,
      body,
      ...(bodyText !== undefined ? { body_text: bodyText } : {}),
    });
    if (status === 400) answer(res, 400, { error: { code: 'invalid_signature', message: `Signature check failed: ${signatureError}.` } });
    else answer(res, 200, { received: true, signature });
  });

  await new Promise<void>((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException) => {
      if (err.code === 'EADDRINUSE') reject(new CliError(`port ${options.port} on ${LISTEN_HOST} is already in use; choose another with --port N`, EXIT.usage));
      else if (err.code === 'EACCES') reject(new CliError(`not allowed to listen on port ${options.port}; choose another with --port N`, EXIT.usage));
      else reject(new CliError(`cannot listen on ${LISTEN_HOST}:${options.port}: ${err.code ?? err.message}`));
    };
    server.once('error', onError);
    server.listen(options.port, LISTEN_HOST, () => {
      server.removeListener('error', onError);
      resolve();
    });
  });

  const url = `http://${LISTEN_HOST}:${options.port}`;
  const checking = webhook ? 'checking signatures' : `not checking signatures (no --secret or ${WEBHOOK_SECRET_ENV})`;
  writeLine(ctx.err, `Ready: listening on ${url} (any path) for webhook deliveries, ${checking}. Ctrl+C to stop.`);

  // Until Ctrl+C (main aborts ctx.signal) or SIGTERM.
  await new Promise<void>((resolve) => {
    const stop = () => {
      process.removeListener('SIGTERM', stop);
      ctx.signal.removeEventListener('abort', stop);
      resolve();
    };
    if (ctx.signal.aborted) return stop();
    ctx.signal.addEventListener('abort', stop, { once: true });
    process.once('SIGTERM', stop);
  });
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
  writeLine(ctx.err, 'Stopped.');
  return EXIT.ok;
}
