/**
 * Checks the SDK as it would be published (`npm run check:sdk`; CI runs it): packs sdk/ and
 * installs the tarball into a scratch project, lints the package with publint and Are the Types
 * Wrong, loads it as an ES module and by CommonJS `require`, and type-checks TypeScript consumers
 * of both kinds against the packed declarations. Works offline once `npm install` has run.
 *
 * Usage: node --import tsx scripts/contract/check-sdk.ts
 */
import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { packSdk } from '../../test/support/packed-sdk.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const bin = (name: string) => path.join(root, 'node_modules', '.bin', name);

/** Runs one check with its output shown; rejects when it fails. */
function check(title: string, command: string, args: string[], cwd = root): Promise<void> {
  console.log(`\n--- ${title}`);
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: 'inherit' });
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`${title}: failed (exit code ${code})`)),
    );
  });
}

/** A TypeScript consumer of each module kind: real types (a wrong path does not compile). */
const consumers = {
  'esm.mts': `import {
  createTrellisClient,
  defineWorkflow,
  TrellisApiError,
  type components,
  type WorkflowDefinition,
} from '@trellis/sdk';

// A third-party plugin's parameters, added to the built-ins' by augmentation.
declare module '@trellis/sdk' {
  interface PluginParameters {
    'Acme/Greeter': { name: string };
  }
}

const trellis = createTrellisClient({ baseUrl: 'http://localhost:6262', bearer: 'token' });
export async function names(): Promise<string[]> {
  const list: components['schemas']['WorkflowListItem'][] = await trellis.GET('/workflows');
  // @ts-expect-error: not a path of the API
  await trellis.GET('/no-such-path');
  return list.map((workflow) => workflow.name);
}
export const isApiError = (error: unknown): boolean => error instanceof TrellisApiError;

// Definitions as objects, their tasks' parameters typed by plugin.
export async function add(): Promise<string> {
  const definition = defineWorkflow({
    name: 'Hello',
    tasks: [
      { name: 'Greet', type: { plugin: 'Acme/Greeter' }, parameters: { name: 'Ann' } },
      { name: 'Log', type: { plugin: 'Flow/Log' }, parameters: { message: '$[Outputs("Greet")]' } },
    ],
  });
  const { id } = await trellis.POST('/workflows/Add', { body: { definition } });
  const plain: WorkflowDefinition = {
    name: 'Wait',
    // @ts-expect-error: Flow/Delay's milliseconds is a number
    tasks: [{ name: 'Wait', type: { plugin: 'Flow/Delay' }, parameters: { milliseconds: 'x' } }],
  };
  await trellis.PUT('/workflows/{workflowId}', {
    params: { path: { workflowId: id } },
    body: { workflowId: id, definition: plain },
  });
  defineWorkflow({
    name: 'Misspelled',
    // @ts-expect-error: Flow/Log takes message, not text
    tasks: [{ name: 'Log', type: { plugin: 'Flow/Log' }, parameters: { text: 'hi' } }],
  });
  return id;
}

// An execution's events, typed by their \`event\`.
export async function follow(workflowId: string, executionId: string): Promise<string[]> {
  const seen: string[] = [];
  for await (const event of trellis.watchExecution(workflowId, executionId, { after: 0 })) {
    if (event.event === 'task') seen.push(\`\${event.data.name} \${event.data.status}\`);
    // @ts-expect-error: a log entry has no status
    else if (event.event === 'log') seen.push(event.data.status);
  }
  return seen;
}
`,
  'cjs.cts': `import sdk = require('@trellis/sdk');

const trellis = sdk.createTrellisClient({ baseUrl: 'http://localhost:6262' });
export const version = (): Promise<{ version: string }> => trellis.GET('/version');
`,
  'tsconfig.json': JSON.stringify({
    compilerOptions: {
      strict: true,
      module: 'nodenext',
      target: 'es2022',
      lib: ['es2023', 'dom'],
      types: [],
      noEmit: true,
      skipLibCheck: false,
    },
    files: ['esm.mts', 'cjs.cts'],
  }),
};

const packed = await packSdk();
try {
  console.log(`packed ${path.basename(packed.tarball)}, installed into ${packed.consumer}`);
  await check('publint', bin('publint'), ['run', packed.tarball, '--strict']);
  // Its TypeScript (5.6) predates require() of ES modules, which Node >= 20.19 (the SDK's engines)
  // and TypeScript >= 5.8 under `module: nodenext` support: the loads below check that instead.
  // `node16`: TypeScript's `node10` resolution (the CommonJS-era `moduleResolution: node`) reads
  // no `exports`, so it finds the root (by `main` and `types`) but never a subpath such as
  // `@trellis/sdk/mcp`; the SDK is an ES module for Node >= 20.19, which resolves by `exports`.
  await check('Are the Types Wrong', bin('attw'), [
    packed.tarball,
    '--profile',
    'node16',
    '--ignore-rules',
    'cjs-resolves-to-esm',
  ]);
  const load = "console.log(Object.keys(m).sort().join(', '))";
  await check(
    'import as an ES module',
    process.execPath,
    ['--input-type=module', '-e', `import * as m from '@trellis/sdk'; ${load}`],
    packed.consumer,
  );
  await check(
    'require from CommonJS',
    process.execPath,
    ['--input-type=commonjs', '-e', `const m = require('@trellis/sdk'); ${load}`],
    packed.consumer,
  );
  for (const [file, text] of Object.entries(consumers)) {
    await writeFile(path.join(packed.consumer, file), text);
  }
  await check('TypeScript consumers (ESM and CommonJS)', bin('tsc'), ['-p', packed.consumer]);
  console.log('\nThe SDK package is fine as published.');
} catch (error) {
  console.error(`\n${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
} finally {
  await packed.remove();
}
