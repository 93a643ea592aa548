// Serves the process's embedded PGlite to the admin CLIs (`npm run keys|credits|tenants`)
// on a Unix socket, in the Postgres wire protocol, so they can work beside a running
// service: they connect with `pg`, the service keeps using its PGlite in process.
//
// PGlite is one Postgres session. Its own query()/transaction() take its transaction
// mutex, so the service's statements and transactions never interleave with each other.
// A socket client takes that same mutex from its first message until PGlite answers
// ReadyForQuery "idle": a whole extended-protocol exchange (Parse … Sync) or a whole
// transaction (BEGIN … COMMIT) runs alone, and between them the service runs. (The
// PGLiteSocketServer of @electric-sql/pglite-socket takes only PGlite's query mutex, so
// its clients' messages could land inside the service's transactions and the service's
// queries between a client's Parse and Bind; hence this server.) A client that holds the
// mutex longer than `maxHoldMs` is disconnected; its open transaction is rolled back.
import { chmodSync, mkdirSync, rmSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { PGlite } from '@electric-sql/pglite';

/** Postgres' socket file name: `pg` reaches it with `host: <its directory>`, `port: 5432`. */
export const ADMIN_SOCKET_PORT = 5432;
export const ADMIN_SOCKET_NAME = `.s.PGSQL.${ADMIN_SOCKET_PORT}`;

const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;
const CANCEL_REQUEST = 80877102;
const MAX_MESSAGE_BYTES = 256 * 1024 * 1024;
const SYNC = Uint8Array.from([0x53, 0, 0, 0, 4]);
const ROLLBACK = (() => {
  const text = Buffer.from('ROLLBACK\0');
  const msg = Buffer.alloc(5 + text.length);
  msg.write('Q', 0);
  msg.writeInt32BE(4 + text.length, 1);
  text.copy(msg, 5);
  return new Uint8Array(msg);
})();

export interface AdminSocketServer {
  /** The socket file. */
  path: string;
  /** Disconnects every client (rolling back what they left open), stops listening, removes the socket file. */
  close(): Promise<void>;
}

export interface AdminSocketOptions {
  /** Longest a client may hold the database without reaching an idle ReadyForQuery. */
  maxHoldMs?: number;
  maxConnections?: number;
  onError?: (err: Error) => void;
}

/** Holds PGlite's transaction mutex (what its query()/exec()/transaction() take) until release() is called. */
function holdTransactionMutex(db: PGlite): Promise<() => void> {
  return new Promise((acquired, failed) => {
    db._runExclusiveTransaction(() => new Promise<void>((release) => acquired(release))).catch(failed);
  });
}

/** Runs one wire message; returns the transaction status of a trailing ReadyForQuery ('I', 'T', 'E'), if any. */
async function run(db: PGlite, message: Uint8Array, send: (bytes: Uint8Array) => void): Promise<string | undefined> {
  let tail = Buffer.alloc(0);
  await db._runExclusiveQuery(() =>
    db.execProtocolRawStream(message, {
      onRawData: (bytes) => {
        if (bytes.length === 0) return;
        send(bytes);
        tail = Buffer.concat([tail, Buffer.from(bytes)]).subarray(-6);
      },
    }),
  );
  // ReadyForQuery is the last message of its answer: 'Z', int32 5, status byte.
  if (tail.length === 6 && tail[0] === 0x5a && tail.readInt32BE(1) === 5) return String.fromCharCode(tail[5]!);
  return undefined;
}

class Connection {
  private buffer = Buffer.alloc(0);
  private started = false;
  private chain: Promise<void> = Promise.resolve();
  private release: (() => void) | undefined;
  private holdTimer: NodeJS.Timeout | undefined;
  private closed = false;
  /** Resolves once the connection is gone and holds nothing. */
  readonly done: Promise<void>;
  private finish!: () => void;

  constructor(
    private readonly db: PGlite,
    private readonly socket: net.Socket,
    private readonly maxHoldMs: number,
    private readonly onError: (err: Error) => void,
  ) {
    this.done = new Promise((resolve) => (this.finish = resolve));
    socket.on('data', (data) => this.receive(data));
    socket.on('error', () => this.close());
    socket.on('close', () => this.close());
  }

  private receive(data: Buffer): void {
    this.buffer = Buffer.concat([this.buffer, data]);
    for (;;) {
      if (this.closed) return;
      const headerBytes = this.started ? 5 : 4;
      if (this.buffer.length < headerBytes) return;
      const length = this.started ? 1 + this.buffer.readInt32BE(1) : this.buffer.readInt32BE(0);
      if (length < headerBytes || length > MAX_MESSAGE_BYTES) {
        this.close();
        return;
      }
      if (this.buffer.length < length) return;
      const message = this.buffer.subarray(0, length);
      this.buffer = this.buffer.subarray(length);
      if (!this.started) {
        const code = message.length >= 8 ? message.readInt32BE(4) : 0;
        if (code === SSL_REQUEST || code === GSSENC_REQUEST) {
          this.socket.write('N');
          continue;
        }
        if (code === CANCEL_REQUEST) {
          this.close(); // PGlite has no backend to cancel
          return;
        }
        this.started = true;
      } else if (message[0] === 0x58) {
        this.close(); // Terminate
        return;
      }
      const copy = new Uint8Array(message);
      this.chain = this.chain.then(() => this.execute(copy));
    }
  }

  private async execute(message: Uint8Array): Promise<void> {
    if (this.closed) return;
    if (!this.release) {
      const release = await holdTransactionMutex(this.db);
      if (this.closed) return release();
      this.release = release;
      this.holdTimer = setTimeout(() => {
        this.onError(new Error(`admin connection held the database over ${this.maxHoldMs} ms; disconnected`));
        this.close();
      }, this.maxHoldMs);
    }
    let status: string | undefined;
    try {
      status = await run(this.db, message, (bytes) => {
        if (!this.closed) this.socket.write(bytes);
      });
    } catch (err) {
      this.onError(err as Error);
      return this.close();
    }
    if (status === 'I') this.letGo();
  }

  private letGo(): void {
    clearTimeout(this.holdTimer);
    const release = this.release;
    this.release = undefined;
    release?.();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.socket.destroy();
    // After whatever is running: end an unfinished exchange and roll back an open transaction.
    this.chain = this.chain
      .then(async () => {
        if (!this.release) return;
        const status = await run(this.db, SYNC, () => {});
        if (status !== 'I') await run(this.db, ROLLBACK, () => {});
      })
      .catch((err: Error) => this.onError(err))
      .finally(() => {
        this.letGo();
        this.finish();
      });
  }
}

/**
 * Listens on `socketPath` (its directory is created private to this user; a leftover
 * socket file is removed: the caller holds the data-dir lock, so nobody else serves it).
 */
export async function serveAdminSocket(db: PGlite, socketPath: string, options: AdminSocketOptions = {}): Promise<AdminSocketServer> {
  const maxHoldMs = options.maxHoldMs ?? 30_000;
  const onError = options.onError ?? (() => {});
  const dir = path.dirname(socketPath);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  rmSync(socketPath, { force: true });
  await db.waitReady;
  const connections = new Set<Connection>();
  const server = net.createServer((socket) => {
    const connection = new Connection(db, socket, maxHoldMs, onError);
    connections.add(connection);
    void connection.done.then(() => connections.delete(connection));
  });
  server.maxConnections = options.maxConnections ?? 16;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => {
      server.off('error', reject);
      resolve();
    });
  });
  chmodSync(socketPath, 0o600);
  server.on('error', onError);
  return {
    path: socketPath,
    async close() {
      const closing = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const connection of connections) connection.close();
      await Promise.all([...connections].map((c) => c.done));
      await closing;
      rmSync(socketPath, { force: true });
    },
  };
}
