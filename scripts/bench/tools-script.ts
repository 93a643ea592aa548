// Row 13's scripted capable model, on the wire (OpenAI chat completions, no stream): for a tool-calling
// run of TOOL_RUN_INPUT it makes two read calls (calculate, count_list_items), then one external call
// (webhook_delivery), then its report; a turn is found from the assistant messages so far, so both
// sides of the row get the same replies. Served in the bench's own process for both sides alike.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export const TOOL_RUN_INPUT = 'Sum these and tell payroll the result: 12, 30, 8.';

const TURNS = [
  {
    tool_calls: [
      { id: 'c1', type: 'function', function: { name: 'calculate', arguments: JSON.stringify({ expression: '12 + 30 + 8' }) } },
      { id: 'c2', type: 'function', function: { name: 'count_list_items', arguments: JSON.stringify({ items: ['12', '30', '8'] }) } },
    ],
  },
  {
    tool_calls: [
      { id: 'c3', type: 'function', function: { name: 'webhook_delivery', arguments: JSON.stringify({ to: 'payroll', message: 'The total is 50.' }) } },
    ],
  },
  {
    content: JSON.stringify({
      parts: [{ quote: TOOL_RUN_INPUT, asks: 'effect', status: 'performed', calls: ['c1', 'c2', 'c3'], answer: '', reason: '' }],
    }),
  },
];

/** The scripted model and a webhook receiver (204 to every delivery), on loopback ports of their own. */
export async function startToolScript(): Promise<{ upstreamUrl: string; hookUrl: string; stop(): Promise<void> }> {
  const read = (req: http.IncomingMessage) =>
    new Promise<string>((resolve) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => resolve(body));
    });
  const model = http.createServer(async (req, res) => {
    const body = JSON.parse(await read(req)) as { messages: { role: string }[] };
    const turn = TURNS[body.messages.filter((m) => m.role === 'assistant').length] ?? TURNS.at(-1)!;
    const message = { role: 'assistant', content: null, ...turn };
    res.setHeader('content-type', 'application/json');
    res.end(
      JSON.stringify({
        id: 'bench',
        object: 'chat.completion',
        choices: [{ index: 0, message, finish_reason: 'tool_calls' in turn ? 'tool_calls' : 'stop' }],
        usage: { prompt_tokens: 200, completion_tokens: 40, total_tokens: 240 },
      }),
    );
  });
  const hook = http.createServer(async (req, res) => {
    await read(req);
    res.writeHead(204).end();
  });
  const listen = async (s: http.Server) => {
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    return (s.address() as AddressInfo).port;
  };
  const [m, h] = [await listen(model), await listen(hook)];
  const close = (s: http.Server) =>
    new Promise<void>((r) => {
      s.closeAllConnections();
      s.close(() => r());
    });
  return {
    upstreamUrl: `http://127.0.0.1:${m}/v1`,
    hookUrl: `http://127.0.0.1:${h}/hook`,
    stop: async () => void (await Promise.all([close(model), close(hook)])),
  };
}
