/**
 * A local HTTP server (loopback only) answering each path from a script of responses, and
 * recording when each request arrived: the engine tests' stand-in for a flaky remote service.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ScriptedResponse {
  status: number;
  body?: unknown;
}

export interface ScriptedServer {
  url: string;
  /** The responses of a path, in order; the last one repeats. */
  script(path: string, responses: ScriptedResponse[]): void;
  /** Arrival times (ms since epoch) of the requests to a path. */
  hits(path: string): number[];
  /** The JSON bodies received on a path. */
  bodies(path: string): unknown[];
  close(): Promise<void>;
}

export async function startScriptedServer(): Promise<ScriptedServer> {
  const scripts = new Map<string, ScriptedResponse[]>();
  const hits = new Map<string, number[]>();
  const bodies = new Map<string, unknown[]>();
  const respond = async (req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    const arrived = Date.now();
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const seen = hits.get(path) ?? [];
    seen.push(arrived);
    hits.set(path, seen);
    if (text) bodies.set(path, [...(bodies.get(path) ?? []), JSON.parse(text) as unknown]);
    const script = scripts.get(path) ?? [{ status: 404, body: { error: 'no script' } }];
    const response = script[Math.min(seen.length - 1, script.length - 1)]!;
    res.writeHead(response.status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(response.body ?? {}));
  };
  const server = createServer((req, res) => {
    respond(req, res).catch((error: unknown) => res.destroy(error as Error));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    script: (path, responses) => scripts.set(path, responses),
    hits: (path) => hits.get(path) ?? [],
    bodies: (path) => bodies.get(path) ?? [],
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
