import { Client, Connection } from '@temporalio/client';
import { unavailable } from '../errors.js';
import type { TrellisConfig } from '../config/types.js';
import type { Logger } from '../logging.js';

export interface TemporalConnection {
  connection: Connection;
  client: Client;
}

/**
 * Connects to Temporal at `temporal.Address` (the cluster, or the embedded dev server's address)
 * and returns a client for `temporal.Namespace`. Unreachable → `ApiError` 503 naming the address.
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
    connection = await Connection.connect({ address, connectTimeout: 10_000 });
  } catch (error) {
    throw unavailable(`Temporal is not reachable at ${address}: ${(error as Error).message}`);
  }
  logger.info({ address, namespace: temporal.Namespace }, 'connected to Temporal');
  return { connection, client: new Client({ connection, namespace: temporal.Namespace }) };
}
