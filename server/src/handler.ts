import type { Kysely } from 'kysely';
import type { TrellisConfig } from '#platform/config/types.js';
import type { TemporalClient } from '#platform/temporal/connection.js';
import type { Database } from '#store/tables.js';
import type { PluginCatalog } from '#plugin-host/catalog.js';
import type { operations } from '../../generated/schema.js';
import type { Logger } from '#platform/logging.js';
import type { AuthUser } from './auth/user.js';
import type { RequestProject } from './projects/request-project.js';
import type { Pagination } from '#store/paging.js';
import type { Problem } from '#definition/errors.js';
import type { ExecutionEventHub } from './executions/event-hub.js';
import type { EventStreamSlots } from './executions/stream-slots.js';
import type { InstalledPlugins } from './plugins/installed-plugins.js';
import type { Metrics } from '#platform/observability/metrics.js';
import type { Readiness } from '#platform/observability/readiness.js';
import type { Tracing } from '#platform/observability/tracing.js';
import type { Req, Res } from './request-context.js';

/** What the API needs; built once at boot (or by the test harness) and passed down. */
export interface AppDeps {
  config: TrellisConfig;
  db: Kysely<Database>;
  logger: Logger;
  temporal: TemporalClient;
  catalog: PluginCatalog;
  /** Wakes execution event streams and waits when PostgreSQL says an execution changed. */
  executionEvents: ExecutionEventHub;
  /** The event streams this process holds open, within `Server.Events`' caps. */
  eventStreams: EventStreamSlots;
  /** The installed plugins as definitions are checked against them (kept in step by PostgreSQL). */
  installedPlugins: InstalledPlugins;
  /** What `/metrics` shows; `noMetrics` unless `Metrics.Enabled`. */
  metrics: Metrics;
  /** What `/readyz` asks. */
  readiness: Readiness;
  /** Present when `Telemetry.OtlpEndpoint` is set: requests get server spans. */
  tracing?: Tracing;
}

/**
 * The typed shape of an operation handler. The generated `operations` are the route table:
 * `HandlerMap` has one entry per operationId, so an operation without a handler (or a handler
 * for an operation the spec lacks) fails type-checking.
 */

export type OperationId = keyof operations;

/** `never` (the generator's "no such part") becomes an empty record. */
type Present<T> = [NonNullable<T>] extends [never] ? Record<string, never> : NonNullable<T>;

export type PathParams<O extends OperationId> = Present<operations[O]['parameters']['path']>;
export type QueryParams<O extends OperationId> = Present<operations[O]['parameters']['query']>;
type JsonBody<R> = R extends { content: { 'application/json': infer B } } ? B : undefined;
/** The JSON body; `undefined` too when the contract makes the body optional. */
export type RequestBody<O extends OperationId> = operations[O] extends { requestBody: infer R }
  ? JsonBody<R>
  : operations[O] extends { requestBody?: infer R }
    ? JsonBody<R> | undefined
    : undefined;

/**
 * The body of the operation's 200 response (JSON, or text such as `/metrics`), or of its 202
 * response for an operation that accepts work for later.
 */
export type SuccessBody<O extends OperationId> = operations[O]['responses'] extends {
  200: { content: infer C };
}
  ? C[keyof C]
  : operations[O]['responses'] extends { 202: { content: infer C } }
    ? C[keyof C]
    : never;

/** The success status an operation declares: 202 when it accepts work for later, else 200. */
type SuccessStatus<O extends OperationId> = operations[O]['responses'] extends { 200: unknown }
  ? 200
  : 202;

/**
 * What an enveloped operation returns: the envelope's `data`, optionally messages, paging and
 * extra headers, and the status when the operation's success is not 200.
 */
export interface EnvelopeReply<D, S extends number = 200> {
  data: D;
  /**
   * `data` (a list) is written to the response item by item, never as one string: for lists
   * whose items may be large (log entries). The response then has no `Content-Length` or `ETag`.
   */
  itemByItem?: boolean;
  messages?: string[];
  pagination?: Pagination;
  headers?: Record<string, string>;
  status?: S;
  /**
   * The operation stopped part-way (a bulk action at a project limit): the answer is this failure
   * (`succeeded: false`, its status and problems) whose `data` is still what was done. Unlike a
   * thrown error it is an answer, kept for the request's `Idempotency-Key`.
   */
  stoppedPartWay?: { status: number; problems: readonly Problem[] };
}

/**
 * What an operation without an envelope (`/health`, the probes, `/metrics`) returns: the body as
 * is (JSON, or text when `contentType` says so), and its status.
 */
export interface RawReply<B> {
  raw: B;
  status?: number;
  contentType?: string;
}

/**
 * What an operation answering with a stream (`text/event-stream`) returns, once it has checked
 * its input (errors thrown before are rendered as usual): the function that writes the stream.
 */
export interface StreamReply {
  stream(res: Res): Promise<void>;
}

type Streams<O extends OperationId> = operations[O]['responses'] extends {
  200: { content: { 'text/event-stream': unknown } };
}
  ? true
  : false;

export type Reply<O extends OperationId> =
  Streams<O> extends true
    ? StreamReply
    : SuccessBody<O> extends { data: infer D; succeeded: boolean }
      ? SuccessStatus<O> extends 200
        ? EnvelopeReply<D>
        : EnvelopeReply<D, SuccessStatus<O>> & { status: SuccessStatus<O> }
      : RawReply<SuccessBody<O>>;

/** Everything a handler gets: typed (validated, coerced) input, the caller and the app's deps. */
export interface HandlerContext<O extends OperationId> {
  params: PathParams<O>;
  query: QueryParams<O>;
  body: RequestBody<O>;
  /**
   * The authenticated caller with its roles in `project` (or its instance-wide roles);
   * `anonymous` with no roles on public operations.
   */
  user: AuthUser;
  /**
   * The project the request works in (`X-Trellis-Project`, else the caller's default; the path's
   * on `/projects/{projectId}/...`). Only operations whose contract names a project have one.
   */
  project: RequestProject;
  deps: AppDeps;
  /** The request's logger: its lines carry the `requestId` and `operationId`. */
  log: Logger;
  /** The HTTP request (Node's), for what the input does not carry: headers, its path. */
  req: Req;
}

export type Handler<O extends OperationId> = (context: HandlerContext<O>) => Promise<Reply<O>>;

/** One handler per operation; area files declare theirs `satisfies Partial<HandlerMap>`. */
export type HandlerMap = { [O in OperationId]: Handler<O> };

/** The reply of an operation that only confirms: `data: {}` and one message. */
export function confirmation(message: string): { data: Record<string, never>; messages: string[] } {
  return { data: {}, messages: [message] };
}
