/**
 * Issue 13: Trellis on a Temporal cluster that needs TLS or mutual TLS. The test dev server
 * speaks plain gRPC, so a TLS-terminating proxy written here stands in front of it, as a load
 * balancer or Temporal Cloud's edge would: the client and the worker both go through it.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createServer, type Server, type TlsOptions } from 'node:tls';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildConfig } from '#platform/config/load.js';
import { Invalid, Unavailable } from '#definition/errors.js';
import { createLogger } from '#platform/logging.js';
import { connectTemporal, temporalConnectionOptions } from '#platform/temporal/connection.js';
import { startTrellis } from '../support/harness.js';
import { testServices } from '../support/services.js';
import { definition } from '../support/engine-support.js';

const run = promisify(execFile);
let folder: string;
/** PEM files: a CA, a server certificate for localhost signed by it, and a client certificate. */
const pem = (name: string) => path.join(folder, name);

/** An openssl-made CA with a server and a client certificate (rustls wants SANs and key usages). */
async function makeCertificates(): Promise<void> {
  const openssl = (...args: string[]) => run('openssl', args, { cwd: folder });
  await openssl(
    ...['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'],
    ...['-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=Trellis test CA'],
    ...['-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign'],
  );
  for (const [name, usage, san] of [
    ['server', 'serverAuth', 'subjectAltName=DNS:localhost,IP:127.0.0.1'],
    ['client', 'clientAuth', 'subjectAltName=DNS:trellis-worker'],
  ] as const) {
    await openssl(
      ...['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'],
      ...['-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${name}`],
    );
    await writeFile(
      pem(`${name}.ext`),
      `basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=${usage}\n${san}\n`,
    );
    await openssl(
      ...['x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.pem', '-CAkey', 'ca.key'],
      ...['-CAcreateserial', '-out', `${name}.pem`, '-days', '2', '-extfile', `${name}.ext`],
    );
  }
}

/** A TLS server on 127.0.0.1 that passes each connection's bytes to the dev server. */
async function startProxy(options: TlsOptions): Promise<{ address: string; server: Server }> {
  const [host, port] = testServices().temporalAddress.split(':');
  const sockets = new Set<Socket>();
  const server = createServer({ ALPNProtocols: ['h2'], ...options }, (client) => {
    const upstream = connect(Number(port), host);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  server.on('close', () => sockets.forEach((socket) => socket.destroy()));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { address: `127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

const proxies: Server[] = [];
beforeAll(async () => {
  folder = await mkdtemp(path.join(tmpdir(), 'trellis-tls-'));
  await makeCertificates();
});
afterAll(async () => {
  for (const server of proxies) server.close();
  if (folder) await rm(folder, { recursive: true, force: true });
});

async function proxy(options: TlsOptions) {
  const started = await startProxy({
    key: await readFile(pem('server.key')),
    cert: await readFile(pem('server.pem')),
    ...options,
  });
  proxies.push(started.server);
  return started.address;
}

/** Starts Trellis (API and worker) on `Temporal`, runs a one-task workflow, stops; its status. */
async function runThrough(temporal: Record<string, unknown>): Promise<string> {
  const trellis = await startTrellis({ worker: true, config: { Temporal: temporal } });
  try {
    const { id: workflowId } = await trellis.admin.POST('/workflows/Add', {
      body: {
        definition: JSON.stringify(definition([{ name: 'Only', type: { plugin: 'Flow/NoOp' } }])),
      },
    });
    const { executionId } = await trellis.admin.POST('/workflows/{workflowId}/executions', {
      params: { path: { workflowId } },
      body: { workflowId },
    });
    const execution = await trellis.admin.waitForExecution(workflowId, executionId, {
      timeoutMs: 60_000,
    });
    return execution.status;
  } finally {
    await trellis.stop();
  }
}

const silent = createLogger({ Level: 'silent' });
const settings = (Address: string, Tls: Record<string, unknown>) =>
  buildConfig({ Temporal: { Address, Tls } }).Temporal;

describe('Temporal over TLS', () => {
  it('runs a workflow through a TLS-only endpoint with the server CA, and refuses an untrusted one', async () => {
    const address = await proxy({});
    expect(await runThrough({ Address: address, Tls: { ServerRootCaFile: pem('ca.pem') } })).toBe(
      'Completed',
    );

    // Without the CA the server's certificate is not trusted; in the clear nothing answers.
    await expect(connectTemporal(settings(address, { Enabled: true }), silent)).rejects.toThrow(
      Unavailable,
    );
    await expect(connectTemporal(settings(address, {}), silent)).rejects.toThrow(Unavailable);
  });

  it('runs a workflow with mutual TLS, and a client without its certificate is refused', async () => {
    const address = await proxy({
      requestCert: true,
      rejectUnauthorized: true,
      ca: await readFile(pem('ca.pem')),
    });
    const mutual = {
      ServerRootCaFile: pem('ca.pem'),
      ClientCertFile: pem('client.pem'),
      ClientKeyFile: pem('client.key'),
    };
    expect(await runThrough({ Address: address, Tls: mutual })).toBe('Completed');

    const withoutCertificate = { ServerRootCaFile: pem('ca.pem') };
    await expect(connectTemporal(settings(address, withoutCertificate), silent)).rejects.toThrow(
      Unavailable,
    );
  });
});

describe('Temporal connection settings', () => {
  it('turns TLS on for an API key or TLS files, and says which file it cannot read', async () => {
    const plain = await temporalConnectionOptions(settings('temporal:7233', {}));
    expect(plain).toEqual({ address: 'temporal:7233' });

    const cloud = await temporalConnectionOptions({
      ...settings('ns.a1b2c.tmprl.cloud:7233', {}),
      ApiKey: 'key-123',
    });
    expect(cloud).toEqual({ address: 'ns.a1b2c.tmprl.cloud:7233', tls: {}, apiKey: 'key-123' });

    const named = await temporalConnectionOptions(
      settings('10.0.0.5:7233', {
        ServerName: 'temporal.internal',
        ServerRootCaFile: pem('ca.pem'),
      }),
    );
    expect(named.tls?.serverNameOverride).toBe('temporal.internal');
    expect(Buffer.from(named.tls!.serverRootCACertificate!).toString()).toContain(
      'BEGIN CERTIFICATE',
    );

    await expect(
      temporalConnectionOptions(settings('t:7233', { ServerRootCaFile: pem('missing.pem') })),
    ).rejects.toThrow(Invalid);
    await expect(
      temporalConnectionOptions(settings('t:7233', { ServerRootCaFile: pem('missing.pem') })),
    ).rejects.toMatchObject({
      message: `Temporal.Tls.ServerRootCaFile: cannot read ${pem('missing.pem')} (ENOENT: no such file or directory, open '${pem('missing.pem')}')`,
      problems: [{ code: 'validation.invalid', path: 'Temporal.Tls.ServerRootCaFile' }],
    });
  });

  it('refuses half a client certificate, and TLS settings that Enabled: false would ignore', () => {
    expect(() => settings('t:7233', { ClientCertFile: 'client.pem' })).toThrow(
      /Temporal.Tls: ClientCertFile and ClientKeyFile go together/,
    );
    expect(() => settings('t:7233', { Enabled: false, ServerName: 'x' })).toThrow(
      /Temporal.Tls: Enabled is false/,
    );
  });
});
