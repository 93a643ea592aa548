// A gRPC proxy in front of the real Temporal frontend (plaintext HTTP/2) that passes every call
// through, except the next `n` calls of a method it is told to fail: those are answered with a
// gRPC status of the test's choosing (a trailers-only response, as a server sends it), without
// reaching Temporal. For the answers a real server gives only under conditions a test cannot
// make on demand, such as FAILED_PRECONDITION "workflow not ready" under an overloaded worker.
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';

export interface GrpcFaultProxy {
  address: string;
  /** Answers the next `times` calls of `method` (e.g. UpdateWorkflowExecution) with `code` and `message`. */
  failNext(method: string, times: number, code: number, message: string): void;
  /** How many calls of `method` arrived, failed or passed on. */
  calls(method: string): number;
  close(): Promise<void>;
}

const HOP_BY_HOP = new Set([':status', 'connection', 'keep-alive', 'transfer-encoding']);
const forwardable = (headers: http2.IncomingHttpHeaders) =>
  Object.fromEntries(Object.entries(headers).filter(([name, value]) => value !== undefined && !HOP_BY_HOP.has(name)));

export async function startGrpcFaultProxy(upstreamAddress: string): Promise<GrpcFaultProxy> {
  const upstream = http2.connect(`http://${upstreamAddress}`);
  upstream.on('error', () => {});
  const faults = new Map<string, { times: number; code: number; message: string }>();
  const counts = new Map<string, number>();

  const server = http2.createServer();
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on('session', (session) => {
    sessions.add(session);
    session.on('close', () => sessions.delete(session));
  });
  server.on('stream', (stream, headers) => {
    stream.on('error', () => {});
    const method = String(headers[':path']).split('/').pop() ?? '';
    counts.set(method, (counts.get(method) ?? 0) + 1);
    const fault = faults.get(method);
    if (fault && fault.times > 0) {
      fault.times -= 1;
      stream.resume();
      stream.respond(
        { ':status': 200, 'content-type': 'application/grpc', 'grpc-status': String(fault.code), 'grpc-message': fault.message },
        { endStream: true },
      );
      return;
    }
    const call = upstream.request(forwardable(headers));
    call.on('error', () => stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR));
    let trailers: http2.OutgoingHttpHeaders = {};
    call.on('trailers', (t) => (trailers = forwardable(t)));
    call.on('response', (responseHeaders) => {
      // A trailers-only answer carries its status in the headers and ends at once.
      if (responseHeaders['grpc-status'] !== undefined) {
        stream.respond({ ...forwardable(responseHeaders), ':status': 200 }, { endStream: true });
        return;
      }
      stream.respond({ ...forwardable(responseHeaders), ':status': 200 }, { waitForTrailers: true });
      stream.on('wantTrailers', () => stream.sendTrailers(trailers));
      call.pipe(stream);
    });
    stream.pipe(call);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));

  return {
    address: `127.0.0.1:${(server.address() as AddressInfo).port}`,
    failNext: (method, times, code, message) => faults.set(method, { times, code, message }),
    calls: (method) => counts.get(method) ?? 0,
    async close() {
      for (const session of sessions) session.destroy();
      upstream.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
