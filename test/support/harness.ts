/**
 * Boots a real Trellis in-process for end-to-end tests through the composition root
 * (`createTrellis`), so each test starts Trellis as production does: a fresh database
 * (PostgreSQL from the global setup, or embedded PGlite), migrations, built-in plugins, the test
 * dev server with a task queue of its own, schedule reconciliation, execution recovery, the API on
 * a free port and, on request, a worker.
 * Tests talk to it only through the SDK (or plain fetch for what the SDK cannot send).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { SignJWT } from 'jose';
import type { Kysely } from 'kysely';
import { createTrellisClient } from '../../sdk/src/index.js';
import type { Credentials, TrellisClient } from '../../sdk/src/index.js';
import { buildConfig } from '#platform/config/load.js';
import type { DeepPartial } from '#platform/config/load.js';
import type { Role, TrellisConfig } from '#platform/config/types.js';
import type { Database } from '#store/tables.js';
import { createLogger, type Logger } from '#platform/logging.js';
import { hashPassword } from '#platform/security/password.js';
import type { TemporalConnection } from '#platform/temporal/connection.js';
import { createTrellis } from '../../bin/trellis-process.js';
import { buildConsoleIfStale } from '../../scripts/build/build-console.mjs';
import { createTestDatabase, testServices, uniqueTaskQueue } from './services.js';

/** The Basic users every harness configures: one per role, plus admin. */
export const users = {
  admin: { username: 'admin', password: 'admin-password' },
  config: { username: 'config-user', password: 'config-password' },
  plugins: { username: 'plugins-user', password: 'plugins-password' },
  workflow: { username: 'workflow-user', password: 'workflow-password' },
} as const satisfies Record<Role, { username: string; password: string }>;

export type TestUser = keyof typeof users;

/** Basic credentials of a configured test user. */
export function basicAs(user: TestUser): Credentials {
  return { basic: { ...users[user] } };
}

/** A client of `trellis`'s API with these credentials, in `project` (none: the caller's default). */
export function clientIn(
  trellis: { baseUrl: string },
  credentials: Credentials,
  project?: string,
): TrellisClient {
  return createTrellisClient({
    baseUrl: trellis.baseUrl,
    ...credentials,
    ...(project === undefined ? {} : { project }),
  });
}

/**
 * Configuration letting plugins reach the tests' local servers on loopback, which a default
 * installation refuses (`Plugins.Network`).
 */
export const loopbackAllowed = {
  Plugins: { Network: { AllowCidrs: ['127.0.0.0/8'] } },
} as const satisfies DeepPartial<TrellisConfig>;

/** The Bearer settings of every harness (HS256). */
export const bearer = {
  secret: 'trellis-test-secret-that-is-long-enough-for-hs256',
  issuer: 'https://issuer.trellis.test',
  audience: 'trellis-api',
} as const;

export interface TokenOptions {
  /** Roles claim: an array, or a space-separated string. Default none. */
  roles?: Role[] | string;
  /** Default `token-user`; null for a token without `sub`. */
  subject?: string | null;
  /**
   * Seconds from now; negative for a token that has already expired, null for one without
   * `exp`. Default 300.
   */
  expiresInSeconds?: number | null;
  /** Seconds from now before which the token is not valid. */
  notBeforeSeconds?: number;
  audience?: string;
  issuer?: string;
  secret?: string;
}

/** Signs an HS256 JWT as the harness' issuer would (override any part to make it invalid). */
export async function mintToken(options: TokenOptions = {}): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const jwt = new SignJWT({ roles: options.roles ?? [] })
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuer(options.issuer ?? bearer.issuer)
    .setAudience(options.audience ?? bearer.audience)
    .setIssuedAt(now - 60);
  if (options.subject !== null) jwt.setSubject(options.subject ?? 'token-user');
  if (options.expiresInSeconds !== null) {
    jwt.setExpirationTime(now + (options.expiresInSeconds ?? 300));
  }
  if (options.notBeforeSeconds !== undefined) jwt.setNotBefore(now + options.notBeforeSeconds);
  return jwt.sign(new TextEncoder().encode(options.secret ?? bearer.secret));
}

/** The name Trellis gives the bearer of a harness token with this subject. */
export const tokenUser = (subject: string) => `${bearer.issuer}#${subject}`;

/** Ready-made tokens for the auth matrix. */
export const tokens = {
  valid: (roles: Role[] = ['admin']) => mintToken({ roles }),
  expired: (roles: Role[] = ['admin']) => mintToken({ roles, expiresInSeconds: -3600 }),
  wrongAudience: (roles: Role[] = ['admin']) => mintToken({ roles, audience: 'someone-else' }),
  wrongIssuer: (roles: Role[] = ['admin']) => mintToken({ roles, issuer: 'https://evil.test' }),
  wrongSignature: (roles: Role[] = ['admin']) =>
    mintToken({ roles, secret: 'not-the-secret-not-the-secret-not-the-secret' }),
  notYetValid: (roles: Role[] = ['admin']) => mintToken({ roles, notBeforeSeconds: 3600 }),
};

export interface StartOptions {
  /** Also run a worker (ENGINE's `startWorker` with PLUGINS' runner) on the harness' task queue. */
  worker?: boolean;
  /** Merged over the harness defaults (arrays replace). */
  config?: DeepPartial<TrellisConfig>;
  /** `postgres` (default): a fresh database on the test server; `pglite`: embedded under the data directory. */
  database?: 'postgres' | 'pglite';
  /** Reuse a data directory (kept on stop), e.g. to restart on the same PGlite files. */
  dataDirectory?: string;
  /** Reuse a database URL (postgres mode), e.g. to restart on the same database. */
  databaseUrl?: string;
  /**
   * `test` (default): the shared dev server; `unreachable`: a client for an address where
   * nothing listens (calls fail at once, for 503s).
   */
  temporal?: 'test' | 'unreachable';
  /** The service's logger (default silent; `TRELLIS_TEST_LOG=1` prints debug logs). */
  logger?: Logger;
}

export interface Trellis {
  baseUrl: string;
  config: TrellisConfig;
  db: Kysely<Database>;
  /** The database URL (postgres mode), to restart on the same data. */
  databaseUrl: string | undefined;
  /** The Temporal client and connection the service uses. */
  temporal: { client: Client; connection: Connection };
  /** An SDK client authenticated as the admin user (Basic). */
  admin: TrellisClient;
  /** An SDK client with the given credentials (none: anonymous). */
  client(credentials?: Credentials): TrellisClient;
  /** Stops the worker, the API, Temporal and the database; deletes a data directory it made. */
  stop(): Promise<void>;
}

type Plain = Record<string, unknown>;

function isPlain(value: unknown): value is Plain {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function mergeDeep(base: Plain, override: Plain): Plain {
  const merged: Plain = { ...base };
  for (const [key, value] of Object.entries(override)) {
    const current = merged[key];
    merged[key] = isPlain(current) && isPlain(value) ? mergeDeep(current, value) : value;
  }
  return merged;
}

/** The console's build, checked (and made when stale) once per test process. */
let consoleBuild: Promise<boolean> | undefined;

/** Starts Trellis for one test file (call in `beforeAll`, stop in `afterAll`). */
export async function startTrellis(options: StartOptions = {}): Promise<Trellis> {
  const logger =
    options.logger ??
    createLogger({ Level: process.env.TRELLIS_TEST_LOG === '1' ? 'debug' : 'silent' });
  const ownDirectory = options.dataDirectory === undefined;
  const dataDirectory =
    options.dataDirectory ?? (await mkdtemp(path.join(tmpdir(), 'trellis-test-')));
  const databaseUrl =
    (options.database ?? 'postgres') === 'postgres'
      ? (options.databaseUrl ?? (await createTestDatabase()))
      : undefined;
  const unreachable = options.temporal === 'unreachable';
  const defaults: DeepPartial<TrellisConfig> = {
    Server: { Port: 0, Host: '127.0.0.1' },
    DataDirectory: dataDirectory,
    Database: databaseUrl ? { Url: databaseUrl, PoolSize: 5 } : {},
    Temporal: {
      Address: unreachable ? unreachableTemporal : testServices().temporalAddress,
      Namespace: 'default',
      TaskQueue: uniqueTaskQueue(),
    },
    Security: {
      Basic: {
        Enabled: true,
        Users: [
          // One hashed password (the production form), the rest plain text (accepted with a warning).
          {
            Name: users.admin.username,
            Password: await hashPassword(users.admin.password),
            Roles: ['admin'],
          },
          { Name: users.config.username, Password: users.config.password, Roles: ['config'] },
          { Name: users.plugins.username, Password: users.plugins.password, Roles: ['plugins'] },
          { Name: users.workflow.username, Password: users.workflow.password, Roles: ['workflow'] },
        ],
      },
      Bearer: {
        Enabled: true,
        Secret: bearer.secret,
        Issuer: bearer.issuer,
        Audience: bearer.audience,
        RolesClaim: 'roles',
      },
      EncryptionKey: 'trellis-test-encryption-key',
      // Test files try many wrong credentials on purpose (the auth matrix): the abuse limits stay
      // on, far above that; test/api/rate-limits.test.ts sets them low to test them.
      RateLimits: { FailedLoginsPerUser: 10_000, FailedLoginsPerAddress: 100_000 },
    },
    Logging: { Level: 'silent' },
  };
  const config = buildConfig(mergeDeep(defaults, options.config ?? {}));
  if (unreachable && options.worker) throw new Error('startTrellis: a worker needs Temporal');

  // The API serves the console's built files (`/ui`), as after `npm run build`.
  await (consoleBuild ??= buildConsoleIfStale({ say: () => undefined }));
  // Exactly the start-up production runs (bin/trellis-process.ts): an API, and a worker on request.
  const trellis = createTrellis(config, {
    role: options.worker ? 'all' : 'api',
    logger,
    ...(unreachable ? { temporal: unreachableConnection() } : {}),
  });
  const stop = async () => {
    await trellis.stop().catch(() => undefined);
    if (ownDirectory) await rm(dataDirectory, { recursive: true, force: true });
  };
  try {
    const running = await trellis.start();
    const baseUrl = running.apiUrl;
    if (!baseUrl) throw new Error('startTrellis: the process runs no API');
    const client = (credentials: Credentials = {}) =>
      createTrellisClient({ baseUrl, ...credentials });
    return {
      baseUrl,
      config: running.config,
      db: running.db,
      databaseUrl,
      temporal: running.temporal,
      admin: client(basicAs('admin')),
      client,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Port 1 on loopback refuses connections. */
const unreachableTemporal = '127.0.0.1:1';

/** A client for an address where nothing listens; no retry interceptor, so calls fail at once. */
function unreachableConnection(): TemporalConnection {
  const connection = Connection.lazy({ address: unreachableTemporal, interceptors: [] });
  return { connection, client: new Client({ connection, namespace: 'default' }) };
}
