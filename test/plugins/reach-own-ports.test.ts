/**
 * Issue 27, item 8: every port Trellis's processes listen on is refused to plugins, through every
 * address that reaches it, even where the installation allows loopback as the README shows. Here
 * Trellis runs as `npm start` does (its own embedded Temporal dev server, whose internal services
 * pick their own ports), with the API on 0.0.0.0 and metrics on (the Temporal SDK core serves them
 * on a port of its own). The ports are found as an operator would, with `ss` and `ps`.
 */
import { execFileSync } from 'node:child_process';
import { networkInterfaces } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTrellis, type Trellis } from '../support/harness.js';
import { definition, run, tasksOf } from '../support/engine-support.js';

let trellis: Trellis;

beforeAll(async () => {
  trellis = await startTrellis({
    worker: true,
    config: {
      Server: { Host: '0.0.0.0' },
      Temporal: { Address: undefined, Port: 0, UiPort: 0 },
      Metrics: { Enabled: true },
      Plugins: { Network: { AllowCidrs: ['127.0.0.0/8'] } },
    },
  });
});
afterAll(async () => {
  await trellis?.stop();
});

/** This test process and every process below it. */
function processTree(): number[] {
  const parents = execFileSync('ps', ['-e', '-o', 'pid=,ppid='], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .map((line) => line.trim().split(/\s+/).map(Number) as [number, number]);
  const tree = [process.pid];
  for (let i = 0; i < tree.length; i++) {
    tree.push(...parents.filter(([, parent]) => parent === tree[i]).map(([pid]) => pid));
  }
  return tree;
}

/** The TCP ports the given processes listen on, by `ss -ltnp`. */
function listeningPorts(pids: number[]): number[] {
  const lines = execFileSync('ss', ['-ltnpH'], { encoding: 'utf8' }).trim().split('\n');
  const ports = lines
    .filter((line) => pids.some((pid) => line.includes(`pid=${pid},`)))
    .map((line) => Number(line.trim().split(/\s+/)[3]!.split(':').at(-1)));
  return [...new Set(ports)].sort((a, b) => a - b);
}

async function refusalsOf(urls: Record<string, string>) {
  const { workflowId, executionId, execution } = await run(
    trellis,
    definition(
      Object.entries(urls).map(([name, url]) => ({
        name,
        type: { plugin: 'Net/Http' },
        parameters: { url, timeoutMilliseconds: 5000 },
      })),
    ),
  );
  expect(execution.status).toBe('Failed');
  const tasks = await tasksOf(trellis.admin, workflowId, executionId);
  return Object.fromEntries(Object.keys(urls).map((name) => [name, tasks[name]!.message]));
}

describe("Trellis's own ports, where loopback is allowed", () => {
  it('are all refused: the dev server’s every port and the worker’s metrics', async () => {
    const ports = listeningPorts(processTree());
    // The API, the SDK core's metrics; the dev server's gRPC, HTTP API, UI, metrics and internal
    // history, matching and worker services.
    expect(ports.length).toBeGreaterThanOrEqual(9);
    const messages = await refusalsOf(
      Object.fromEntries(ports.map((port) => [`Port${port}`, `http://127.0.0.1:${port}/metrics`])),
    );
    for (const port of ports) {
      expect(messages[`Port${port}`], `port ${port}`).toMatch(
        new RegExp(`refused: 127\\.0\\.0\\.1:${port} is one of Trellis's own services`),
      );
    }
  });

  it('refuses an API bound to 0.0.0.0 through 127.0.0.1 and through other local addresses', async () => {
    const port = new URL(trellis.baseUrl).port;
    const external = Object.values(networkInterfaces())
      .flatMap((addresses) => addresses ?? [])
      .find((address) => address.family === 'IPv4' && !address.internal)?.address;
    const hosts = ['127.0.0.1', '127.0.0.2', '0.0.0.0', ...(external ? [external] : [])];
    const messages = await refusalsOf(
      Object.fromEntries(hosts.map((host, i) => [`Via${i}`, `http://${host}:${port}/version`])),
    );
    hosts.forEach((host, i) => {
      expect(messages[`Via${i}`], host).toMatch(/is one of Trellis's own services/);
    });
  });
});
