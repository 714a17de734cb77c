/**
 * Moves the links that `@link` (spec/common/links.tsp) wrote as each operation's `x-links` to
 * the operation's 200 (or 202) response, where OpenAPI reads them, and checks each against the document:
 * the operation it names exists and takes every parameter it fills.
 */
import type { Json } from './closed-objects.js';

type JsonObject = { [key: string]: Json };

const methods = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

const isObject = (value: Json | undefined): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const isRuntimeExpression = (value: Json): boolean =>
  typeof value === 'string' && /^\$(request|response)\./.test(value);

/** Every operation of the document with its path item, by operation id. */
function operationsById(
  document: JsonObject,
): Map<string, { operation: JsonObject; item: JsonObject }> {
  const found = new Map<string, { operation: JsonObject; item: JsonObject }>();
  const paths = isObject(document.paths) ? document.paths : {};
  for (const item of Object.values(paths)) {
    if (!isObject(item)) continue;
    for (const method of methods) {
      const operation = item[method];
      if (isObject(operation) && typeof operation.operationId === 'string') {
        found.set(operation.operationId, { operation, item });
      }
    }
  }
  return found;
}

/** The names of an operation's parameters (its own and its path item's, `$ref`s resolved). */
function parameterNames(
  document: JsonObject,
  operation: JsonObject,
  item: JsonObject,
): Set<string> {
  const names = new Set<string>();
  const components = isObject(document.components) ? document.components : {};
  const shared = isObject(components.parameters) ? components.parameters : {};
  for (const list of [item.parameters, operation.parameters]) {
    if (!Array.isArray(list)) continue;
    for (const entry of list) {
      if (!isObject(entry)) continue;
      const ref = typeof entry.$ref === 'string' ? entry.$ref : null;
      const parameter = ref ? shared[ref.replace('#/components/parameters/', '')] : entry;
      if (isObject(parameter) && typeof parameter.name === 'string') names.add(parameter.name);
    }
  }
  return names;
}

/** The document with every `x-links` moved to its operation's success response; throws on a bad link. */
export function withLinks(document: Json): Json {
  if (!isObject(document)) return document;
  const operations = operationsById(document);
  const problems: string[] = [];
  for (const [sourceId, { operation }] of operations) {
    const links = operation['x-links'];
    if (links === undefined) continue;
    delete operation['x-links'];
    const responses = isObject(operation.responses) ? operation.responses : {};
    // An operation that accepts work for later (a webhook delivery) succeeds with 202.
    const success = responses['200'] ?? responses['202'];
    if (!isObject(links) || !isObject(success)) {
      problems.push(`${sourceId}: links need a 200 or 202 response`);
      continue;
    }
    for (const [name, link] of Object.entries(links)) {
      if (!isObject(link) || typeof link.operationId !== 'string') continue;
      const target = operations.get(link.operationId);
      if (!target) {
        problems.push(`${sourceId} → ${name}: no operation "${link.operationId}"`);
        continue;
      }
      const taken = parameterNames(document, target.operation, target.item);
      for (const parameter of Object.keys(isObject(link.parameters) ? link.parameters : {})) {
        if (!taken.has(parameter)) {
          problems.push(`${sourceId} → ${name}: ${link.operationId} takes no "${parameter}"`);
        }
      }
      if (link.requestBody !== undefined && !isObject(target.operation.requestBody)) {
        problems.push(`${sourceId} → ${name}: ${link.operationId} takes no body`);
      } else if (link.requestBody !== undefined && !isRuntimeExpression(link.requestBody)) {
        // OpenAPI evaluates a requestBody only as a whole; expressions inside an object would
        // be sent literally.
        problems.push(`${sourceId} → ${name}: requestBody must be one runtime expression`);
      }
      if (isObject(link.parameters) && Object.keys(link.parameters).length === 0) {
        delete link.parameters;
      }
      if (typeof target.operation.summary === 'string') {
        link.description = target.operation.summary;
      }
    }
    success.links = links;
  }
  if (problems.length > 0)
    throw new Error(`Bad @link in the contract:\n  ${problems.join('\n  ')}`);
  return document;
}
