import { createServer } from 'node:http';
import express from 'express';
import type { Express, Request, RequestHandler, Response } from 'express';
import type { Request as OpenApiRequest } from 'openapi-backend';
import { Invalid } from '../../core/src/errors.js';
import { createLoginGuard } from './auth/login-guard.js';
import { listen, type Listening } from '../../core/src/http/listen.js';
import { createAuthorizer } from './auth/security.js';
import { cors } from './cors.js';
import type { AuthUser } from './auth/user.js';
import { successEnvelope } from './envelope.js';
import { HttpError, renderErrors, routeNotFound } from './errors.js';
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
import { rejectBadRequestId, requestContext, requestLogger } from './request-context.js';
import { keepRawBody } from './raw-body.js';
import { requestValueProblems } from './storable-request.js';
import { consoleRoutes } from './system/console.js';
import { documentationRoutes } from './system/docs.js';

const anonymous: AuthUser = Object.freeze({ name: 'anonymous', roles: [] });
/** Each app's openapi-backend initialisation, so the server listens only once routes are ready. */
const readiness = new WeakMap<Express, Promise<unknown>>();

/** Whether a request carries a body (a zero Content-Length, as fetch sends on a bare POST, does not). */
function hasBody(req: Request): boolean {
  if (req.headers['transfer-encoding'] !== undefined) return true;
  return Number(req.headers['content-length'] ?? 0) > 0;
}

const jsonTypes = ['application/json', 'application/*+json'];

/**
 * Body problems (not JSON: 415; malformed: 400; too large: 413), held back until the caller is
 * authenticated and authorised, so that anonymous callers always get 401 and nothing else.
 */
const bodyErrors = new WeakMap<Request, unknown>();

/** Reads JSON bodies within the limit; anything else is recorded as a 415 without being read. */
function readJsonBodies(limit: number): RequestHandler {
  const parse = express.json({
    limit,
    type: jsonTypes,
    verify: (req, _res, buffer) => {
      if ((req as Request).path.startsWith('/hooks/')) keepRawBody(req as Request, buffer);
    },
  });
  return (req, res, next) => {
    // No body at all (every GET): nothing for body-parser to look at.
    if (
      req.headers['content-length'] === undefined &&
      req.headers['transfer-encoding'] === undefined
    ) {
      next();
      return;
    }
    if (hasBody(req) && !req.is(jsonTypes)) {
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
      if (error) bodyErrors.set(req, error);
      next();
    });
  };
}

function rethrowBodyError(req: Request): void {
  if (bodyErrors.has(req)) throw bodyErrors.get(req);
}

/**
 * The Express app: request ids, logs, metrics and spans (`requestContext`), CORS for the
 * configured origins, JSON bodies within the size limit, the public documentation routes and the
 * web console (`/ui`), then
 * every operation of the spec through openapi-backend (routing, auth, validation, typed
 * handlers), and one error renderer at the end.
 */
export function createApp(deps: AppDeps): Express {
  const { config, logger } = deps;
  const app = express();
  app.disable('x-powered-by');
  // The client address (`req.ip`) the rate limits count by: X-Forwarded-For only from these.
  app.set(
    'trust proxy',
    config.Server.TrustedProxies.length > 0 ? config.Server.TrustedProxies : false,
  );
  app.use(requestContext({ logger, metrics: deps.metrics, tracer: deps.tracing?.tracer }));
  app.use(cors(config.Server.Cors.AllowedOrigins));
  app.use(readJsonBodies(config.Server.BodyLimitBytes));
  app.use(documentationRoutes());
  app.use(consoleRoutes(config));

  const document = openApiDocument();
  const api = createOpenApiBackend(document);
  const authorize = createAuthorizer(
    document,
    config,
    logger,
    createLoginGuard(deps.db, config.Security.RateLimits, logger),
  );
  const operations = new Map(
    Object.entries(handlers).map(([operationId, handler]) => [
      operationId,
      dispatch(handler as AnyHandler, deps),
    ]),
  );
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
  readiness.set(app, initialised);

  // Every operation of the spec, in this order: route, authenticate and authorise (before the
  // body is looked at, so anonymous callers only ever see 401), values no field takes (text the
  // database cannot store, bodies too deep), validate, handle.
  app.use(async (req, res) => {
    if (!ready) await initialised;
    const request: OpenApiRequest = {
      method: req.method,
      path: req.path,
      headers: req.headers as Record<string, string | string[]>,
      query: req.query as Record<string, string | string[]>,
      body: req.body as unknown,
    };
    const operation = api.router.findOperation(request);
    if (operation === 'notFound') throw routeNotFound(req.method, req.path);
    if (operation === 'methodNotAllowed') {
      // RFC 9110: a 405 says which methods the resource has; OPTIONS asks just that.
      const allow = [...api.router.allowedMethods(req.path), 'OPTIONS'].join(', ');
      if (req.method === 'OPTIONS') {
        res.setHeader('Allow', allow).status(204).end();
        return;
      }
      throw new HttpError(405, `${req.method} is not allowed on ${req.path}; use ${allow}.`, {
        Allow: allow,
      });
    }
    req.operation = operation;
    const user = await authorize(operation, req.headers.authorization, req.ip ?? '');
    if (user) req.user = user;
    rejectBadRequestId(req);
    rethrowBodyError(req);
    const unusable = requestValueProblems(
      { path: req.path, query: request.query as Record<string, unknown>, body: request.body },
      operation,
      config.Server.MaxBodyDepth,
    );
    if (unusable.length > 0) throw new Invalid(describeRequestProblems(unusable));
    const validation = api.validator.validateRequest(request, operation);
    if (validation.errors) throw new Invalid(describeRequestErrors(validation.errors));
    const handle = operations.get(operation.operationId ?? '');
    if (!handle) throw routeNotFound(req.method, req.path);
    // Path and query parameters as validated (and coerced to their declared types).
    const { params = {}, query = {} } = validation.coerced ?? {};
    const run = () => handle({ params, query, body: request.body }, req);
    const key = declaresIdempotencyKey(operation) ? req.get(idempotencyHeader) : undefined;
    if (key === undefined) {
      const reply = await run();
      if ('stream' in reply) await reply.stream(res);
      else send(res, reply);
      return;
    }
    const sent = await runIdempotently(
      deps.db,
      {
        userName: (user ?? anonymous).name,
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
  });
  app.use(renderErrors(logger, config.Server.BodyLimitBytes));
  return app;
}

type AnyHandler = (
  context: HandlerContext<OperationId>,
) => Promise<EnvelopeReply<unknown, number> | RawReply<unknown> | StreamReply>;

function send(
  res: Response,
  response: SentResponse & { contentType?: string; headers?: Record<string, string> },
): void {
  if (response.headers) res.set(response.headers);
  if (response.contentType === undefined) res.status(response.status).json(response.body);
  else res.status(response.status).type(response.contentType).send(response.body);
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
    req: Request,
  ): Promise<
    (SentResponse & { contentType?: string; headers?: Record<string, string> }) | StreamReply
  > => {
    const reply = await handler({
      params: request.params as never,
      query: request.query as never,
      body: request.body as never,
      user: req.user ?? anonymous,
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
    return {
      status: reply.status ?? 200,
      body: successEnvelope(reply.data, reply.messages, reply.pagination),
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
      await listening.close();
    },
  };
}
