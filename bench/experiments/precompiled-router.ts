/**
 * Experiment (`npm run bench -- --experiment=precompiled-router`), loaded into the Trellis
 * processes with `--import`: what the API gains when openapi-backend stops rebuilding its
 * operation list with lodash and compiling one RegExp per operation on every request
 * (`OpenAPIRouter.getOperations` / `matchOperation`, openapi-backend 5.21). Never part of the
 * product; it measures a proposed fix for `server/src/openapi.ts`.
 */
import { OpenAPIRouter } from 'openapi-backend';

type Operation = ReturnType<OpenAPIRouter['getOperations']>[number];
type Request = Parameters<OpenAPIRouter['matchOperation']>[0];

interface Compiled {
  operations: Operation[];
  exact: Map<string, Operation>;
  templates: { operation: Operation; pattern: RegExp; literalLength: number }[];
}

const compiled = new WeakMap<object, Compiled>();
const originalGetOperations = OpenAPIRouter.prototype.getOperations;

function compile(router: OpenAPIRouter): Compiled {
  const definition = router.definition as object;
  let entry = compiled.get(definition);
  if (!entry) {
    const operations = originalGetOperations.call(router);
    const templates = operations
      .filter((operation) => operation.path.includes('{'))
      .map((operation) => ({
        operation,
        pattern: new RegExp(
          `^${operation.path
            .split(/\{[^}]+\}/)
            .map((literal) => literal.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
            .join('[^/]+')}$`,
        ),
        literalLength: operation.path.replace(/\{.*?\}/g, '').length,
      }))
      .sort((a, b) => b.literalLength - a.literalLength);
    entry = {
      operations,
      exact: new Map(
        operations.map((operation) => [`${operation.method} ${operation.path}`, operation]),
      ),
      templates,
    };
    compiled.set(definition, entry);
  }
  return entry;
}

OpenAPIRouter.prototype.getOperations = function getOperations(this: OpenAPIRouter) {
  return compile(this).operations;
};

const originalMatch = OpenAPIRouter.prototype.matchOperation;
OpenAPIRouter.prototype.matchOperation = function matchOperation(
  this: OpenAPIRouter,
  req: Request,
  strict?: boolean,
) {
  const normalized = this.normalizeRequest(req);
  const underRoot = (this as unknown as { isUnderApiRoot(path: string): boolean }).isUnderApiRoot(
    normalized.path,
  );
  if (!underRoot) return originalMatch.call(this, req, strict as never);
  const path = this.normalizePath(normalized.path);
  const { exact, templates } = compile(this);
  const found =
    exact.get(`${normalized.method} ${path}`) ??
    templates.find(
      ({ operation, pattern }) => operation.method === normalized.method && pattern.test(path),
    )?.operation;
  // Not found, or another method: the original answers with its 404/405 semantics.
  return found ?? originalMatch.call(this, req, strict as never);
} as OpenAPIRouter['matchOperation'];
