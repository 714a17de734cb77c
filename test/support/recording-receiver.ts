/**
 * A local HTTP server (loopback only) that answers every request with the same JSON and records
 * the path of each: what tests point an HTTP task at to prove it was reached, or never was (a
 * dry run's, a test case's, a replay's).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordingReceiver {
  /** `http://127.0.0.1:<port>`. */
  origin: string;
  /** The path (with its query) of every request so far, in order. */
  received: string[];
  close(): Promise<void>;
}

export async function startRecordingReceiver(answer: unknown): Promise<RecordingReceiver> {
  const received: string[] = [];
  const body = JSON.stringify(answer);
  const server = createServer((req, res) => {
    received.push(req.url ?? '');
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
