/**
 * What the API does on the wire before any operation runs, through the real server: every answer
 * says `nosniff` and, for API data, `no-store`; a body past `Server.BodyLimitBytes` is refused as
 * soon as that is known (from its `Content-Length`, or once that many bytes came), signed in or
 * not, and the connection closes instead of reading the rest. Read with a raw socket, which
 * sends what a well-behaved client would not.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basicAuthorization } from '../../sdk/src/index.js';
import { startTrellis, users, type Trellis } from '../support/harness.js';

let trellis: Trellis;
beforeAll(async () => {
  trellis = await startTrellis();
});
afterAll(async () => {
  await trellis?.stop();
});

const admin = basicAuthorization(users.admin.username, users.admin.password);

/** An answer read off a raw socket: its status line, headers and body, and what was sent first. */
interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** Body bytes the client had handed to its socket when the answer's first byte came. */
  sentBeforeAnswer: number;
  /** Whether the client had sent every byte it meant to before the answer came. */
  finishedSending: boolean;
  /** Whether the server closed the connection after answering. */
  closedByServer: boolean;
}

/**
 * Sends `head` (request line and headers), then up to `bodyBytes` of body in 64 KiB pieces
 * (HTTP/1.1 chunks when `chunked`), as fast as the server takes them, until the server answers
 * or closes. Bounded: it never sends more than `bodyBytes`, and gives up after 30 s.
 */
function exchange(head: string, bodyBytes: number, chunked: boolean): Promise<RawAnswer> {
  const { port } = new URL(trellis.baseUrl);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), '127.0.0.1');
    let received = Buffer.alloc(0);
    let sent = 0;
    let sentBeforeAnswer = -1;
    let finishedSending = false;
    let closedByServer = false;
    const piece = Buffer.alloc(64 * 1024, 'x');
    const giveUp = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer within 30 s (${sent} body bytes sent)`));
    }, 30_000);

    socket.on('data', (data: Buffer) => {
      if (sentBeforeAnswer < 0) sentBeforeAnswer = sent;
      received = Buffer.concat([received, data]);
    });
    socket.on('end', () => {
      closedByServer = true;
    });
    // Writing into a connection the server closed: what the answer says matters, not this.
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(giveUp);
      const text = received.toString('latin1');
      const split = text.indexOf('\r\n\r\n');
      if (split < 0) {
        reject(new Error(`no answer (${sent} body bytes sent)`));
        return;
      }
      const [statusLine = '', ...headerLines] = text.slice(0, split).split('\r\n');
      const headers = Object.fromEntries(
        headerLines.map((line) => {
          const colon = line.indexOf(':');
          return [line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim()];
        }),
      );
      resolve({
        status: Number(statusLine.split(' ')[1]),
        headers,
        body: text.slice(split + 4),
        sentBeforeAnswer,
        finishedSending,
        closedByServer,
      });
    });

    const answered = () => sentBeforeAnswer >= 0 || socket.destroyed;
    const write = (data: Buffer | string) =>
      new Promise<void>((done) => {
        if (socket.write(data)) {
          done();
          return;
        }
        const settle = () => {
          socket.off('drain', settle);
          socket.off('data', settle);
          socket.off('close', settle);
          done();
        };
        socket.on('drain', settle);
        socket.on('data', settle);
        socket.on('close', settle);
      });
    socket.once('connect', () => {
      void (async () => {
        await write(head);
        while (sent < bodyBytes && !answered()) {
          await write(chunked ? Buffer.concat([chunkHead(piece.length), piece, crlf]) : piece);
          sent += piece.length;
        }
        if (chunked && !answered()) await write('0\r\n\r\n');
        if (!answered()) finishedSending = true;
        // Without Connection: close from the server the socket stays open: it is ours to end.
        setTimeout(() => socket.end(), 2_000).unref();
      })();
    });
  });
}

const crlf = Buffer.from('\r\n');
const chunkHead = (size: number) => Buffer.from(`${size.toString(16)}\r\n`);

function post(path: string, headers: string[]): string {
  return [`POST ${path} HTTP/1.1`, 'Host: 127.0.0.1', ...headers, '', ''].join('\r\n');
}

const fiftyMegabytes = 50 * 1024 * 1024;

function expectTooLarge(answer: RawAnswer, limit: number) {
  expect(answer.status).toBe(413);
  expect(answer.headers['connection']).toBe('close');
  expect(answer.closedByServer).toBe(true);
  expect(JSON.parse(answer.body)).toMatchObject({
    data: null,
    succeeded: false,
    errors: [
      {
        code: 'request.too_large',
        message: `The request body is larger than ${limit} bytes (Server.BodyLimitBytes): send a smaller one.`,
      },
    ],
  });
}

describe('a body past Server.BodyLimitBytes', () => {
  it('is refused (413, connection closed) once the limit is passed, long before a chunked upload ends, signed in or not', async () => {
    const limit = trellis.config.Server.BodyLimitBytes;
    for (const authorization of [[], [`Authorization: ${admin}`]]) {
      const answer = await exchange(
        post('/workflows', [
          ...authorization,
          'Content-Type: application/json',
          'Transfer-Encoding: chunked',
        ]),
        fiftyMegabytes,
        true,
      );
      expectTooLarge(answer, limit);
      expect(answer.finishedSending).toBe(false);
      // The limit, and what socket buffers on both sides hold: not the 50 MB.
      expect(answer.sentBeforeAnswer).toBeGreaterThan(limit);
      expect(answer.sentBeforeAnswer).toBeLessThan(fiftyMegabytes / 2);
    }
  });

  it('is refused from its Content-Length before a byte of it is sent, whatever its type', async () => {
    const limit = trellis.config.Server.BodyLimitBytes;
    for (const headers of [
      ['Content-Type: application/json'],
      ['Content-Type: text/plain'],
      [`Authorization: ${admin}`, 'Content-Type: application/json'],
    ]) {
      const answer = await exchange(
        post('/workflows', [...headers, `Content-Length: ${10 * 1024 * 1024 * 1024}`]),
        0,
        false,
      );
      expectTooLarge(answer, limit);
      expect(answer.sentBeforeAnswer).toBe(0);
    }
  });

  it('leaves a body within the limit to the operation', async () => {
    const answer = await exchange(
      post('/workflows', [
        `Authorization: ${admin}`,
        'Content-Type: application/json',
        'Content-Length: 2',
        'Connection: close',
      ]) + '{}',
      0,
      false,
    );
    expect(answer.status).toBe(400);
  });
});

describe('every answer', () => {
  it('says nosniff, and no-store for API data, errors included', async () => {
    const asAdmin = { authorization: admin };
    for (const [path, headers, status] of [
      ['/version', {}, 200],
      ['/workflows', asAdmin, 200],
      ['/workflows', {}, 401],
      ['/workflows/not-a-uuid', asAdmin, 400],
      ['/no/such/route', asAdmin, 404],
      ['/openapi.json', {}, 200],
      ['/docs', {}, 200],
    ] as const) {
      const response = await fetch(`${trellis.baseUrl}${path}`, { headers });
      await response.arrayBuffer();
      expect([path, response.status]).toEqual([path, status]);
      expect([path, response.headers.get('x-content-type-options')]).toEqual([path, 'nosniff']);
      expect([path, response.headers.get('cache-control')]).toEqual([path, 'no-store']);
    }
  });

  it('lets static files of the reference keep their caching, still nosniff', async () => {
    const response = await fetch(`${trellis.baseUrl}/docs/swagger-ui.css`);
    await response.arrayBuffer();
    expect(response.status).toBe(200);
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('cache-control')).toBe('public, max-age=0');
    const missing = await fetch(`${trellis.baseUrl}/docs/no-such-file.css`);
    await missing.arrayBuffer();
    expect(missing.status).toBe(404);
    expect(missing.headers.get('cache-control')).toBe('no-store');
  });
});
