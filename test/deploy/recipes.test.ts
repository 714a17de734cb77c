/**
 * The container recipes (deploy/Dockerfile, deploy/compose.yaml) checked without a container
 * engine: the compose file against the Compose Specification's JSON Schema, its services and
 * their wiring, the configuration its Trellis services get as Trellis itself loads it, the
 * image's stages, and the image's health check program against real listeners.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { Ajv } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '#platform/config/load.js';
import { freePort } from '#platform/temporal/dev-server.js';
import { ensureCompiledBuild } from './support/compiled.js';
import {
  configKnows,
  deployPath,
  imageEnvironment,
  interpolate,
  loadCompose,
  MissingVariable,
  projectRoot,
  readComposeFile,
  readDockerfile,
  serviceEnvironment,
  type ComposeFile,
} from './support/recipes.js';

/** What an operator puts in deploy/.env (see deploy/.env.example). */
const variables = {
  POSTGRES_PASSWORD: 'pg-password',
  TRELLIS_ADMIN_PASSWORD:
    'scrypt$16384$8$1$2N2Uu8FOfbuOQCP1GJzsRw==$8jUR2v2bOyLD9/4QfVX5rWLsZJxz0TnR+MJ5J+LlwKE=',
  TRELLIS_ENCRYPTION_KEY: 'an-encryption-key',
};

/**
 * The Compose Specification's schema (compose-spec/compose-spec, schema/compose-spec.json), as
 * the dclint package ships it (its `schemas/compose.schema.json`, refreshed from that repository).
 */
function composeSchemaValidator() {
  const dclint = path.dirname(createRequire(import.meta.url).resolve('dclint/package.json'));
  const schema = JSON.parse(
    readFileSync(path.join(dclint, 'schemas/compose.schema.json'), 'utf8'),
  ) as Record<string, unknown>;
  // Draft 7, named by its https address, which Ajv's built-in draft 7 does not answer to.
  delete schema.$schema;
  return new Ajv({ allErrors: true, strict: false }).compile(schema);
}

describe('deploy/compose.yaml', () => {
  const compose: ComposeFile = loadCompose(variables);
  const { api, worker } = compose.services;

  it('is valid against the Compose Specification schema, which a misspelled key fails', () => {
    const validate = composeSchemaValidator();
    const raw = readComposeFile();
    expect(validate(raw), JSON.stringify(validate.errors, null, 2)).toBe(true);
    expect(validate(compose), JSON.stringify(validate.errors, null, 2)).toBe(true);

    const broken = structuredClone(raw) as { services: Record<string, Record<string, unknown>> };
    broken.services.worker!.depends_on = { api: { condition: 'service_ready' } };
    broken.services.api!.helthcheck = { test: ['CMD', 'true'] };
    expect(validate(broken)).toBe(false);
    expect(validate.errors?.map((error) => error.instancePath)).toEqual(
      expect.arrayContaining(['/services/api', '/services/worker/depends_on/api/condition']),
    );
  });

  it("reads variables as compose interpolates them (the tests' reading of the file)", () => {
    const given = { SET: 'a', EMPTY: '' };
    expect(
      interpolate('$$SET ${SET} $SET ${SET:-d} ${EMPTY:-d} ${EMPTY-d} ${UNSET-d}', given),
    ).toBe('$SET a a a d  d');
    expect(interpolate('${SET:+alt}|${EMPTY:+alt}|${EMPTY+alt}', given)).toBe('alt||alt');
    expect(() => interpolate('${EMPTY:?say why}', given)).toThrow(/EMPTY .*say why/);
    expect(interpolate('${EMPTY?say why}', given)).toBe('');
    expect(() => interpolate('${UNSET}', given)).toThrow(MissingVariable);
  });

  it('runs Trellis as separate api and worker services of one image, each role as the argument', () => {
    expect(api?.command).toEqual(['--role', 'api']);
    expect(worker?.command).toEqual(['--role', 'worker']);
    expect(worker?.image).toBe(api?.image);
    expect(api?.build).toEqual({ context: '..', dockerfile: 'deploy/Dockerfile' });
    expect(worker?.build).toEqual(api?.build);
    expect(api?.ports).toEqual(['6262:6262']);
    expect(worker?.ports).toBeUndefined();
  });

  it('runs PostgreSQL, a Temporal server set up by its admin tools, and the Temporal UI', () => {
    const images = Object.fromEntries(
      Object.entries(compose.services).map(([name, service]) => [name, service.image]),
    );
    expect(images).toMatchObject({
      postgresql: expect.stringMatching(/^postgres:\d+/),
      'temporal-schema': expect.stringMatching(/^temporalio\/admin-tools:1\.\d+\.\d+$/),
      temporal: expect.stringMatching(/^temporalio\/server:1\.\d+\.\d+$/),
      'temporal-namespace': expect.stringMatching(/^temporalio\/admin-tools:1\.\d+\.\d+$/),
      'temporal-ui': expect.stringMatching(/^temporalio\/ui:2\.\d+\.\d+$/),
    });
    // One version for the server and its tools (their schema must match).
    const tag = (image: string) => image.split(':')[1];
    expect(tag(images['temporal-schema']!)).toBe(tag(images.temporal!));
    expect(tag(images['temporal-namespace']!)).toBe(tag(images.temporal!));
    // The UI has no login: published on the host's loopback only.
    expect(compose.services['temporal-ui']?.ports).toEqual(['127.0.0.1:8080:8080']);
  });

  it('starts each service after what it needs is healthy or done, and every awaited health is checked', () => {
    expect(api?.depends_on).toEqual({
      postgresql: { condition: 'service_healthy' },
      'temporal-namespace': { condition: 'service_completed_successfully' },
    });
    expect(worker?.depends_on).toEqual({
      postgresql: { condition: 'service_healthy' },
      'temporal-namespace': { condition: 'service_completed_successfully' },
      api: { condition: 'service_healthy' },
    });
    expect(compose.services.temporal?.depends_on).toEqual({
      'temporal-schema': { condition: 'service_completed_successfully' },
    });
    for (const [name, service] of Object.entries(compose.services)) {
      for (const [dependency, { condition }] of Object.entries(service.depends_on ?? {})) {
        const target = compose.services[dependency];
        expect(target, `${name} depends on unknown ${dependency}`).toBeDefined();
        if (condition === 'service_healthy') {
          expect(target?.healthcheck?.test, `${dependency} has no healthcheck`).toBeDefined();
        }
        if (condition === 'service_completed_successfully') {
          expect(target?.restart, `${dependency} is a one-shot job`).toBeUndefined();
        }
      }
    }
    expect(api?.healthcheck?.test).toEqual(['CMD', 'node', 'dist/bin/healthcheck.js']);
    expect(worker?.healthcheck).toEqual(api?.healthcheck);
  });

  it('holds no secret: docker compose refuses to start until deploy/.env gives each one', () => {
    const missing = new Set<string>();
    for (;;) {
      const given = Object.fromEntries([...missing].map((name) => [name, 'x']));
      try {
        loadCompose(given);
        break;
      } catch (error) {
        if (!(error instanceof MissingVariable)) throw error;
        expect(error.reason).toBe(`set ${error.variable} in deploy/.env`);
        missing.add(error.variable);
      }
    }
    expect([...missing].sort()).toEqual(Object.keys(variables).sort());
    // The example .env names every one of them.
    const example = readFileSync(deployPath('.env.example'), 'utf8');
    for (const name of missing) expect(example).toMatch(new RegExp(`^${name}=`, 'm'));
    // The file's values reach the processes, and nothing else holds a password.
    const environment = serviceEnvironment(api!);
    expect(environment.TRELLIS__Database__Url).toBe(
      'postgres://trellis:pg-password@postgresql:5432/trellis',
    );
    expect(compose.services.postgresql?.environment?.POSTGRES_PASSWORD).toBe('pg-password');
    expect(compose.services.temporal?.environment?.POSTGRES_PWD).toBe('pg-password');
  });

  it("gives the api and the worker a configuration Trellis loads, on the image's defaults", () => {
    const [runtime] = readDockerfile().slice(-1);
    for (const service of [api!, worker!]) {
      const config = loadConfig({
        env: { ...imageEnvironment(runtime!), ...serviceEnvironment(service) },
        cwd: '/app',
      });
      expect(config.Database.Url).toBe('postgres://trellis:pg-password@postgresql:5432/trellis');
      expect(config.Temporal).toMatchObject({
        Address: 'temporal:7233',
        Namespace: 'default',
        TaskQueue: 'trellis',
      });
      expect(config.Server).toMatchObject({ Host: '0.0.0.0', Port: 6262 });
      expect(config.DataDirectory).toBe('/var/lib/trellis');
      expect(config.Security.Basic.Users).toEqual([
        { Name: 'admin', Password: variables.TRELLIS_ADMIN_PASSWORD, Roles: ['admin'] },
      ]);
      expect(config.Security.EncryptionKey).toBe('an-encryption-key');
    }
  });
});

describe('deploy/Dockerfile', () => {
  const stages = readDockerfile();
  const runtime = stages.at(-1)!;
  const instructions = (keyword: string) =>
    runtime.instructions.filter(([instruction]) => instruction === keyword).map(([, rest]) => rest);

  it('builds in one stage and runs from another with production dependencies only', () => {
    expect(stages.map((stage) => stage.name)).toEqual([
      'build',
      'production-dependencies',
      'runtime',
    ]);
    const run = (stage: (typeof stages)[number]) =>
      stage.instructions.filter(([instruction]) => instruction === 'RUN').map(([, rest]) => rest);
    expect(run(stages[0]!)).toContain('npm run build');
    expect(run(stages[1]!).join(' ')).toMatch(/npm install --omit=dev /);
    const copies = instructions('COPY');
    expect(copies).toContain('--from=production-dependencies /app/node_modules node_modules');
    expect(copies).toContain('--from=build /src/dist dist');
    // The console the API serves at /ui, built with the rest.
    expect(copies).toContain('--from=build /src/console/dist console/dist');
    // Nothing else brings node_modules in: the build stage's (with dev dependencies) stays behind.
    expect(copies.filter((copy) => copy.includes('node_modules'))).toHaveLength(1);
    for (const stage of stages) expect(stage.from).toBe('${NODE_IMAGE}');
  });

  it('runs as a non-root user, the role as its argument, with a health check', () => {
    expect(instructions('USER')).toEqual(['1000:1000']);
    expect(instructions('ENTRYPOINT')).toEqual(['["node", "dist/bin/trellis.js"]']);
    expect(instructions('CMD')).toEqual(['["--role", "all"]']);
    expect(instructions('HEALTHCHECK')[0]).toMatch(/CMD \["node", "dist\/bin\/healthcheck\.js"\]$/);
    expect(imageEnvironment(runtime)).toMatchObject({
      NODE_ENV: 'production',
      TRELLIS__Server__Host: '0.0.0.0',
      TRELLIS__DataDirectory: '/var/lib/trellis',
    });
  });

  it('keeps dependencies, builds, data and secrets out of the build context', () => {
    const ignored = readFileSync(path.join(projectRoot, '.dockerignore'), 'utf8')
      .split('\n')
      .filter((line) => line && !line.startsWith('#'));
    expect(ignored).toEqual(
      expect.arrayContaining(['.git', '**/node_modules', 'dist', '.trellis', '.tools', '.env']),
    );
    // deploy/.env holds the compose secrets: ignored by the context and by git.
    expect(ignored).toContain('deploy');
    expect(readFileSync(path.join(projectRoot, '.gitignore'), 'utf8')).toMatch(/^deploy\/\.env$/m);
  });
});

describe('the image health check (dist/bin/healthcheck.js)', () => {
  const servers: Server[] = [];

  beforeAll(ensureCompiledBuild, 300_000);
  afterAll(() =>
    Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve)))),
  );
  /** Where a worker-only process would answer: nowhere, unless a test says so. */
  const noWorker = async (): Promise<Record<string, string>> =>
    configKnows('Metrics.WorkerPort')
      ? { TRELLIS__Metrics__WorkerPort: String(await freePort()) }
      : {};

  /** A listener answering `paths` with their status and anything else 404, as Trellis would. */
  async function listen(paths: Record<string, number>): Promise<number> {
    const server = createServer((request, response) => {
      response.statusCode = paths[request.url ?? ''] ?? 404;
      response.end();
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return (server.address() as AddressInfo).port;
  }

  async function healthcheck(env: Record<string, string>, args: string[] = []) {
    const result = await promisify(execFile)(
      process.execPath,
      [path.join(projectRoot, 'dist/bin/healthcheck.js'), ...args],
      { env: { PATH: process.env.PATH, ...env }, cwd: projectRoot },
    ).then(
      ({ stdout, stderr }) => ({ code: 0, output: stdout + stderr }),
      (error: { code: number; stdout: string; stderr: string }) => ({
        code: error.code,
        output: error.stdout + error.stderr,
      }),
    );
    return result;
  }

  it('is healthy when the API answers /readyz with 200, and says what it asked', async () => {
    const port = await listen({ '/readyz': 200, '/livez': 200 });
    const result = await healthcheck({ TRELLIS__Server__Port: String(port) });
    expect(result).toEqual({
      code: 0,
      output: `healthcheck: http://127.0.0.1:${port}/readyz: 200\n`,
    });
    expect(
      await healthcheck({ TRELLIS__Server__Port: String(port) }, ['--probe', 'livez']),
    ).toMatchObject({ code: 0 });
  });

  it('is unhealthy when the API is not ready, or nothing listens at all', async () => {
    const notReady = await listen({ '/readyz': 503, '/livez': 200 });
    expect(await healthcheck({ TRELLIS__Server__Port: String(notReady) })).toEqual({
      code: 1,
      output: `healthcheck: http://127.0.0.1:${notReady}/readyz: 503\n`,
    });
    expect(
      await healthcheck({ TRELLIS__Server__Port: String(notReady) }, ['--probe', 'livez']),
    ).toMatchObject({ code: 0 });

    const nothing = await freePort();
    const result = await healthcheck({
      TRELLIS__Server__Port: String(nothing),
      ...(await noWorker()),
    });
    expect(result.code).toBe(1);
    expect(result.output).toContain(`http://127.0.0.1:${nothing}/readyz: connection refused`);
    expect(result.output).toContain('/readyz: connection refused)');
  });

  it('is unhealthy, naming the key, when the configuration does not load', async () => {
    const result = await healthcheck({ TRELLIS__Server__Port: 'sixty' });
    expect(result.code).toBe(1);
    expect(result.output).toContain('Server.Port: must be integer');
  });

  it('refuses a probe it does not know', async () => {
    expect(await healthcheck({}, ['--probe', 'metrics'])).toEqual({
      code: 2,
      output: 'healthcheck: --probe must be readyz or livez, not "metrics"\n',
    });
  });

  it.skipIf(!configKnows('Metrics.WorkerPort'))(
    "asks a worker-only process's probe port when no API listens (with Metrics.WorkerPort)",
    async () => {
      const worker = await listen({ '/readyz': 200 });
      const result = await healthcheck({
        TRELLIS__Server__Port: String(await freePort()),
        TRELLIS__Metrics__WorkerPort: String(worker),
      });
      expect(result).toMatchObject({ code: 0 });
      expect(result.output).toContain(`http://127.0.0.1:${worker}/readyz: 200`);
    },
  );
});
