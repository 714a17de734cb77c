/**
 * The DBOS peer: a DBOS application as its guide writes one, durable workflows registered
 * with `DBOS.registerWorkflow` and their steps run with `DBOS.runStep`, launched on a system
 * database in the benchmark's PostgreSQL, and called from an HTTP handler in the same process
 * (`POST /chain/<steps>` answers once the workflow finished).
 *
 * `--modules=<folder>`: where `bench/peers/install.ts` installed `@dbos-inc/dbos-sdk` (not one of
 * the repository's packages, hence `createRequire` and the few types below);
 * `--database=<url>`, `--pool=<size>`.
 */
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import path from 'node:path';
import { parseArgs } from 'node:util';

/** The part of `DBOS` this application uses. */
interface Dbos {
  setConfig(config: {
    name: string;
    systemDatabaseUrl: string;
    systemDatabasePoolSize: number;
    logLevel: string;
  }): void;
  launch(): Promise<void>;
  shutdown(): Promise<void>;
  registerWorkflow<Args extends unknown[], Return>(
    workflow: (...args: Args) => Promise<Return>,
    config: { name: string },
  ): (...args: Args) => Promise<Return>;
  runStep<Return>(step: () => Promise<Return>, config: { name: string }): Promise<Return>;
}

const { values } = parseArgs({
  options: {
    modules: { type: 'string' },
    database: { type: 'string' },
    pool: { type: 'string', default: '10' },
  },
});
const require = createRequire(path.join(values.modules!, 'package.json'));
const { DBOS } = require('@dbos-inc/dbos-sdk') as { DBOS: Dbos };

const chain = DBOS.registerWorkflow(
  async (steps: number) => {
    for (let step = 0; step < steps; step++) {
      await DBOS.runStep(async () => undefined, { name: 'noop' });
    }
  },
  { name: 'chain' },
);

DBOS.setConfig({
  name: 'trellis-bench',
  systemDatabaseUrl: values.database!,
  systemDatabasePoolSize: Number(values.pool),
  logLevel: 'warn',
});
await DBOS.launch();

const server = createServer((request, response) => {
  const steps = Number(/^\/chain\/(\d+)$/.exec(request.url ?? '')?.[1]);
  if (request.method !== 'POST' || !Number.isInteger(steps)) {
    response.writeHead(404).end();
    return;
  }
  chain(steps).then(
    () => response.writeHead(200).end(),
    (error: unknown) => response.writeHead(500).end(String(error)),
  );
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  console.log(`ready ${JSON.stringify({ url: `http://127.0.0.1:${port}` })}`);
});
process.once('SIGTERM', () => {
  server.close();
  void DBOS.shutdown().then(() => process.exit(0));
});
