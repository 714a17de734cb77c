import { createServer, type RequestListener } from 'node:http';
import { parse as parseQueryString } from 'node:querystring';
import express from 'express';
import parseUrl from 'parseurl';
import proxyAddr from 'proxy-addr';
import typeIs from 'type-is';
import type { Operation, Request as OpenApiRequest } from 'openapi-backend';
import { Invalid, Unavailable } from '#definition/errors.js';
import { createApiKeyAuthenticator } from './auth/api-key.js';
import { assertMayRequest, limitsOf } from '#application/projects/fair-shares.js';
import { createLoginGuard } from './auth/login-guard.js';
import { createRequestAudit } from './audit/operations.js';
import { createAuditRecorder } from './audit/recorder.js';
import { keepAuditRetention } from './audit/retention.js';
import { listen, type Listening } from '#platform/http/listen.js';
import type { Logger } from '#platform/logging.js';
import { createAuthorizer } from './auth/security.js';
import { cors } from './cors.js';
import type { AuthUser } from './auth/user.js';
import { errorEnvelope, successEnvelope } from './envelope.js';
import { bodyTooLarge, renderError, routeNotFound, toHttpError } from './errors.js';
import { HttpError } from './http-error.js';
import type {
  AppDeps,
  EnvelopeReply,
  HandlerContext,
  OperationId,
  RawReply,
  StreamReply,
} from './handler.js';
import { handlers } from './handlers.js';
import { idempotencyHeader, runIdempotently, type SentResponse } from './idempotency.js';
import {
  createOpenApiBackend,
  describeRequestErrors,
  describeRequestProblems,
  openApiDocument,
} from './openapi.js';
import {
  createProjectResolver,
  isInstanceAdmin,
  projectHeader,
  projectScopeOf,
} from './projects/request-project.js';
import {
  header,
  rejectBadRequestId,
  requestContext,
  requestLogger,
  type Req,
  type Res,
} from './request-context.js';
import { sendJson, sendText, setDefaultHeaders, streamJsonList } from './respond.js';
import { requestValueProblems } from './storable-request.js';
import { keepRawBody } from './raw-body.js';
import { logRefusedDelivery } from './triggers/webhook-refusals.js';
import { consoleRoutes, isConsolePath } from './system/console.js';
import { documentationApp, isDocumentationPath } from './system/docs.js';

/** The path parameters of `/projects/{projectId}/...`, as the router reads them. */
type ProjectParams = { projectId?: string };

const anonymous: AuthUser = Object.freeze({ name: 'anonymous', roles: [] });
/** Each app's openapi-backend initialisation, so the server listens only once routes are ready. */
const readiness = new WeakMap<RequestListener, Promise<unknown>>();

/** Whether a request carries a body (a zero Content-Length, as fetch sends on a bare POST, does not). */
function hasBody(req: Req): boolean {
  if (req.headers['transfer-encoding'] !== undefined) return true;
  return Number(req.headers['content-length'] ?? 0) > 0;
}

const jsonTypes = ['application/json', 'application/*+json'];

/**
 * Body problems (not JSON: 415; malformed: 400; too large once inflated: 413), held back until
 * the caller is authenticated and authorised, so that anonymous callers get 401 and nothing
 * else. Only a body past the limit as sent is refused before (`refuseBodiesOverLimit`).
 */
const bodyErrors = new WeakMap<Req, unknown>();

/**
 * Refuses a body past the limit as soon as that is known: from its `Content-Length` before a
 * byte is read, or once the bytes received pass it. The 413 closes the connection, so the rest
 * is never read (body-parser reads a body to its end before it answers). Before authentication:
 * nobody, signed in or not, may make the server read more than the limit.
 * `true` when the request was answered.
 */
function refuseBodiesOverLimit(
  limit: number,
  fail: (error: unknown, req: Req, res: Res) => void,
  refused: (req: Req, error: unknown) => Promise<void>,
): (req: Req, res: Res) => boolean {
  const refuse = (req: Req, res: Res) => {
    if (!res.headersSent) {
      const error = bodyTooLarge(limit);
      void refused(req, error);
      fail(error, req, res);
      return;
    }
    // Answered already (a 401 or 415 that did not need the body): it is only being drained.
    const close = () => req.socket.destroy();
    if (res.writableFinished) close();
    else res.once('finish', close);
  };
  return (req, res) => {
    if (Number(req.headers['content-length'] ?? 0) > limit) {
      // Nothing is read yet: the refusal is noted before it is answered.
      void refused(req, bodyTooLarge(limit)).finally(() => fail(bodyTooLarge(limit), req, res));
      return true;
    }
    let received = 0;
    const count = (chunk: Buffer) => {
      received += chunk.length;
      if (received <= limit) return;
      req.off('data', count);
      refuse(req, res);
    };
    req.on('data', count);
    return false;
  };
}

/**
 * Reads JSON bodies within the limit into `req.body` (body-parser, as Express' `express.json`);
 * anything else is recorded as a 415 without being read. Calls `next` once done, unless the body
 * was refused for its size (answered at once).
 */
function readJsonBodies(
  limit: number,
  fail: (error: unknown, req: Req, res: Res) => void,
  refused: (req: Req, error: unknown) => Promise<void>,
): (req: Req, res: Res, next: () => void) => void {
  const parse = express.json({
    limit,
    type: jsonTypes,
    // A webhook's signature is over the bytes received, not over the JSON they parse to.
    verify: (req, _res, buffer) => {
      if (req.path.startsWith('/hooks/')) keepRawBody(req, buffer);
    },
  });
  const refusedForSize = refuseBodiesOverLimit(limit, fail, refused);
  return (req, res, next) => {
    // No body at all (every GET): nothing for body-parser to look at.
    if (
      req.headers['content-length'] === undefined &&
      req.headers['transfer-encoding'] === undefined
    ) {
      next();
      return;
    }
    if (refusedForSize(req, res)) return;
    if (hasBody(req) && !typeIs(req, jsonTypes)) {
      const given = req.headers['content-type'] ?? 'none';
      bodyErrors.set(
        req,
        new HttpError(
          415,
          `The request body must be JSON (Content-Type: application/json), not ${given}.`,
        ),
      );
      next();
      return;
    }
    parse(req, res, (error?: unknown) => {
      // Refused for its size while it was read: answered already.
      if (res.headersSent) return;
      if (error) bodyErrors.set(req, error);
      next();
    });
  };
}

function rethrowBodyError(req: Req): void {
  if (bodyErrors.has(req)) throw bodyErrors.get(req);
}

/** The query string as Express' default ("simple") query parser reads it. */
function queryOf(req: Req): Record<string, string | string[]> {
  const search = parseUrl(req)?.query;
  return typeof search === 'string' && search !== ''
    ? (parseQueryString(search) as Record<string, string | string[]>)
    : {};
}

/**
 * The API as Node's request listener: request ids, logs, metrics and spans (`requestContext`),
 * CORS for the configured origins, the public documentation pages (an Express app of their
 * own), JSON bodies within the size limit, then every operation of the spec (routing, auth,
 * validation, typed handlers), and one error renderer.
 *
 * Operations are served on Node's own request and response, without Express: Express gives
 * every request its own prototypes (`Object.setPrototypeOf` on `req` and `res`, which also
 * slows every later property access on them) and walks its router, which together cost more
 * CPU than everything an operation does itself. What Express did for them is done here the
 * same way: body-parser reads the body, the query string is parsed as Express' default parser
 * does, `proxy-addr` finds the client address behind `Server.TrustedProxies`, and
 * `respond.ts` writes responses header for header as `res.json` did.
 */
export function createApp(deps: AppDeps): RequestListener {
  const { config, logger } = deps;
  // The client address the rate limits count by: X-Forwarded-For only from these proxies.
  const trustProxy = proxyAddr.compile(config.Server.TrustedProxies);
  const context = requestContext({ logger, metrics: deps.metrics, tracer: deps.tracing?.tracer });
  const allowCors = cors(config.Server.Cors.AllowedOrigins);
  const fail = renderError(logger, config.Server.BodyLimitBytes);
  // A webhook delivery refused (4xx) is kept in its trigger's delivery log.
  const refusedDelivery = (req: Req, error: unknown) =>
    logRefusedDelivery(deps, logger, req, error);
  const readBody = readJsonBodies(config.Server.BodyLimitBytes, fail, refusedDelivery);
  // The documentation pages and the web console (`/ui`): an Express app of their own.
  const documentation = documentationApp();
  documentation.use(consoleRoutes(config));

  const document = openApiDocument();
  const api = createOpenApiBackend(document);
  const guard = createLoginGuard(deps.db, config.Security.RateLimits, logger);
  const authorize = createAuthorizer(
    document,
    config,
    logger,
    guard,
    createApiKeyAuthenticator(deps.db, logger, guard),
  );
  const audit = createRequestAudit(createAuditRecorder(deps.db, logger));
  const operations = new Map(
    Object.entries(handlers).map(([operationId, handler]) => [
      operationId,
      dispatch(handler as AnyHandler, deps),
    ]),
  );
  const projects = createProjectResolver(deps.db, config);
  // The caller as it acts in the request's project (which the request then carries), or
  // instance-wide.
  async function actInProject(
    req: Req,
    request: OpenApiRequest,
    operation: Operation,
    caller: AuthUser,
  ): Promise<AuthUser> {
    req.caller = caller;
    const scope = projectScopeOf(operation);
    if (scope === 'instance' || (scope === 'filter' && isInstanceAdmin(config, caller))) {
      return projects.instanceUser(caller, operation.operationId);
    }
    const key =
      scope === 'path'
        ? String((api.router.parseRequest(request, operation).params as ProjectParams).projectId)
        : scope === 'header'
          ? header(req, projectHeader)
          : projectFilterOf(request);
    const resolved =
      key === undefined && operation.operationId === 'getCurrentUser'
        ? projects.resolveHome(caller)
        : projects.resolve(caller, key);
    const { project, user, limits } = await resolved;
    req.project = project;
    await assertMayRequest(
      deps.db,
      project,
      limitsOf(limits, config.Projects.Limits).requestsPerMinute,
    );
    return user;
  }
  let ready = false;
  const initialised = api.init().then(() => {
    const missing = api.router
      .getOperations()
      .filter(({ operationId }) => !operationId || !operations.has(operationId));
    if (missing.length > 0) {
      throw new Error(
        `No handler for ${missing.map((op) => `${op.method} ${op.path}`).join(', ')}`,
      );
    }
    ready = true;
  });
  initialised.catch((error: unknown) =>
    logger.error({ err: error }, 'cannot load the OpenAPI document'),
  );

  // Every operation of the spec, in this order: route, authenticate and authorise (before the
  // body is looked at, so anonymous callers only ever see 401), values no field takes (text the
  // database cannot store, bodies too deep), validate, handle.
  async function serveOperation(req: Req, res: Res): Promise<void> {
    if (!ready) await initialised;
    const method = req.method ?? 'GET';
    const request: OpenApiRequest = {
      method,
      path: req.path,
      headers: req.headers as Record<string, string | string[]>,
      query: queryOf(req),
      body: req.body,
    };
    const operation = api.router.findOperation(request);
    if (operation === 'notFound') throw routeNotFound(method, req.path);
    if (operation === 'methodNotAllowed') {
      // RFC 9110: a 405 says which methods the resource has; OPTIONS asks just that.
      const allow = [...api.router.allowedMethods(req.path), 'OPTIONS'].join(', ');
      if (method === 'OPTIONS') {
        res.statusCode = 204;
        res.setHeader('Allow', allow);
        res.end();
        return;
      }
      throw new HttpError(405, `${method} is not allowed on ${req.path}; use ${allow}.`, {
        Allow: allow,
      });
    }
    req.operation = operation;
    const address = proxyAddr(req, trustProxy);
    audit.follow(req, address, () => api.router.parseRequest(request, operation).params);
    const user = await authorize(
      operation,
      req.headers.authorization,
      address,
      (caller) => (req.user = caller),
      (caller) => actInProject(req, request, operation, caller),
    ).catch(async (error: unknown) => {
      if (!req.user) await audit.signInRefused(req, address, error);
      throw error;
    });
    if (user) req.user = user;
    await audit.signedIn(req, address);
    audit.admit(req);
    rejectBadRequestId(req);
    rethrowBodyError(req);
    const unusable = requestValueProblems(
      { path: req.path, query: request.query as Record<string, unknown>, body: request.body },
      operation,
      config.Server.MaxBodyDepth,
    );
    if (unusable.length > 0) throw new Invalid(describeRequestProblems(unusable));
    // Path and query parameters as validated (and coerced to their declared types).
    const { errors, params, query } = api.checkRequest(request, operation);
    if (errors) throw new Invalid(describeRequestErrors(errors));
    const handle = operations.get(operation.operationId ?? '');
    if (!handle) throw routeNotFound(method, req.path);
    const run = async () => {
      const reply = await handle({ params, query, body: request.body }, req);
      if (!('stream' in reply)) {
        const { data } = (reply.body ?? {}) as { data?: unknown };
        await audit.answered(req, { status: reply.status, params, data });
      }
      return reply;
    };
    const key = declaresIdempotencyKey(operation) ? req.headers['idempotency-key'] : undefined;
    if (typeof key !== 'string') {
      const reply = await run();
      if ('stream' in reply) await reply.stream(res);
      else send(res, reply);
      return;
    }
    if (!req.project)
      throw new Error(`${operation.path} takes an ${idempotencyHeader} in no project`);
    const sent = await runIdempotently(
      deps.db,
      {
        userName: (user ?? anonymous).name,
        projectId: req.project.id,
        key,
        fingerprint: {
          operation: operation.operationId,
          params: params as unknown,
          query: query as unknown,
          body: request.body as unknown,
        },
      },
      async () => {
        const reply = await run();
        if ('stream' in reply)
          throw new Error('A streaming operation cannot take an idempotency key');
        return reply;
      },
    );
    if (sent.replayed) res.setHeader('Idempotent-Replayed', 'true');
    send(res, sent);
  }

  const serve = (req: Req, res: Res) => {
    serveOperation(req, res).catch(async (error: unknown) => {
      const status = toHttpError(error, config.Server.BodyLimitBytes)?.status ?? 500;
      // Failed too: the answer is the operation's own error, and the trail's is logged.
      await audit.answered(req, { status }).catch(() => undefined);
      await refusedDelivery(req, error);
      fail(error, req, res);
    });
  };

  // Node's request listener: unlike Express, nothing catches what a step throws, so each
  // step that runs on its own (at first, and once the body is read) is guarded here.
  const guarded = (req: Req, res: Res, step: () => void) => {
    try {
      step();
    } catch (error) {
      fail(error, req, res);
    }
  };
  // The MCP endpoint (`Mcp.Enabled`; else a path like any unknown one): the caller signs in as
  // for `GET /me` before the protocol is looked at, so anonymous callers only ever see 401.
  // Loaded only when enabled: the endpoint is the only part of the API that needs the SDK.
  const mcpEndpoint = config.Mcp.Enabled ? loadMcpEndpoint(logger) : undefined;
  async function serveMcpOfCaller(req: Req, res: Res): Promise<void> {
    const { serveMcp } = await mcpEndpoint!;
    if (!ready) await initialised;
    const signIn = api.router.getOperation('getCurrentUser');
    if (!signIn) throw new Error('getCurrentUser is not in the document');
    const address = proxyAddr(req, trustProxy);
    req.user = (await authorize(signIn, req.headers.authorization, address)) ?? undefined;
    await serveMcp(req, res);
  }
  const afterBody = (req: Req, res: Res) => {
    if (mcpEndpoint && req.path === '/mcp') {
      serveMcpOfCaller(req, res).catch((error: unknown) => fail(error, req, res));
      return;
    }
    if (!isDocumentationPath(req.path) && !isConsolePath(req.path, req.headers.accept)) {
      serve(req, res);
      return;
    }
    // Express decides among the documentation routes; whatever it does not serve is the API's
    // to answer (a 404 or 405 in the envelope).
    documentation(req as express.Request, res as express.Response, (error?: unknown) => {
      if (error === undefined) serve(req, res);
      else fail(error, req, res);
    });
  };
  const listener: RequestListener = (req, res) => {
    setDefaultHeaders(res);
    guarded(req, res, () =>
      context(req, res, () => {
        if (allowCors(req, res) === 'answered') return;
        readBody(req, res, () => guarded(req, res, () => afterBody(req, res)));
      }),
    );
  };
  readiness.set(listener, initialised);
  return listener;
}

type AnyHandler = (
  context: HandlerContext<OperationId>,
) => Promise<EnvelopeReply<unknown, number> | RawReply<unknown> | StreamReply>;

function send(
  res: Res,
  response: SentResponse & { contentType?: string; headers?: Record<string, string> },
): void {
  for (const [name, value] of Object.entries(response.headers ?? {})) res.setHeader(name, value);
  if (response.contentType === undefined) sendJson(res, response.status, response.body);
  else sendText(res, response.status, response.contentType, String(response.body));
}

/** The `project` query parameter, given once (validation refuses it repeated). */
function projectFilterOf(request: OpenApiRequest): string | undefined {
  const project = typeof request.query === 'object' ? request.query.project : undefined;
  return typeof project === 'string' ? project : undefined;
}

/** Whether the contract gives the operation an `Idempotency-Key` header. */
function declaresIdempotencyKey(operation: { parameters?: unknown[] }): boolean {
  return (operation.parameters ?? []).some(
    (parameter) =>
      typeof parameter === 'object' &&
      parameter !== null &&
      (parameter as { in?: unknown }).in === 'header' &&
      String((parameter as { name?: unknown }).name).toLowerCase() ===
        idempotencyHeader.toLowerCase(),
  );
}

/** Calls a typed handler with the validated request; its reply as the envelope to send. */
function dispatch(handler: AnyHandler, deps: AppDeps) {
  return async (
    request: { params: unknown; query: unknown; body: unknown },
    req: Req,
  ): Promise<
    (SentResponse & { contentType?: string; headers?: Record<string, string> }) | StreamReply
  > => {
    const reply = await handler({
      params: request.params as never,
      query: request.query as never,
      body: request.body as never,
      user: req.user ?? anonymous,
      get project() {
        if (!req.project) throw new Error(`${req.operation?.path} works in no project`);
        return req.project;
      },
      deps,
      get log() {
        return requestLogger(req, deps.logger);
      },
      req,
    });
    if ('stream' in reply) return reply;
    if ('raw' in reply) {
      const { status = 200, contentType } = reply;
      return { status, body: reply.raw, ...(contentType === undefined ? {} : { contentType }) };
    }
    if (reply.stoppedPartWay) {
      const { status, problems } = reply.stoppedPartWay;
      return {
        status,
        body: { ...errorEnvelope(problems), data: reply.data },
        ...(reply.headers ? { headers: reply.headers } : {}),
      };
    }
    const body = successEnvelope(reply.data, reply.messages, reply.pagination);
    if (reply.itemByItem && Array.isArray(body.data)) {
      const list = { ...body, data: body.data as unknown[] };
      const headers = reply.headers ?? {};
      return {
        stream: (res) => {
          for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
          return streamJsonList(res, reply.status ?? 200, list);
        },
      };
    }
    return {
      status: reply.status ?? 200,
      body,
      ...(reply.headers ? { headers: reply.headers } : {}),
    };
  };
}

/** A running API server. */
export type ApiServer = Listening;

/** Starts the API on `Server.Host:Server.Port` (port 0 picks a free one). */
export async function startApiServer(deps: AppDeps): Promise<ApiServer> {
  const app = createApp(deps);
  await readiness.get(app);
  const retention = keepAuditRetention(deps);
  const listening = await listen(
    createServer(app),
    deps.config.Server.Host,
    deps.config.Server.Port,
  );
  deps.logger.info({ url: listening.url }, 'API listening');
  return {
    url: listening.url,
    close: async () => {
      // Open event streams would hold the server's close: they end first.
      await deps.executionEvents.close();
      await deps.installedPlugins.close();
      await retention.stop();
      await listening.close();
    },
  };
}

/**
 * The MCP endpoint's module; when it cannot load (a server installed without the SDK it is built
 * on), an error saying so, logged once at start-up and answered (503) to each `/mcp` request.
 */
function loadMcpEndpoint(logger: Logger) {
  const loading = import('./mcp/endpoint.js').catch((error: unknown) => {
    throw new Unavailable(
      `Mcp.Enabled is on, but the MCP endpoint cannot load (${error instanceof Error ? error.message : String(error)}): install @trellis/sdk and @modelcontextprotocol/sdk beside the server, or turn Mcp.Enabled off.`,
      { code: 'mcp.unavailable' },
    );
  });
  loading.catch((error: unknown) => logger.error({ err: error }, 'the MCP endpoint cannot load'));
  return loading;
}
