// A fake Temporal frontend that records how clients reach it: one port that speaks gRPC over
// plaintext HTTP/2 and over TLS (told apart by the first byte), asking TLS clients for a
// certificate (mTLS). For each call it keeps the transport, the SNI name, the client
// certificate's CN and the headers; for each refused handshake, the SNI name.
// GetSystemInfo is answered (empty) unless `refuseSystemInfo`; every other call fails
// UNIMPLEMENTED: a client's connection is seen, nothing more happens.
import { readFileSync } from 'node:fs';
import http2 from 'node:http2';
import net from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { TestPki } from './test-certificates.ts';

export interface FrontendCall {
  transport: 'tls' | 'plain';
  sni: string | null;
  /** CN of the client's certificate (mTLS), or null. */
  clientCert: string | null;
  method: string;
  headers: Record<string, string>;
}

export interface FakeFrontend {
  address: string;
  calls: FrontendCall[];
  /** TLS handshakes that failed (the client did not trust the server, say): their SNI name. */
  refusedHandshakes: { sni: string | null }[];
  /** GetSystemInfo answers UNAUTHENTICATED while true (a worker's connect then fails at once). */
  refuseSystemInfo: boolean;
  close(): Promise<void>;
}

const GRPC_OK = '0';
const GRPC_UNIMPLEMENTED = '12';
const GRPC_UNAUTHENTICATED = '16';

function tlsDetails(session: http2.Http2Session): Pick<FrontendCall, 'transport' | 'sni' | 'clientCert'> {
  if (!session.encrypted) return { transport: 'plain', sni: null, clientCert: null };
  const tls = session.socket as TLSSocket;
  const cn = tls.getPeerCertificate()?.subject?.CN;
  return { transport: 'tls', sni: tls.servername || null, clientCert: typeof cn === 'string' ? cn : null };
}

export async function startFakeFrontend(pki: TestPki): Promise<FakeFrontend> {
  const calls: FrontendCall[] = [];
  const refusedHandshakes: { sni: string | null }[] = [];
  const frontend = { refuseSystemInfo: false };
  const onStream = (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders) => {
    const method = String(headers[':path']).split('/').pop() ?? '';
    const plainHeaders = Object.fromEntries(Object.entries(headers).filter((e): e is [string, string] => typeof e[1] === 'string'));
    calls.push({ ...tlsDetails(stream.session!), method, headers: plainHeaders });
    stream.on('data', () => {});
    stream.on('end', () => {
      const answer = method === 'GetSystemInfo' && !frontend.refuseSystemInfo;
      const status = method === 'GetSystemInfo' ? (answer ? GRPC_OK : GRPC_UNAUTHENTICATED) : GRPC_UNIMPLEMENTED;
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
      stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': status, 'grpc-message': 'fake frontend' }));
      // An empty GetSystemInfoResponse: one uncompressed gRPC message of length 0.
      stream.end(answer ? Buffer.alloc(5) : undefined);
    });
    stream.on('error', () => {});
  };
  const secure = http2.createSecureServer({
    cert: readFileSync(pki.serverCert),
    key: readFileSync(pki.serverKey),
    ca: readFileSync(pki.caCert),
    requestCert: true,
    rejectUnauthorized: false,
  });
  secure.on('stream', onStream);
  secure.on('tlsClientError', (_err, socket) => refusedHandshakes.push({ sni: socket.servername || null }));
  const plain = http2.createServer();
  plain.on('stream', onStream);
  const sockets = new Set<net.Socket>();
  const front = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    // A TLS ClientHello starts with 0x16; an HTTP/2 preface with "P".
    socket.once('readable', () => {
      const first = socket.read(1) as Buffer | null;
      if (!first) return socket.destroy();
      socket.unshift(first);
      (first[0] === 0x16 ? secure : plain).emit('connection', socket);
    });
  });
  await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
  const { port } = front.address() as net.AddressInfo;
  return Object.assign(frontend, {
    address: `127.0.0.1:${port}`,
    calls,
    refusedHandshakes,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        front.close(() => resolve());
      }),
  });
}
