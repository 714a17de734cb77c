import { readFileSync } from 'node:fs';
import type { ErrorObject, Options as AjvOptions, ValidateFunction } from 'ajv';
import { OpenAPIBackend, OpenAPIRouter } from 'openapi-backend';
import type { Document, Operation, ParsedRequest, Request } from 'openapi-backend';
import { installPath } from '#platform/install-root.js';
import { createAjv } from '#definition/validation/ajv.js';
import {
  placedProblems,
  validationErrorProblems,
  type MessageStyle,
  type ValidationProblem,
} from '#definition/validation/describe.js';
import { formatPath, type PathSegment } from '#definition/validation/path.js';
import type { Problem } from '#definition/validation/problem.js';

const documentUrl = installPath('generated', 'openapi.json');
const yamlUrl = installPath('generated', 'openapi.yaml');

/** The OpenAPI document as text, read once: it is the route table and the validation schema. */
export const openApiJson: string = readFileSync(documentUrl, 'utf8');

/** A fresh copy of the document (openapi-backend dereferences it in place). */
export function openApiDocument(): Document {
  return JSON.parse(openApiJson) as Document;
}

/** The same document as YAML, if generated. */
export function readOpenApiYaml(): string | null {
  try {
    return readFileSync(yamlUrl, 'utf8');
  } catch {
    return null;
  }
}

/** The numeric formats OpenAPI adds to JSON Schema; ajv-formats knows the rest. */
const openApiFormats: Record<string, { type: 'number'; validate: (n: number) => boolean }> = {
  int32: { type: 'number', validate: (n) => Number.isInteger(n) && n >= -(2 ** 31) && n < 2 ** 31 },
  int64: { type: 'number', validate: (n) => Number.isInteger(n) },
  float: { type: 'number', validate: () => true },
  double: { type: 'number', validate: () => true },
};

/** A path template as openapi-backend matches it: `/workflows/{id}` → `^/workflows/[^/]+$`. */
function pathPattern(template: string): RegExp {
  const literals = template
    .split(/\{[^}]+\}/)
    .map((literal) => literal.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${literals.join('[^/]+')}$`);
}

/**
 * A path template's parameters as openapi-backend reads them (its `bath-es5` matcher, compiled
 * once instead of on every parse): each `{name}` matches one segment, possibly empty, and is
 * URI-decoded; null when the path does not fit the template.
 */
function pathParamsMatcher(template: string): (path: string) => Record<string, string> | null {
  const names = [...template.matchAll(/\{([A-Za-z0-9_-]+)\}/g)].map((match) => match[1] ?? '');
  const pattern = new RegExp(`^${template.replace(/\{[A-Za-z0-9_-]+\}/g, '([^\\/]*)')}$`);
  return (path) => {
    const match = pattern.exec(path);
    if (!match) return null;
    const params: Record<string, string> = {};
    names.forEach((name, i) => (params[name] = decodedSegment(match[i + 1] ?? '')));
    return params;
  };
}

/** A path segment URI-decoded; as sent when it does not decode (storable-request.ts refuses it first). */
function decodedSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** Whether openapi-backend rewrites any of the operation's query parameters while parsing. */
function decodesQueryParameters(operation: Operation): boolean {
  return (operation.parameters ?? []).some(
    (parameter) =>
      !('$ref' in parameter) &&
      parameter.in === 'query' &&
      (parameter.content?.['application/json'] !== undefined || parameter.explode === false),
  );
}

function isPrimitive(value: unknown): boolean {
  return value === null || typeof value !== 'object';
}

/** A copy of a parsed query whose values are primitives or arrays of them; null otherwise. */
function copyFlatQuery(query: object): Record<string, unknown> | null {
  const copy: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(query)) {
    if (isPrimitive(value)) copy[name] = value;
    else if (Array.isArray(value) && value.every(isPrimitive))
      copy[name] = [...(value as unknown[])];
    else return null;
  }
  return copy;
}

/**
 * openapi-backend's router with its operation list built once and every path template compiled
 * once. The library's own router rebuilds the list and compiles one RegExp per operation on each
 * call, twice per request: a quarter of the API's CPU. Matching is the library's (an exact path
 * and method first, then templates by specificity, most literal characters first; 404 when no
 * path matches and 405 when a path matches but not the method) with one rule of OpenAPI's added:
 * a concrete path is matched before the templates, so a method it lacks is 405 there
 * (`PUT /workflows/Add`), not an operation of a template that also matches (`/workflows/{id}`).
 * The API root is `/`.
 */
export class PrecompiledRouter extends OpenAPIRouter {
  readonly #operations: Operation[];
  readonly #exact: Map<string, Operation>;
  /** The methods of each path without a template, upper case and sorted. */
  readonly #concrete = new Map<string, string[]>();
  readonly #templates: { operation: Operation; pattern: RegExp }[];
  readonly #paramsMatchers = new Map<string, (path: string) => Record<string, string> | null>();
  readonly #decodesQuery = new WeakMap<Operation, boolean>();

  constructor(definition: Document, ignoreTrailingSlashes: boolean) {
    super({ definition, ignoreTrailingSlashes });
    this.#operations = super.getOperations();
    this.#exact = new Map(this.#operations.map((op) => [`${op.method} ${op.path}`, op]));
    for (const { path, method } of this.#operations) {
      if (path.includes('{')) continue;
      this.#concrete.set(path, [...(this.#concrete.get(path) ?? []), method.toUpperCase()].sort());
    }
    const specificity = (op: Operation) => op.path.replace(/\{.*?\}/g, '').length;
    this.#templates = [...this.#operations]
      .sort((a, b) => specificity(b) - specificity(a))
      .map((operation) => ({ operation, pattern: pathPattern(operation.path) }));
  }

  override getOperations(): Operation[] {
    return this.#operations;
  }

  override matchOperation(req: Request): Operation | undefined;
  override matchOperation(req: Request, strict: boolean): Operation;
  override matchOperation(req: Request, strict = false): Operation | undefined {
    const found = this.findOperation(req);
    if (typeof found !== 'string') return found;
    if (!strict) return undefined;
    throw new Error(
      found === 'notFound'
        ? '404-notFound: no route matches request'
        : '405-methodNotAllowed: this method is not registered for the route',
    );
  }

  /** The methods served on `requestPath`, upper case and sorted, for an `Allow` header. */
  allowedMethods(requestPath: string): string[] {
    const path = this.normalizePath(requestPath);
    const concrete = this.#concrete.get(path);
    if (concrete) return concrete;
    const methods = new Set<string>();
    for (const { operation, pattern } of this.#templates) {
      if (operation.path === path || pattern.test(path))
        methods.add(operation.method.toUpperCase());
    }
    return [...methods].sort();
  }

  /** The operation serving a request, or why none does. */
  findOperation(req: Request): Operation | 'notFound' | 'methodNotAllowed' {
    const { method, path: requestPath } = this.normalizeRequest(req);
    const path = this.normalizePath(requestPath);
    const exact = this.#exact.get(`${method} ${path}`);
    if (exact) return exact;
    if (this.#concrete.has(path)) return 'methodNotAllowed';
    let pathMatched = false;
    for (const { operation, pattern } of this.#templates) {
      if (!pattern.test(path)) continue;
      if (operation.method === method) return operation;
      pathMatched = true;
    }
    return pathMatched ? 'methodNotAllowed' : 'notFound';
  }

  /**
   * The library's parse (it runs four times per request) without its per-call costs: path
   * templates compiled once, no deep clone through lodash, no cookie parsing without a cookie.
   * Requests the shortcut does not cover (a cookie, a text body, a query string, nested query
   * values, query parameters the library decodes) take the library's own path.
   */
  override parseRequest(req: Request, operation?: Operation): ParsedRequest {
    const query = typeof req.query === 'object' ? copyFlatQuery(req.query) : null;
    if (
      query === null ||
      req.headers['cookie'] !== undefined ||
      (req.body && typeof req.body !== 'object') ||
      (operation && Object.keys(query).length > 0 && this.#decodesQueryOf(operation))
    ) {
      return super.parseRequest(req, operation);
    }
    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(req.headers)) headers[name.toLowerCase()] = value;
    const normalized = this.normalizeRequest(req);
    const params = operation
      ? (this.#paramsMatcher(operation.path)(this.normalizePath(normalized.path)) ?? {})
      : {};
    const requestBody: unknown = req.body;
    return { ...normalized, params, headers, query, cookies: {}, requestBody };
  }

  /** The path parameters of a request to `operation`, URI-decoded, as `parseRequest` reads them. */
  pathParams(operation: Operation, requestPath: string): Record<string, string> {
    return this.#paramsMatcher(operation.path)(this.normalizePath(requestPath)) ?? {};
  }

  #paramsMatcher(template: string): (path: string) => Record<string, string> | null {
    let matcher = this.#paramsMatchers.get(template);
    if (!matcher) {
      matcher = pathParamsMatcher(template);
      this.#paramsMatchers.set(template, matcher);
    }
    return matcher;
  }

  #decodesQueryOf(operation: Operation): boolean {
    let decodes = this.#decodesQuery.get(operation);
    if (decodes === undefined) {
      decodes = decodesQueryParameters(operation);
      this.#decodesQuery.set(operation, decodes);
    }
    return decodes;
  }
}

/** What a request check needs to know of an operation, worked out on its first request. */
interface RequestShape {
  /** openapi-backend's compiled validators (the body's, then the parameters'). */
  validators: ValidateFunction[];
  /** Query parameters declared as arrays: a single value becomes a list of one. */
  arrayQuery: ReadonlySet<string>;
  /** The declared header parameters, lower case: the only headers the validators look at. */
  headers: readonly string[];
  /** Cases the library's own path serves: query parameters it decodes, cookie parameters. */
  byLibrary: boolean;
}

/** A request checked against its operation. */
export interface RequestCheck {
  /** Every problem, as Ajv reports them; null when there is none. */
  errors: ErrorObject[] | null;
  /** Path and query parameters as validated (and coerced to their declared types). */
  params: Record<string, unknown>;
  query: Record<string, unknown>;
}

const noErrors: ErrorObject[] = [];

/** openapi-backend routing through the {@link PrecompiledRouter} once the document is loaded. */
export class TrellisOpenApiBackend extends OpenAPIBackend {
  declare router: PrecompiledRouter;
  readonly #shapes = new WeakMap<Operation, RequestShape>();

  override async init(): Promise<this> {
    await super.init();
    this.router = new PrecompiledRouter(this.definition, this.ignoreTrailingSlashes);
    // The validator looks operations up through the router too.
    this.validator.router = this.router;
    return this;
  }

  /**
   * Checks a request as `validator.validateRequest` does, with the same compiled validators and
   * the same errors, without its per-request costs: what it looks up in the operation on every
   * call (array and JSON query parameters, lodash) is worked out once, and the validators get
   * the declared headers rather than a copy of all of them (the others are never checked).
   * Requests whose operation has query parameters the library decodes, or cookie parameters,
   * and bodies that are not parsed JSON, take the library's own path.
   */
  checkRequest(req: Request, operation: Operation): RequestCheck {
    const shape = this.#shapeOf(operation);
    const query = typeof req.query === 'object' ? copyFlatQuery(req.query) : null;
    if (shape.byLibrary || query === null || (req.body != null && typeof req.body !== 'object')) {
      const result = this.validator.validateRequest(req, operation);
      const coerced = (result.coerced ?? {}) as { params?: object; query?: object };
      return {
        errors: result.errors ?? null,
        params: (coerced.params ?? {}) as Record<string, unknown>,
        query: (coerced.query ?? {}) as Record<string, unknown>,
      };
    }
    for (const name of shape.arrayQuery) {
      const value = query[name];
      if (typeof value === 'string') query[name] = [value];
    }
    const header: Record<string, unknown> = {};
    for (const name of shape.headers) {
      const value = req.headers[name];
      if (value !== undefined) header[name] = value;
    }
    const parameters: Record<string, unknown> = {
      path: this.router.pathParams(operation, req.path),
      query,
      header,
      cookie: {},
    };
    // The library adds the body when it is an object or the content type is JSON; an absent
    // body is missing to the validators either way.
    if (req.body !== undefined) parameters.requestBody = req.body;
    let errors: ErrorObject[] = noErrors;
    for (const validate of shape.validators) {
      if (validate(parameters)) continue;
      if (errors === noErrors) errors = [];
      errors.push(...(validate.errors ?? []));
    }
    return {
      errors: errors.length > 0 ? errors : null,
      params: parameters.path as Record<string, unknown>,
      query,
    };
  }

  #shapeOf(operation: Operation): RequestShape {
    let shape = this.#shapes.get(operation);
    if (shape) return shape;
    const declared = (operation.parameters ?? []).filter(
      (parameter): parameter is Exclude<typeof parameter, { $ref: string }> =>
        !('$ref' in parameter),
    );
    const validators = operation.operationId
      ? (this.validator.getRequestValidatorsForOperation(operation.operationId) ?? [])
      : [];
    shape = {
      validators,
      arrayQuery: new Set(
        declared
          .filter(
            (parameter) =>
              parameter.in === 'query' &&
              (parameter.schema as { type?: unknown } | undefined)?.type === 'array',
          )
          .map((parameter) => parameter.name),
      ),
      headers: declared
        .filter((parameter) => parameter.in === 'header')
        .map((parameter) => parameter.name.toLowerCase()),
      byLibrary:
        validators.length === 0 ||
        decodesQueryParameters(operation) ||
        declared.some((parameter) => parameter.in === 'cookie'),
    };
    this.#shapes.set(operation, shape);
    return shape;
  }
}

/**
 * An openapi-backend over the generated document: routes every request and validates its
 * path, query and body. The document is OpenAPI 3.1, so schemas are JSON Schema 2020-12
 * (`unevaluatedProperties` included) and checked by Ajv2020 with every error reported.
 *
 * `quick` compiles each operation's request validator on its first request instead of
 * compiling every request and response validator up front (seconds per app, and responses are
 * never validated here); the document itself is checked where it is generated.
 */
export function createOpenApiBackend(document: Document): TrellisOpenApiBackend {
  return new TrellisOpenApiBackend({
    definition: document,
    strict: true,
    quick: true,
    validate: true,
    coerceTypes: true,
    // `verbose` gives errors their schema: union branches and pattern descriptions (describe.ts).
    ajvOpts: { allErrors: true, strict: false, verbose: true },
    customizeAjv: (_ajv, options: AjvOptions) => {
      const ajv = createAjv('2020-12', options);
      for (const [name, format] of Object.entries(openApiFormats)) ajv.addFormat(name, format);
      return ajv;
    },
  });
}

const sectionNames: Record<string, string> = {
  requestBody: 'body',
  path: 'path',
  query: 'query',
  header: 'header',
};

/** `/requestBody/tasks/0/name` → `body.tasks[0].name`. */
const requestMessageStyle: MessageStyle = {
  patternDescriptions: true,
  place: (path: readonly PathSegment[]) => {
    const [section, ...rest] = path;
    const place =
      section === undefined ? '' : formatPath([sectionNames[section] ?? section, ...rest]);
    return place || 'request';
  },
};

/**
 * One problem per field problem, naming the field as the client sent it:
 * `body.name: must be string`, `path.workflowId: must match format "uuid"`, `body: is required`.
 */
export function describeRequestErrors(errors: readonly ErrorObject[]): Problem[] {
  // openapi-backend reports a body that is not JSON at the request's root.
  const located = errors.map((error) =>
    error.keyword === 'parse' && error.instancePath === ''
      ? { ...error, instancePath: '/requestBody' }
      : error,
  );
  return validationErrorProblems(located, requestMessageStyle);
}

/** Problems found beside the validator, placed like its own (`body.name: ...`). */
export function describeRequestProblems(problems: readonly ValidationProblem[]): Problem[] {
  return placedProblems(problems, requestMessageStyle);
}
