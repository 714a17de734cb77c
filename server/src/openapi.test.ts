import type { ErrorObject } from 'ajv';
import { OpenAPIRouter } from 'openapi-backend';
import type { Request } from 'openapi-backend';
import { describe, expect, it } from 'vitest';
import { renderProblem } from '#definition/validation/problem.js';
import {
  createOpenApiBackend,
  describeRequestErrors as describeRequestProblems,
  openApiDocument,
} from './openapi.js';

/** What a user reads of each problem. */
const describeRequestErrors = (errors: ErrorObject[]) =>
  describeRequestProblems(errors).map(renderProblem);

/**
 * Errors without what Ajv's `verbose` adds (the data and schema at each error): the request
 * objects the two validate differ in what no schema reads (headers it does not declare).
 */
const located = (errors: ErrorObject[] | null | undefined) =>
  errors?.map(({ data: _data, schema: _schema, parentSchema: _parent, ...rest }) => rest);

const error = (instancePath: string, keyword: string, params: object, message?: string) =>
  ({ instancePath, keyword, params, message, schemaPath: '#' }) as ErrorObject;

describe('describeRequestErrors', () => {
  it('names each field as the client sent it, one message per problem', () => {
    expect(
      describeRequestErrors([
        error('/requestBody/name', 'type', { type: 'string' }, 'must be string'),
        error('/path/workflowId', 'format', { format: 'uuid' }, 'must match format "uuid"'),
        error('/requestBody', 'required', { missingProperty: 'definition' }),
        error('', 'required', { missingProperty: 'requestBody' }),
        error('/requestBody', 'unevaluatedProperties', { unevaluatedProperty: 'extra' }),
        error('/requestBody/type', 'enum', { allowedValues: ['Manual', 'TimeBased'] }),
        error(
          '/requestBody/tasks/0/name',
          'minLength',
          { limit: 1 },
          'must NOT have fewer than 1 characters',
        ),
        error('/query/pageSize', 'maximum', { limit: 1000 }, 'must be <= 1000'),
      ]),
    ).toEqual([
      'body.name: must be string',
      'path.workflowId: must match format "uuid"',
      'body.definition: is required',
      'body: is required',
      'body.extra: is not allowed',
      'body.type: must be one of "Manual", "TimeBased"',
      'body.tasks[0].name: must NOT have fewer than 1 characters',
      'query.pageSize: must be <= 1000',
    ]);
  });
  it('codes each problem, with its place as the path', () => {
    expect(
      describeRequestProblems([
        error('/requestBody', 'required', { missingProperty: 'definition' }),
        error('/requestBody', 'unevaluatedProperties', { unevaluatedProperty: 'extra' }),
        error('/requestBody/type', 'enum', { allowedValues: ['Manual', 'TimeBased'] }),
        error('/query/pageSize', 'maximum', { limit: 1000 }, 'must be <= 1000'),
      ]),
    ).toEqual([
      { code: 'validation.required', path: 'body.definition', message: 'is required' },
      { code: 'validation.unknown', path: 'body.extra', message: 'is not allowed' },
      {
        code: 'validation.enum',
        path: 'body.type',
        message: 'must be one of "Manual", "TimeBased"',
      },
      { code: 'validation.invalid', path: 'query.pageSize', message: 'must be <= 1000' },
    ]);
  });

  it('tells a key with a dot in it from nested keys', () => {
    expect(
      describeRequestErrors([
        error('/requestBody', 'additionalProperties', { additionalProperty: 'a.b' }),
        error('/requestBody/a', 'additionalProperties', { additionalProperty: 'b' }),
      ]),
    ).toEqual(['body["a.b"]: is not allowed', 'body.a.b: is not allowed']);
  });

  it('says where JSON did not parse', () => {
    const parse = (instancePath: string) => ({
      ...error(instancePath, 'parse', []),
      message: 'Unexpected end of JSON input',
    });
    expect(describeRequestErrors([parse(''), parse('/query/filter')])).toEqual([
      'body: is not valid JSON (Unexpected end of JSON input)',
      'query.filter: is not valid JSON (Unexpected end of JSON input)',
    ]);
  });

  it('drops duplicates', () => {
    const same = error('/requestBody/name', 'type', { type: 'string' }, 'must be string');
    expect(describeRequestErrors([same, same])).toHaveLength(1);
  });
});

describe('createOpenApiBackend routing', () => {
  const methods = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

  /** The operation, or the 404/405 error, a router gives a request in strict mode. */
  function route(router: OpenAPIRouter, method: string, path: string): string {
    try {
      return router.matchOperation({ method, path, headers: {} }, true).operationId ?? '?';
    } catch (error) {
      return (error as Error).message;
    }
  }

  it('matches every request as openapi-backend’s own router does, 404 and 405 included, but a concrete path first', async () => {
    const api = await createOpenApiBackend(openApiDocument()).init();
    const library = new OpenAPIRouter({ definition: api.definition });
    const paths = [
      ...library.getOperations().flatMap(({ path }) => {
        const filled = path.replace(/\{[^}]+\}/g, 'x1');
        return [filled, `${filled}/`, `${filled}/extra`, `${filled}?page=2`];
      }),
      '/',
      '',
      '/nope',
      '//workflows',
      '/workflows/a/b/c/d/e',
    ];
    const answers = paths.flatMap((path) =>
      methods.map((method) => [method, path, route(api.router, method.toUpperCase(), path)]),
    );
    // OpenAPI matches a concrete path before templates; the library tries templates for a method
    // the concrete path lacks (PUT /workflows/Add went to updateWorkflow with the id "Add").
    const concrete = new Set(
      library
        .getOperations()
        .map(({ path }) => path)
        .filter((path) => !path.includes('{')),
    );
    const expected = paths.flatMap((path) =>
      methods.map((method) => {
        const answer = route(library, method.toUpperCase(), path);
        const bare = path.split('?')[0]!.replace(/(.)\/$/, '$1');
        const onlyByTemplate = concrete.has(bare) && !answer.startsWith('40');
        const declared = library
          .getOperations()
          .some((op) => op.path === bare && op.method === method);
        return [
          method,
          path,
          onlyByTemplate && !declared
            ? '405-methodNotAllowed: this method is not registered for the route'
            : answer,
        ];
      }),
    );
    expect(answers).toEqual(expected);
    expect(route(api.router, 'PUT', '/workflows/Add')).toMatch(/^405/);
    expect(route(library, 'PUT', '/workflows/Add')).toBe('updateWorkflow');
    expect(api.router.allowedMethods('/workflows/Add')).toEqual(['POST']);
    expect(answers.some(([, , answer]) => answer?.startsWith('404'))).toBe(true);
    expect(answers.some(([, , answer]) => answer?.startsWith('405'))).toBe(true);
    expect(api.router.getOperations()).toEqual(library.getOperations());
    // Built once, not per call as the library's router does.
    expect(api.router.getOperations()).toBe(api.router.getOperations());
    // Every path × method through two routers: about a second alone, more on a busy machine.
  }, 30_000);

  it('parses every request as openapi-backend’s own router does', async () => {
    const api = await createOpenApiBackend(openApiDocument()).init();
    const library = new OpenAPIRouter({ definition: api.definition });
    const headers = { authorization: 'Basic eDp5', 'content-type': 'application/json' };
    const queries: Request['query'][] = [
      {},
      { page: '2', pageSize: '10' },
      { tag: ['a', 'b'] },
      'page=3',
    ];
    const requests = library.getOperations().flatMap(({ method, path }) =>
      [path.replace(/\{[^}]+\}/g, 'x%201'), path.replace(/\{[^}]+\}/g, '')].flatMap((filled) =>
        queries.flatMap((query) => [
          { method, path: filled, headers, query, body: { name: 'n' } },
          { method, path: `${filled}/`, headers: { ...headers, cookie: 'a=b' }, query },
          { method, path: filled, headers, query, body: '{"name":"n"}' },
        ]),
      ),
    );
    for (const request of requests) {
      const operation = api.router.matchOperation(request);
      expect(api.router.parseRequest(request)).toEqual(library.parseRequest(request));
      if (operation) {
        expect(api.router.parseRequest(request, operation)).toEqual(
          library.parseRequest(request, operation),
        );
      }
    }
  });
});

describe('checkRequest', () => {
  // Every operation of the contract in every combination below: it grows with the contract.
  it('finds what openapi-backend’s validateRequest finds, and coerces the same parameters', async () => {
    const api = await createOpenApiBackend(openApiDocument()).init();
    const ids = ['0b6f4f8e-3c1a-4e0b-9a51-6f3f2a9c1d10', 'not-a-uuid', 'x%201', ''];
    const queries: Record<string, string | string[]>[] = [
      {},
      { page: '2', pageSize: '10' },
      { page: '0', pageSize: 'many' },
      { page: ['1', '2'] },
      { includeTasks: 'true', after: ids[0]! },
      { status: 'Running', extra: '1' },
    ];
    const headers: Record<string, string>[] = [
      {},
      { 'content-type': 'application/json', 'idempotency-key': 'key-1' },
      { 'content-type': 'application/json; charset=utf-8', 'last-event-id': 'abc' },
    ];
    const bodies: unknown[] = [
      undefined,
      null,
      {},
      [],
      { definition: '{"name":"n","tasks":[]}' },
      { definition: 1, extra: true },
      { workflowId: ids[0], inputs: { a: 1 } },
      { name: 'n', type: 'Manual', properties: {} },
    ];
    let compared = 0;
    for (const operation of api.router.getOperations()) {
      for (const id of ids) {
        const path = operation.path.replace(/\{[^}]+\}/g, id);
        for (const query of queries) {
          for (const header of headers) {
            for (const body of bodies) {
              const request = (): Request => ({
                method: operation.method,
                path,
                headers: { authorization: 'Basic eDp5', ...header },
                query: structuredClone(query),
                body: structuredClone(body),
              });
              const mine = api.checkRequest(request(), operation);
              const library = api.validator.validateRequest(request(), operation);
              expect(located(mine.errors), `${operation.operationId} ${path}`).toEqual(
                located(library.errors),
              );
              if (!library.errors) {
                expect(mine.params).toEqual(library.coerced?.params ?? {});
                expect(mine.query).toEqual(library.coerced?.query ?? {});
              }
              compared++;
            }
          }
        }
      }
    }
    expect(compared).toBeGreaterThan(1000);
  }, 20_000);
});
