import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

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
