import type { Server } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';

/** An HTTP server listening, the URL it is reached at, and how to stop it. */
export interface Listening {
  url: string;
  /** Stops accepting connections, closes idle keep-alive ones and waits for the rest. */
  close(): Promise<void>;
}

/**
 * Starts `server` on `host:port` (port 0 picks a free one). A server on every address
 * (`0.0.0.0`, `::`) is reached at `localhost`.
 */
export async function listen(server: Server, host: string, port: number): Promise<Listening> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = (server.address() as AddressInfo).port;
  const name = host === '0.0.0.0' || host === '::' || host === '' ? 'localhost' : host;
  return {
    url: `http://${name.includes(':') ? `[${name}]` : name}:${bound}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeIdleConnections();
      }),
  };
}

/** Whether another program listens on `host:port` now: binding there fails with EADDRINUSE. */
export function isPortTaken(host: string, port: number): Promise<boolean> {
  const probe = createServer();
  return new Promise((resolve, reject) => {
    probe.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EADDRINUSE') resolve(true);
      else reject(error);
    });
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve(false)));
  });
}
