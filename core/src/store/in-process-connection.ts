import { Duplex } from 'node:stream';
import type { PGlite } from '@electric-sql/pglite';

/**
 * The embedded database without an address: a `pg` connection whose "socket" is a stream into
 * the PGlite instance of this process. Nothing listens on a port or a Unix socket, so no other
 * process — a plugin's sandbox, another program of the same OS user — can connect, with or
 * without a credential; only code in this process holding the pool reaches it.
 *
 * pg writes PostgreSQL frontend messages to the stream; each whole message goes to
 * `execProtocolRawStream` and the backend's answer is pushed back, as a server socket would.
 * PGlite is one backend session: every connection made here shares it, so the pool must hold
 * one connection (see `openEmbedded`).
 */
export function inProcessConnection(pglite: PGlite): () => Duplex {
  return () => new PGliteStream(pglite);
}

// Requests sent before a session starts, in place of a startup message's protocol version.
const sslRequest = 80877103;
const gssEncryptionRequest = 80877104;
const cancelRequest = 80877102;
const terminate = 'X'.charCodeAt(0);

/** The client's end of a connection, shaped as the `net.Socket` pg expects. */
class PGliteStream extends Duplex {
  readonly #pglite: PGlite;
  #received = Buffer.alloc(0);
  #started = false;

  constructor(pglite: PGlite) {
    super();
    this.#pglite = pglite;
  }

  // The socket methods pg calls: connecting is immediate, the rest has no meaning here.
  connect(): this {
    setImmediate(() => this.emit('connect'));
    return this;
  }
  setNoDelay(): this {
    return this;
  }
  setKeepAlive(): this {
    return this;
  }
  ref(): this {
    return this;
  }
  unref(): this {
    return this;
  }

  override _read(): void {}

  /** Runs each whole message in order; pg's next write waits until the backend answered. */
  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (error?: Error) => void): void {
    this.#received = Buffer.concat([this.#received, chunk]);
    this.#runMessages().then(() => done(), done);
  }

  override _final(done: (error?: Error) => void): void {
    this.#rollBackOpenTransaction().then(() => {
      this.push(null);
      done();
    }, done);
  }

  override _destroy(error: Error | null, done: (error: Error | null) => void): void {
    this.#rollBackOpenTransaction().then(
      () => done(error),
      () => done(error),
    );
  }

  async #runMessages(): Promise<void> {
    for (let message = this.#nextMessage(); message; message = this.#nextMessage()) {
      if (!this.#started) {
        const code = message.readInt32BE(4);
        // No TLS between two parts of one process: 'N' tells pg to go on in the clear.
        if (code === sslRequest || code === gssEncryptionRequest) this.push(Buffer.from('N'));
        if (code === sslRequest || code === gssEncryptionRequest || code === cancelRequest) {
          continue;
        }
        this.#started = true;
      } else if (message[0] === terminate) {
        // The session is shared: closing this connection must not end it.
        continue;
      }
      await this.#pglite.runExclusive(() =>
        this.#pglite.execProtocolRawStream(new Uint8Array(message), {
          onRawData: (data) => this.push(Buffer.from(data)),
        }),
      );
    }
  }

  /** The next whole message received, or undefined while it is still incomplete. */
  #nextMessage(): Buffer | undefined {
    const buffer = this.#received;
    // Before the session a message is length + body; after it, a type byte comes first.
    const headerBytes = this.#started ? 5 : 4;
    if (buffer.length < headerBytes) return undefined;
    const length = this.#started ? 1 + buffer.readInt32BE(1) : buffer.readInt32BE(0);
    if (buffer.length < length) return undefined;
    this.#received = buffer.subarray(length);
    return buffer.subarray(0, length);
  }

  /** A connection that goes away inside a transaction leaves the shared session clean. */
  async #rollBackOpenTransaction(): Promise<void> {
    if (!this.#started || this.#pglite.closed) return;
    // `exec` takes PGlite's own locks, so it runs outside `runExclusive` (which holds one).
    if (this.#pglite.isInTransaction()) await this.#pglite.exec('rollback');
  }
}
