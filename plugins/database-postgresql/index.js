// @ts-check
import { lookup } from 'node:dns/promises';
import { realpath } from 'node:fs/promises';
import net from 'node:net';
import { networkFence, nonRetryable } from '@trellis/plugin-kit';
import pg from 'pg';

/**
 * @typedef {{ host?: string, port?: number, database?: string }} TrellisDatabase
 * @typedef {{ address: string, family: number }} Address
 */

/**
 * Connects, runs the statement with its parameters (never interpolated into the SQL), and
 * disconnects. Canceling the task (or its timeout) cancels the statement on the server, from a
 * second connection, before closing: a closed connection alone does not stop a statement, which
 * the server notices only when it next writes to it. The statement timeout is held to the host's
 * `maxStatementTimeoutMilliseconds` (`Plugins.Database.MaxStatementTimeoutMilliseconds`), which
 * also bounds a statement whose task ends without a word (its worker killed).
 *
 * Where it connects is checked first, on resolved addresses, and the client then connects only
 * to the addresses checked: the host's network fence (`context.host.network`, as for Net/Http:
 * loopback, link-local, cloud metadata and Trellis's own ports are refused unless
 * `Plugins.Network.AllowCidrs` allows them; a Unix socket counts as loopback), and Trellis's own
 * database (`context.host.trellisDatabase`: the host, port and database of `Database.Url`).
 *
 * Always through the extended query protocol, with or without parameters: PostgreSQL then
 * parses the text as one statement and refuses several before running any (the simple
 * protocol would run them all, one after the other, and answer with one result each).
 * @param {{ sql: string, params: unknown[] }} parameters
 * @param {{ specifications: { connectionString: string, statementTimeoutMilliseconds: number },
 *   signal: AbortSignal, logger: import('@trellis/plugin-kit').PluginLogger,
 *   host: { network?: import('@trellis/plugin-kit').PluginNetworkFence,
 *   trellisDatabase?: TrellisDatabase | null, maxStatementTimeoutMilliseconds?: number } }} context
 */
export async function execute(parameters, context) {
  const { connectionString } = context.specifications;
  const statementTimeout = statementTimeoutWithin(context);
  /** @type {Address[] | undefined} */
  let checked;
  /** @param {Partial<pg.ClientConfig>} options */
  const connection = (options) =>
    new pg.Client({
      connectionString,
      connectionTimeoutMillis: 30_000,
      stream: () => pinnedSocket(() => checked),
      ...options,
    });
  const client = connection({ statement_timeout: statementTimeout });
  checked = await checkDestination(client, context.host);
  /** @type {Promise<void> | undefined} */
  let canceled;
  const abort = () => {
    canceled = cancelOnServer(client, connection).finally(() => client.end().catch(() => {}));
  };
  context.signal.addEventListener('abort', abort, { once: true });
  try {
    await client.connect();
    const result = await client.query({
      text: parameters.sql,
      values: parameters.params,
      queryMode: 'extended',
    });
    return {
      command: result.command,
      rowCount: result.rowCount,
      fields: result.fields.map((field) => field.name),
      rows: result.rows,
    };
  } catch (error) {
    if (context.signal.aborted) throw context.signal.reason;
    throw describe(/** @type {Error & { code?: string, position?: string }} */ (error));
  } finally {
    context.signal.removeEventListener('abort', abort);
    await canceled;
    await client.end().catch(() => {});
  }
}

/**
 * The task's statement timeout held to the host's limit; 0, which PostgreSQL reads as "none", is
 * above any limit. The task's log says when its setting was not kept.
 * @param {{ specifications: { statementTimeoutMilliseconds: number },
 *   logger: import('@trellis/plugin-kit').PluginLogger,
 *   host: { maxStatementTimeoutMilliseconds?: number } }} context
 */
function statementTimeoutWithin({ specifications, logger, host }) {
  const asked = specifications.statementTimeoutMilliseconds;
  const limit = host.maxStatementTimeoutMilliseconds;
  if (limit === undefined || (asked > 0 && asked <= limit)) return asked;
  logger.warning(
    `statementTimeoutMilliseconds ${asked} asks for more than this installation allows ` +
      `(Plugins.Database.MaxStatementTimeoutMilliseconds): the statement may run ${limit} ms.`,
  );
  return limit;
}

/**
 * Asks the server to cancel what the client's session is running (pg_cancel_backend, from a
 * short-lived second connection to the same, already checked, addresses). Best effort: the
 * statement timeout still ends a statement this cannot reach.
 * @param {pg.Client} client
 * @param {(options: Partial<pg.ClientConfig>) => pg.Client} connection
 */
async function cancelOnServer(client, connection) {
  const pid = /** @type {pg.Client & { processID?: number | null }} */ (client).processID;
  if (!pid) return;
  const canceller = connection({ statement_timeout: 5_000, connectionTimeoutMillis: 5_000 });
  try {
    await canceller.connect();
    await canceller.query('select pg_cancel_backend($1)', [pid]);
  } catch {
    // Unreachable now, or the session already ended: nothing left to cancel here.
  } finally {
    await canceller.end().catch(() => {});
  }
}

/**
 * Refuses what the fence refuses and Trellis's own database; returns the addresses the client
 * may connect to (undefined for a Unix socket, which has none).
 * @param {pg.Client} client
 * @param {{ network?: import('@trellis/plugin-kit').PluginNetworkFence,
 *   trellisDatabase?: TrellisDatabase | null }} host
 * @returns {Promise<Address[] | undefined>}
 */
async function checkDestination(client, host) {
  const fence = networkFence(host.network);
  const trellis = host.trellisDatabase ?? null;
  const target = /** @type {{ host: string, port: number, database: string }} */ (
    /** @type {unknown} */ (client)
  );
  const ownDatabase = () =>
    Boolean(
      trellis && trellis.port === Number(target.port) && trellis.database === target.database,
    );
  const refused = () =>
    nonRetryable(
      "PostgreSQL: this is Trellis's own database, which tasks may not use (Plugins.Database.AllowTrellisDatabase)",
    );
  if (target.host.startsWith('/')) {
    if (!fence.allowsLocalSockets()) {
      throw nonRetryable(
        `PostgreSQL: refused: ${target.host} is a Unix socket on this machine, reachable only if ` +
          'Plugins.Network.AllowCidrs allows loopback (127.0.0.1)',
      );
    }
    if (ownDatabase() && trellis?.host && (await sameFolder(target.host, trellis.host))) {
      throw refused();
    }
    return undefined;
  }
  const addresses = await fence
    .allowedAddresses(target.host, Number(target.port))
    .catch((/** @type {Error & { fenced?: boolean }} */ error) => {
      throw error.fenced ? nonRetryable(`PostgreSQL: refused: ${error.message}`) : describe(error);
    });
  if (ownDatabase() && trellis?.host && !trellis.host.startsWith('/')) {
    const own = new Set((await resolve(trellis.host).catch(() => [])).map(normalized));
    if (addresses.some((address) => own.has(normalized(address)))) throw refused();
  }
  return addresses;
}

/**
 * A socket for pg that connects to a host name only at `addresses()`, the addresses checked
 * (no second lookup that could answer differently).
 * @param {() => Address[] | undefined} addresses
 */
function pinnedSocket(addresses) {
  const socket = new net.Socket();
  const connect = socket.connect.bind(socket);
  /** @type {import('node:net').LookupFunction} */
  const pinned = (_hostname, options, done) => {
    const list = addresses() ?? [];
    if (options.all) done(null, list);
    else done(null, list[0]?.address ?? '', list[0]?.family);
  };
  // pg calls connect(port, host) for TCP and connect(path) for a Unix socket.
  socket.connect = /** @type {typeof socket.connect} */ (
    /** @param {unknown[]} args */
    (...args) =>
      typeof args[0] === 'number' && addresses() !== undefined
        ? connect({ port: args[0], host: /** @type {string} */ (args[1]), lookup: pinned })
        : connect(/** @type {never} */ (args[0]), /** @type {never} */ (args[1]))
  );
  return socket;
}

/** @param {string} host */
async function resolve(host) {
  const bare = host.replace(/^\[|\]$/g, '');
  return net.isIP(bare)
    ? [{ address: bare, family: net.isIP(bare) }]
    : lookup(bare, { all: true, verbatim: true });
}

/** @param {Address} address IPv4-mapped IPv6 addresses as IPv4, IPv6 in one spelling */
function normalized({ address }) {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1];
  return net.isIPv6(address) ? new URL(`http://[${address}]/`).hostname : address;
}

/**
 * @param {string} a
 * @param {string} b
 */
async function sameFolder(a, b) {
  const [realA, realB] = await Promise.all([
    realpath(a).catch(() => a),
    realpath(b).catch(() => b),
  ]);
  return realA.replace(/\/+$/, '') === realB.replace(/\/+$/, '');
}

// SQLSTATE classes that repeat on retry: data (22), constraints (23), syntax and access (42).
const PERMANENT = /^(22|23|42)/;

// syntax_error, as PostgreSQL reports several statements in one extended-protocol query.
const SEVERAL_STATEMENTS = /cannot insert multiple commands into a prepared statement/;

/** @param {Error & { code?: string, position?: string }} error */
function describe(error) {
  if (error.code === '42601' && SEVERAL_STATEMENTS.test(error.message)) {
    return Object.assign(
      new Error(
        'PostgreSQL: the sql holds more than one statement; this plugin runs one per task ' +
          '(split them into tasks, or wrap them in a DO block or a function) [SQLSTATE 42601]',
      ),
      { nonRetryable: true },
    );
  }
  const where = error.position ? ` (at character ${error.position})` : '';
  const code = error.code ? ` [SQLSTATE ${error.code}]` : '';
  return Object.assign(new Error(`PostgreSQL: ${error.message}${where}${code}`), {
    nonRetryable: error.code !== undefined && PERMANENT.test(error.code),
  });
}
