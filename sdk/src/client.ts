import createClient from 'openapi-fetch';
import type { Client, MaybeOptionalInit } from 'openapi-fetch';
import { authMiddleware, type Credentials } from './auth.js';
import type { WorkflowDefinition } from './definition.js';
import { TrellisApiError } from './errors.js';
import type { components, paths } from './generated/schema.js';
import { watchExecution, type ExecutionEvent, type WatchOptions } from './watch.js';

type Method = 'get' | 'post' | 'put' | 'delete';
type Schemas = components['schemas'];
export type Pagination = Schemas['Pagination'];
export type ExecutionStatus = Schemas['ExecutionStatus'];
export type ExecutionDetail = Schemas['ExecutionDetail'];
/** What executing a workflow returns (with `waitSeconds`: also its status and outputs). */
export type ExecutionStarted = Schemas['ExecutionStarted'];
/** An approval: its task, status, and the decision (who, when, why) once there is one. */
/**
 * Which executions a bulk rerun or cancel acts on (`POST /executions/rerun|cancel`): `ids`, or a
 * `filter` as `GET /executions` takes; the rest of the body is the action's own options.
 */
export type BulkSelection =
  Pick<Schemas['BulkCancelByIds'], 'ids'> | Pick<Schemas['BulkCancelByFilter'], 'filter'>;
export type Approval = Schemas['Approval'];
export type ApprovalStatus = Schemas['ApprovalStatus'];

/** The API paths that have an operation for `M`. */
export type PathsWith<M extends Method> = {
  [P in keyof paths]: paths[P] extends Record<M, object> ? P : never;
}[keyof paths];

/**
 * The body of an operation's 200 response (the envelope, or the bare report of `/health`), or of
 * its 202 response for an operation that accepts work for later (a backfill, a webhook).
 */
export type SuccessBody<Op> = Op extends {
  responses: { 200: { content: { 'application/json': infer B } } };
}
  ? B
  : Op extends { responses: { 202: { content: { 'application/json': infer B } } } }
    ? B
    : never;

/** What the client resolves to: the envelope's `data` (the whole body where there is no envelope). */
export type ResponseData<Op> =
  SuccessBody<Op> extends { data: infer D; succeeded: boolean } ? D : SuccessBody<Op>;

/** The element type of a list operation's `data`. */
export type ListItem<Op> = ResponseData<Op> extends readonly (infer T)[] ? T : never;

/** A request body as the client takes it: a workflow `definition` may be an object. */
type DefinitionAsObject<B> = B extends { definition: unknown }
  ? Omit<B, 'definition'> & {
      /** The definition: an object, or its JSON text. */
      definition: string | WorkflowDefinition;
    }
  : B;

type TakingDefinitionObjects<O> = O extends {
  requestBody: { content: { 'application/json': infer B } };
}
  ? Omit<O, 'requestBody'> & {
      requestBody: { content: { 'application/json': DefinitionAsObject<B> } };
    }
  : O;

/** The API's paths as the client takes them (the wire format is the same). */
export type ClientPaths = {
  [P in keyof paths]: { [M in keyof paths[P]]: TakingDefinitionObjects<paths[P][M]> };
};

type Init<P extends keyof paths, M extends Method> = MaybeOptionalInit<ClientPaths[P], M>;
type RequiredKeys<T> = { [K in keyof T]: object extends Pick<T, K> ? never : K }[keyof T];
/** The init argument is optional unless the operation needs path parameters or a body. */
type InitArgs<I> = RequiredKeys<I> extends never ? [init?: I] : [init: I];

/** Calls one operation and resolves to a part of its success body; throws `TrellisApiError` otherwise. */
type Call<M extends Method, Result extends 'data' | 'envelope'> = <
  P extends PathsWith<M>,
  I extends Init<P, M>,
>(
  url: P,
  ...init: InitArgs<I>
) => Promise<Result extends 'data' ? ResponseData<paths[P][M]> : SuccessBody<paths[P][M]>>;

/** A page of a list with where it sits in the whole list. */
export interface Page<T> {
  data: T[];
  pagination: Pagination;
}

export interface TrellisClientOptions extends Credentials {
  /** The service's root URL, e.g. `http://localhost:6262`. */
  baseUrl: string;
  /** A fetch implementation (defaults to the global one). */
  fetch?: (request: Request) => Promise<Response>;
  /** Headers sent with every request. */
  headers?: Record<string, string>;
  /**
   * The project to work in (its id or name), sent as `X-Trellis-Project` with every request;
   * without it, the caller's default project.
   */
  project?: string;
}

export interface WaitOptions {
  /** Give up (with an `Error`) after this long. Default 60 s. */
  timeoutMs?: number;
  /** @deprecated Ignored: the wait follows the execution's event stream instead of polling. */
  intervalMs?: number;
  /** The statuses to wait for. Default: the terminal ones (`Completed`, `Failed`, `Canceled`). */
  until?: readonly ExecutionStatus[];
  signal?: AbortSignal;
}

export interface TrellisClient {
  /** Each resolves to the envelope's `data`, typed by path; a non-2xx response throws `TrellisApiError`. */
  GET: Call<'get', 'data'>;
  POST: Call<'post', 'data'>;
  PUT: Call<'put', 'data'>;
  DELETE: Call<'delete', 'data'>;
  /** The same calls resolving to the whole envelope (`messages`, `pagination`, `generatedAtUtc`). */
  envelope: {
    GET: Call<'get', 'envelope'>;
    POST: Call<'post', 'envelope'>;
    PUT: Call<'put', 'envelope'>;
    DELETE: Call<'delete', 'envelope'>;
  };
  /** One page of a list (`page` defaults to 1), with its `pagination`. */
  page<P extends PathsWith<'get'>, I extends Init<P, 'get'>>(
    url: P,
    ...init: InitArgs<I>
  ): Promise<Page<ListItem<paths[P]['get']>>>;
  /** Every item of a list, fetched page by page (`pageSize` as given, else the server's default). */
  all<P extends PathsWith<'get'>, I extends Init<P, 'get'>>(
    url: P,
    ...init: InitArgs<I>
  ): AsyncGenerator<ListItem<paths[P]['get']>, void, undefined>;
  /**
   * Waits until an execution's status is one of `until` (default: a final one) and returns it;
   * follows its event stream, so it answers as soon as the status changes. Rejects when the run
   * ends in another status, or after `timeoutMs`.
   */
  waitForExecution(
    workflowId: string,
    executionId: string,
    options?: WaitOptions,
  ): Promise<ExecutionDetail>;
  /**
   * The execution's events as they happen (`for await (const event of ...)`), typed by
   * `event.event`: every one from the first (or after `options.after`), in order, until the
   * execution's final status. A dropped connection is resumed with `Last-Event-ID`; nothing is
   * lost or repeated. Stop early with `break` or `options.signal`.
   */
  watchExecution(
    workflowId: string,
    executionId: string,
    options?: WatchOptions,
  ): AsyncGenerator<ExecutionEvent, void, undefined>;
  /** The underlying openapi-fetch client (auth included), for status codes and headers. */
  raw: Client<paths>;
}

/** The header naming the project of a request. */
const projectHeader = 'X-Trellis-Project';

const terminalStatuses: readonly ExecutionStatus[] = ['Completed', 'Failed', 'Canceled'];

interface LooseInit {
  params?: { query?: Record<string, unknown>; path?: Record<string, unknown> };
  [key: string]: unknown;
}

/** Creates a typed Trellis client; see the package README for examples. */
export function createTrellisClient(options: TrellisClientOptions): TrellisClient {
  const { baseUrl, fetch, headers, project, ...credentials } = options;
  const sent = { ...headers, ...(project === undefined ? {} : { [projectHeader]: project }) };
  const raw = createClient<paths>({
    baseUrl,
    ...(fetch ? { fetch } : {}),
    headers: sent,
  });
  const auth = authMiddleware(credentials);
  if (auth) raw.use(auth);

  // The public signatures above carry the types; inside, one untyped call serves every operation.
  const send = async (method: Method, url: string, init?: LooseInit): Promise<unknown> => {
    const request = raw.request as (
      m: Method,
      u: string,
      i?: LooseInit,
    ) => Promise<{ data?: unknown; error?: unknown; response: Response }>;
    const { data, error, response } = await request(method, url, init);
    if (!response.ok) throw TrellisApiError.fromResponse(response, error);
    return data;
  };
  const dataOf = async (method: Method, url: string, init?: LooseInit) => {
    const body = await send(method, url, init);
    return isEnvelope(body) ? body.data : body;
  };
  const withQuery = (init: LooseInit | undefined, query: Record<string, unknown>): LooseInit => ({
    ...init,
    params: { ...init?.params, query: { ...init?.params?.query, ...query } },
  });
  // Asking for a page is what makes the server add `pagination`.
  const page = async (url: string, init?: LooseInit): Promise<Page<unknown>> => {
    const paged = init?.params?.query?.page === undefined ? withQuery(init, { page: 1 }) : init;
    const body = await send('get', url, paged);
    if (!isEnvelope(body) || !Array.isArray(body.data) || !body.pagination) {
      throw new TypeError(`GET ${url} did not answer with a paged list`);
    }
    return { data: body.data, pagination: body.pagination };
  };
  async function* all(url: string, init?: LooseInit): AsyncGenerator<unknown, void, undefined> {
    for (let number = 1; ; number += 1) {
      const { data, pagination } = await page(url, withQuery(init, { page: number }));
      yield* data;
      if (number >= pagination.totalPages || data.length === 0) return;
    }
  }

  const client = {
    GET: (url: string, init?: LooseInit) => dataOf('get', url, init),
    POST: (url: string, init?: LooseInit) => dataOf('post', url, init),
    PUT: (url: string, init?: LooseInit) => dataOf('put', url, init),
    DELETE: (url: string, init?: LooseInit) => dataOf('delete', url, init),
    envelope: {
      GET: (url: string, init?: LooseInit) => send('get', url, init),
      POST: (url: string, init?: LooseInit) => send('post', url, init),
      PUT: (url: string, init?: LooseInit) => send('put', url, init),
      DELETE: (url: string, init?: LooseInit) => send('delete', url, init),
    },
    page,
    all,
    watchExecution: (workflowId: string, executionId: string, options?: WatchOptions) =>
      watchExecution(raw, workflowId, executionId, options),
    async waitForExecution(workflowId: string, executionId: string, wait: WaitOptions = {}) {
      const { timeoutMs = 60_000, until = terminalStatuses, signal } = wait;
      const detail = () =>
        dataOf('get', '/workflows/{workflowId}/executions/{executionId}', {
          params: { path: { workflowId, executionId } },
          ...(signal ? { signal } : {}),
        }) as Promise<ExecutionDetail>;
      const timeout = new AbortController();
      const timer = setTimeout(() => timeout.abort(), timeoutMs);
      let status: ExecutionStatus | undefined;
      try {
        const events = watchExecution(raw, workflowId, executionId, {
          signal: signal ? AbortSignal.any([signal, timeout.signal]) : timeout.signal,
        });
        // The stream starts with the run's past: a status seen there counts only if it still holds.
        for await (const event of events) {
          if (event.event !== 'execution') continue;
          status = event.data.status;
          if (!until.includes(status)) continue;
          const execution = await detail();
          if (until.includes(execution.status)) return execution;
        }
        const execution = await detail();
        if (until.includes(execution.status)) return execution;
        throw new Error(
          `Execution ${executionId} ended ${execution.status} (waited for ${until.join(', ')})`,
        );
      } catch (error) {
        if (timeout.signal.aborted && !signal?.aborted) {
          throw new Error(
            `Execution ${executionId} is still ${status ?? 'unknown'} after ${timeoutMs} ms (waited for ${until.join(', ')})`,
          );
        }
        throw error;
      } finally {
        clearTimeout(timer);
      }
    },
    raw,
  };
  return client as unknown as TrellisClient;
}

interface EnvelopeBody {
  data: unknown;
  succeeded: boolean;
  pagination?: Pagination;
}

function isEnvelope(body: unknown): body is EnvelopeBody {
  return typeof body === 'object' && body !== null && 'succeeded' in body && 'data' in body;
}
