import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createTrellisClient } from '@trellis/sdk';
import { trellisMcpServer } from '@trellis/sdk/mcp';
import { trellisVersion } from '#platform/install-root.js';
import type { Req, Res } from '../request-context.js';

/** The headers that make a request the caller's own: who it is, and in which project. */
const callerHeaders = ['authorization', 'x-trellis-project'];

/** This API as the request reached it: the tools call it on the same socket's address. */
function apiUrlOf(req: Req): string {
  const { localAddress = '127.0.0.1', localPort } = req.socket;
  const host = localAddress.includes(':') ? `[${localAddress}]` : localAddress;
  return `http://${host}:${localPort}`;
}

/**
 * Answers one MCP request of an authenticated caller (streamable HTTP, stateless: each request
 * a server of its own). The tools are the SDK's, as `trellis mcp` serves them on stdio, and call
 * this API through the SDK with the caller's own `Authorization` and `X-Trellis-Project`: every
 * tool acts with exactly the caller's credentials and roles, and the API answers each call as it
 * answers that caller.
 */
export async function serveMcp(req: Req, res: Res): Promise<void> {
  const headers = Object.fromEntries(
    callerHeaders.flatMap((name) => {
      const value = req.headers[name];
      return typeof value === 'string' ? [[name, value]] : [];
    }),
  );
  const trellis = createTrellisClient({ baseUrl: apiUrlOf(req), headers });
  const server = trellisMcpServer(trellis, { version: trellisVersion });
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  res.on('close', () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res, req.body);
}
