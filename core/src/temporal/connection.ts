import { Client, Connection, type Metadata } from '@temporalio/client';
import { Unavailable } from '../errors.js';
import type { TrellisConfig } from '../config/types.js';
import type { Logger } from '../logging.js';

/**
 * A Temporal client connection whose call context (deadline, metadata, abort signal) exists only
 * while a call is in flight.
 *
 * The client keeps that context in an AsyncLocalStorage and enters it on every request (each
 * one carries the namespace header as metadata). On Node 20 and 22 an AsyncLocalStorage that has
 * ever been entered keeps async hooks installed for the life of the process, taxing every
 * promise and callback of the API, Temporal call or not: a tenth of the API's CPU on a plain
 * `GET`, measured with `npm run bench`. Here the storage is disabled again when the last call
 * that entered it ends (Node documents that entering re-enables it); a call only reads its
 * context while it is being issued, so no call in flight loses it.
 */
export class ScopedContextConnection extends Connection {
  #callsInFlight = 0;

  override withDeadline<T>(deadline: number | Date, fn: () => Promise<T>): Promise<T> {
    return this.#scoped(() => super.withDeadline(deadline, fn));
  }

  override withMetadata<T>(metadata: Metadata, fn: () => Promise<T>): Promise<T> {
    return this.#scoped(() => super.withMetadata(metadata, fn));
  }

  override withAbortSignal<T>(abortSignal: AbortSignal, fn: () => Promise<T>): Promise<T> {
    return this.#scoped(() => super.withAbortSignal(abortSignal, fn));
  }

  override withApiKey<T>(apiKey: string, fn: () => Promise<T>): Promise<T> {
    return this.#scoped(() => super.withApiKey(apiKey, fn));
  }

  async #scoped<T>(call: () => Promise<T>): Promise<T> {
    this.#callsInFlight++;
    try {
      return await call();
    } finally {
      if (--this.#callsInFlight === 0) this.callContextStorage.disable();
    }
  }
}

export interface TemporalConnection {
  connection: Connection;
  client: Client;
}

/**
 * Connects to Temporal at `temporal.Address` (the cluster, or the embedded dev server's address)
 * and returns a client for `temporal.Namespace`. Unreachable → `Unavailable` naming the address.
 */
export async function connectTemporal(
  temporal: Pick<TrellisConfig['Temporal'], 'Address' | 'Namespace'>,
  logger: Logger,
): Promise<TemporalConnection> {
  const address = temporal.Address;
  if (!address)
    throw new Error('connectTemporal needs Temporal.Address (the embedded dev server sets it).');
  let connection: Connection;
  try {
    connection = await ScopedContextConnection.connect({ address, connectTimeout: 10_000 });
  } catch (error) {
    throw new Unavailable(`Temporal is not reachable at ${address}: ${(error as Error).message}`);
  }
  logger.info({ address, namespace: temporal.Namespace }, 'connected to Temporal');
  return { connection, client: new Client({ connection, namespace: temporal.Namespace }) };
}
