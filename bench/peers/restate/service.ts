/**
 * The Restate peer's service, as Restate's TypeScript quickstart writes one: a durable handler
 * (`Chain/run`) whose steps are `ctx.run` side effects, each journaled by the Restate server
 * before the next, served over HTTP/2 by the SDK's endpoint for the server to invoke.
 *
 * `--modules=<folder>`: where `bench/peers/install.ts` installed `@restatedev/restate-sdk` (not
 * one of the repository's packages, hence `createRequire` and the few types below).
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { parseArgs } from 'node:util';

/** The part of the Restate SDK this service uses. */
interface RestateSdk {
  service<Handlers>(definition: { name: string; handlers: Handlers }): unknown;
  endpoint(): { bind(service: unknown): { listen(port?: number): Promise<number> } };
}

interface RestateContext {
  run(name: string, action: () => Promise<void>): Promise<void>;
}

// SDK 1.17 calls Promise.withResolvers (Node 22); this machine's Node is 20.
const promises = Promise as unknown as { withResolvers?: () => unknown };
promises.withResolvers ??= () => {
  let resolve: unknown, reject: unknown;
  const promise = new Promise((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
};

const { values } = parseArgs({ options: { modules: { type: 'string' } } });
const require = createRequire(path.join(values.modules!, 'package.json'));
const restate = require('@restatedev/restate-sdk') as RestateSdk;

const chain = restate.service({
  name: 'Chain',
  handlers: {
    run: async (ctx: RestateContext, steps: number) => {
      for (let step = 0; step < steps; step++) await ctx.run('noop', async () => undefined);
    },
  },
});

const port = await restate.endpoint().bind(chain).listen(0);
console.log(`ready ${JSON.stringify({ url: `http://127.0.0.1:${port}` })}`);
