import { readFile } from 'node:fs/promises';
import {
  Client,
  Connection,
  type ClientInterceptors,
  type ConnectionOptions,
  type Metadata,
} from '@temporalio/client';
import { Invalid, Unavailable } from '#definition/errors.js';
import { problemAt } from '#definition/validation/problem.js';
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

/**
 * A client, and whether its namespace has the `TrellisProject` and `TrellisStatus` search
 * attributes: runs started through it carry their project's name and their status then
 * (search-attributes.ts).
 */
export interface TemporalClient {
  client: Client;
  projectAttribute?: boolean;
  statusAttribute?: boolean;
  /** The namespace has `TrellisDryRun`: dry runs started through it carry it. */
  dryRunAttribute?: boolean;
  /** The client of another namespace (`Projects.Namespaces`) over the same connection. */
  inNamespace?: (namespace: string) => Client;
}

/** The client of the namespace an execution's run lives in (null: `Temporal.Namespace`'s). */
export function clientOf(temporal: TemporalClient, namespace: string | null | undefined): Client {
  if (namespace == null || namespace === temporal.client.options.namespace) return temporal.client;
  if (!temporal.inNamespace) throw new Error(`No Temporal client for namespace ${namespace}.`);
  return temporal.inNamespace(namespace);
}

/** The namespace a project's new runs start in (`Projects.Namespaces`); null: the default one. */
export function namespaceOfProject(
  config: Pick<TrellisConfig, 'Projects' | 'Temporal'>,
  project: string,
): string | null {
  const mapped = config.Projects.Namespaces[project];
  return mapped === undefined || mapped === config.Temporal.Namespace ? null : mapped;
}

/** The namespaces Trellis runs in: `Temporal.Namespace` first, then each project's. */
export function trellisNamespaces(config: Pick<TrellisConfig, 'Projects' | 'Temporal'>): string[] {
  return [...new Set([config.Temporal.Namespace, ...Object.values(config.Projects.Namespaces)])];
}

export interface TemporalConnection extends TemporalClient {
  connection: Connection;
}

/** What both Temporal connections (the client's and the worker's) are made with. */
export interface TemporalConnectionOptions {
  address: string;
  tls?: Exclude<ConnectionOptions['tls'], boolean | null | undefined>;
  apiKey?: string;
}

type TemporalSettings = Pick<TrellisConfig['Temporal'], 'Address' | 'Tls' | 'ApiKey'>;

/**
 * The address, TLS and API key of `Temporal.*`, with the PEM files read. TLS is on when
 * `Tls.Enabled` says so, or, unsaid, when an API key, a CA file, a client certificate or a
 * server name is set (none of them means anything in the clear). An unreadable file is
 * `Invalid`, naming the setting.
 */
export async function temporalConnectionOptions(
  temporal: TemporalSettings,
): Promise<TemporalConnectionOptions> {
  const address = temporal.Address;
  if (!address) {
    throw new Error(
      'Temporal connection options need Temporal.Address (the embedded dev server sets it).',
    );
  }
  const { Enabled, ServerName, ServerRootCaFile, ClientCertFile, ClientKeyFile } = temporal.Tls;
  const implied = [temporal.ApiKey, ServerName, ServerRootCaFile, ClientCertFile].some(
    (value) => value !== undefined,
  );
  const read = async (key: string, file: string | undefined) => {
    if (file === undefined) return undefined;
    try {
      return await readFile(file);
    } catch (error) {
      throw new Invalid(
        problemAt(`Temporal.Tls.${key}`, `cannot read ${file} (${(error as Error).message})`),
      );
    }
  };
  const [serverRootCACertificate, crt, key] = await Promise.all([
    read('ServerRootCaFile', ServerRootCaFile),
    read('ClientCertFile', ClientCertFile),
    read('ClientKeyFile', ClientKeyFile),
  ]);
  return {
    address,
    ...((Enabled ?? implied) && {
      tls: {
        ...(ServerName !== undefined && { serverNameOverride: ServerName }),
        ...(serverRootCACertificate && { serverRootCACertificate }),
        ...(crt && key && { clientCertPair: { crt, key } }),
      },
    }),
    ...(temporal.ApiKey !== undefined && { apiKey: temporal.ApiKey }),
  };
}

/**
 * Connects to Temporal at `temporal.Address` (the cluster, or the embedded dev server's address)
 * with its TLS and API key, and returns a client for `temporal.Namespace` (with `interceptors`,
 * e.g. tracing's). Unreachable → `Unavailable` naming the address.
 */
export async function connectTemporal(
  temporal: TemporalSettings & Pick<TrellisConfig['Temporal'], 'Namespace'>,
  logger: Logger,
  interceptors?: ClientInterceptors,
): Promise<TemporalConnection> {
  const options = await temporalConnectionOptions(temporal);
  let connection: Connection;
  try {
    connection = await ScopedContextConnection.connect({ ...options, connectTimeout: 10_000 });
  } catch (error) {
    throw new Unavailable(
      `Temporal is not reachable at ${options.address}: ${(error as Error).message}`,
    );
  }
  logger.info(
    {
      address: options.address,
      namespace: temporal.Namespace,
      tls: options.tls !== undefined,
      apiKey: options.apiKey !== undefined,
    },
    'connected to Temporal',
  );
  const clientIn = (namespace: string) =>
    new Client({ connection, namespace, ...(interceptors && { interceptors }) });
  const clients = new Map<string, Client>();
  return {
    connection,
    client: clientIn(temporal.Namespace),
    inNamespace: (namespace) => {
      let client = clients.get(namespace);
      if (!client) clients.set(namespace, (client = clientIn(namespace)));
      return client;
    },
  };
}
