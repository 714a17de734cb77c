import { EventEmitter } from 'node:events';
import pg from 'pg';
import type { Logger } from '#platform/logging.js';

/**
 * PostgreSQL's LISTEN/NOTIFY, for waking whoever waits on a change another process committed.
 * Notifications are hints, never the data: one can be lost (a connection drops), so whoever
 * listens re-reads what it follows on `onGap` and also polls now and then.
 */
export interface NotificationHandlers {
  /** A notification on the channel, with its payload. */
  onNotify(payload: string): void;
  /** Notifications may have been missed (the listening connection was (re)established). */
  onGap(): void;
}

/** Starts listening on a channel; resolves to a function that stops. Never rejects. */
export type Listen = (
  channel: string,
  handlers: NotificationHandlers,
) => Promise<() => Promise<void>>;

const channelName = /^[a-z_][a-z0-9_]*$/;

function assertChannel(channel: string): void {
  if (!channelName.test(channel)) throw new Error(`Not a channel name: ${channel}`);
}

const initialRetryMs = 100;
const maxRetryMs = 5_000;

/**
 * For a PostgreSQL server: one dedicated connection per channel (outside the pool, which it would
 * otherwise hold forever), reconnected with backoff while it is wanted.
 */
export function listenOnServer(url: string, logger: Logger): Listen {
  return async (channel, handlers) => {
    assertChannel(channel);
    let client: pg.Client | undefined;
    let stopped = false;
    let retryMs = initialRetryMs;
    let retry: NodeJS.Timeout | undefined;

    const reconnectLater = () => {
      if (stopped || retry) return;
      retry = setTimeout(() => {
        retry = undefined;
        void connect();
      }, retryMs);
      retryMs = Math.min(retryMs * 2, maxRetryMs);
    };
    const connect = async () => {
      const connection = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
      let failed = false;
      const lost = (error?: Error) => {
        if (failed) return;
        failed = true;
        if (client === connection) client = undefined;
        if (!stopped)
          logger.warn({ err: error, channel }, 'database notifications lost; reconnecting');
        connection.end().catch(() => undefined);
        reconnectLater();
      };
      connection.on('error', lost);
      connection.on('end', () => lost());
      connection.on('notification', (message) => {
        if (message.channel === channel) handlers.onNotify(message.payload ?? '');
      });
      try {
        await connection.connect();
        await connection.query(`listen ${channel}`);
      } catch (error) {
        lost(error as Error);
        return;
      }
      if (stopped) {
        failed = true;
        await connection.end().catch(() => undefined);
        return;
      }
      client = connection;
      retryMs = initialRetryMs;
      handlers.onGap();
    };

    await connect();
    return async () => {
      stopped = true;
      clearTimeout(retry);
      const open = client;
      client = undefined;
      await open?.end().catch(() => undefined);
    };
  };
}

/**
 * For the embedded PGlite: its one backend serves every connection of the socket server, and a
 * notification goes out on whichever connection ran the statement that delivers it, not on the
 * one that listened. So the pool's own clients carry them: every client the pool makes is
 * watched, and listens to the channels wanted (a replaced client is a gap).
 */
export function listenThroughPool(pool: pg.Pool, logger: Logger): Listen {
  const notifications = new EventEmitter();
  notifications.setMaxListeners(0);
  const wanted = new Map<string, number>();
  const watched = new WeakSet<pg.Client>();

  const watch = (client: pg.PoolClient | pg.Client) => {
    if (watched.has(client)) return;
    watched.add(client);
    client.on('notification', (message) => notifications.emit('notify', message));
    for (const channel of wanted.keys()) {
      client
        .query(`listen ${channel}`)
        .catch((error: unknown) => logger.warn({ err: error, channel }, 'cannot listen'));
    }
    notifications.emit('gap');
  };
  pool.on('connect', watch);

  return async (channel, handlers) => {
    assertChannel(channel);
    const onNotify = (message: pg.Notification) => {
      if (message.channel === channel) handlers.onNotify(message.payload ?? '');
    };
    const onGap = () => handlers.onGap();
    notifications.on('notify', onNotify);
    notifications.on('gap', onGap);
    wanted.set(channel, (wanted.get(channel) ?? 0) + 1);
    try {
      const client = await pool.connect();
      try {
        watch(client);
        await client.query(`listen ${channel}`);
      } finally {
        client.release();
      }
    } catch (error) {
      logger.warn({ err: error, channel }, 'cannot listen for database notifications');
    }
    return async () => {
      notifications.off('notify', onNotify);
      notifications.off('gap', onGap);
      const left = (wanted.get(channel) ?? 1) - 1;
      if (left > 0) wanted.set(channel, left);
      else wanted.delete(channel);
    };
  };
}
