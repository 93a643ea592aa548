// Local HTTP servers the tests start: an OpenAI-compatible upstream (handled
// freely, or scripted reply by reply) and a customer's webhook receiver.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

// `any`: tests read arbitrary JSON
export type UpstreamBody = {
  model: string;
  messages: any[];
  tools?: any[];
  tool_choice?: any;
  parallel_tool_calls?: boolean;
  response_format?: any;
  max_tokens?: number;
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  temperature?: number;
  top_p?: number;
  seed?: number;
  stop?: string | string[];
  presence_penalty?: number;
  frequency_penalty?: number;
  user?: string;
};

async function listen(server: http.Server, path: string) {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`;
  const close = () =>
    new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
  return { url, close };
}

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let data = '';
    req.on('data', (c) => (data += c));
    req.on('end', () => resolve(data));
  });
}

/** An OpenAI-compatible upstream whose every request goes to `handle`. */
export async function fakeUpstream(handle: (body: UpstreamBody, req: http.IncomingMessage, res: http.ServerResponse) => void) {
  const seen: { auth: string | undefined; body: UpstreamBody; at: number }[] = [];
  const server = http.createServer(async (req, res) => {
    const body = JSON.parse(await readBody(req)) as UpstreamBody;
    seen.push({ auth: req.headers.authorization, body, at: Date.now() });
    handle(body, req, res);
  });
  return { ...(await listen(server, '/v1')), seen };
}

/**
 * One scripted upstream reply: an HTTP status, or a chat.completion message with optional usage.
 * A tool call's `id` is random unless given.
 */
export type ScriptedReply =
  /** An HTTP error; with retryAfter, a Retry-After header (seconds). */
  | { status: number; retryAfter?: number }
  | {
      content?: string | null;
      tool_calls?: { name: string; arguments: unknown; id?: string }[];
      /** Reported usage (default 100 + 20 tokens); null: the upstream reports none. */
      usage?: { prompt_tokens: number; completion_tokens: number } | null;
    };

type WireUsage = { prompt_tokens: number; completion_tokens: number; total_tokens: number };

type ScriptedCall = { id: string; type: 'function'; function: { name: string; arguments: string } };

/** Splits `text` into `parts` pieces (at least one character each), keeping every character. */
function pieces(text: string, parts: number): string[] {
  const size = Math.max(1, Math.ceil(text.length / parts));
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

/**
 * A scripted reply as OpenAI streams it: the role, the content in word pieces, then per tool call a
 * delta with index, id, type and name (arguments ''), then its arguments in three fragments; a last
 * chunk with finish_reason; when the request asked for it (stream_options.include_usage) a chunk with
 * empty choices and the usage, as OpenAI sends it; and `data: [DONE]`.
 */
function streamReply(res: http.ServerResponse, content: string | null, toolCalls: ScriptedCall[] | undefined, usage: WireUsage | null): void {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const chunk = (delta: object, finish: string | null = null) =>
    res.write(`data: ${JSON.stringify({ id: 'scripted', object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`);
  chunk({ role: 'assistant', content: toolCalls ? null : '' });
  for (const text of content?.match(/\s*\S+/g) ?? []) chunk({ content: text });
  toolCalls?.forEach((c, index) => {
    chunk({ tool_calls: [{ index, id: c.id, type: 'function', function: { name: c.function.name, arguments: '' } }] });
    for (const fragment of pieces(c.function.arguments, 3)) chunk({ tool_calls: [{ index, function: { arguments: fragment } }] });
  });
  chunk({}, toolCalls ? 'tool_calls' : 'stop');
  if (usage) res.write(`data: ${JSON.stringify({ id: 'scripted', object: 'chat.completion.chunk', choices: [], usage })}\n\n`);
  res.end('data: [DONE]\n\n');
}

/**
 * An upstream that answers each request with the next reply of the loaded script (500 once it runs
 * out): a chat.completion, or its server-sent chunks when the request has `stream: true`.
 */
export async function scriptedUpstream() {
  const replies: ScriptedReply[] = [];
  const upstream = await fakeUpstream((body, _req, res) => {
    const next = replies.shift() ?? { status: 500 };
    if ('status' in next) {
      const headers = { 'content-type': 'application/json', ...(next.retryAfter ? { 'retry-after': String(next.retryAfter) } : {}) };
      return void res.writeHead(next.status, headers).end('{"error":{"message":"scripted failure"}}');
    }
    const toolCalls: ScriptedCall[] | undefined = next.tool_calls?.map((c, i) => ({
      id: c.id ?? `call_${Math.random().toString(36).slice(2, 8)}_${i}`,
      type: 'function',
      function: { name: c.name, arguments: JSON.stringify(c.arguments) },
    }));
    const usage: WireUsage | null =
      next.usage === null
        ? null
        : next.usage
          ? { ...next.usage, total_tokens: next.usage.prompt_tokens + next.usage.completion_tokens }
          : { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 };
    if (body.stream) return streamReply(res, next.content ?? null, toolCalls, body.stream_options?.include_usage ? usage : null);
    res.setHeader('content-type', 'application/json');
    res.end(
      JSON.stringify({
        id: 'scripted',
        object: 'chat.completion',
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: next.content ?? null, ...(toolCalls ? { tool_calls: toolCalls } : {}) },
            finish_reason: toolCalls ? 'tool_calls' : 'stop',
          },
        ],
        ...(usage ? { usage } : {}),
      }),
    );
  });
  return {
    ...upstream,
    /** Replaces the script and forgets the requests seen so far. */
    load(script: ScriptedReply[]) {
      replies.splice(0, replies.length, ...script);
      upstream.seen.length = 0;
    },
  };
}

/**
 * A customer's webhook: records each delivery (`raw`: the body as sent, which a signature covers);
 * `delayMs` holds the answer back (to time the sender out).
 */
export async function webhookReceiver(options: { delayMs?: number } = {}) {
  const received: { headers: http.IncomingHttpHeaders; body: unknown; raw: string }[] = [];
  const server = http.createServer(async (req, res) => {
    const raw = await readBody(req);
    received.push({ headers: req.headers, body: JSON.parse(raw), raw });
    setTimeout(() => res.writeHead(204).end(), options.delayMs ?? 0);
  });
  return { ...(await listen(server, '/hook')), received };
}

/** One part of a tool-calling run's report (domain/agent/report.ts), as a scripted model writes it. */
export interface ReportedPart {
  quote: string;
  asks?: 'effect' | 'information';
  status?: 'performed' | 'unresolved';
  calls?: string[];
  answer?: string;
  reason?: string;
}

/** A scripted model's final turn in a tool-calling run: the report, every field written out as structured outputs do. */
export function reportReply(...parts: ReportedPart[]): ScriptedReply {
  const full = parts.map((p) => ({ asks: 'information', status: 'performed', calls: [], answer: '', reason: '', ...p }));
  return { content: JSON.stringify({ parts: full }) };
}
