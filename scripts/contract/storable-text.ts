/**
 * Every string the document lets a client send says it holds no NUL (U+0000), which PostgreSQL
 * cannot store and the server therefore refuses in any value or key of a request
 * (server/src/storable-request.ts): a string schema with no `pattern`, `format`, `enum` or
 * `const` of its own gets the pattern below, and an object whose keys are open (a map, free-form
 * JSON) gets it as `propertyNames`. A client's validation, or a fuzzer, then knows what the
 * server takes without our hooks. Only schema positions are visited, never examples or defaults.
 */
import type { Json } from './closed-objects.js';

type JsonObject = { [key: string]: Json };

export const storableTextPattern = '^[^\\u0000]*$';

const isObject = (value: Json | undefined): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Keywords whose value is a schema, a list of schemas, or a map of names to schemas. */
const schemaKeywords = new Set([
  'items',
  'additionalProperties',
  'unevaluatedProperties',
  'propertyNames',
  'contains',
  'not',
  'if',
  'then',
  'else',
  'contentSchema',
]);
const schemaListKeywords = new Set(['anyOf', 'oneOf', 'allOf', 'prefixItems']);
const schemaMapKeywords = new Set(['properties', 'patternProperties', '$defs']);

const typesOf = (schema: JsonObject): Json[] =>
  Array.isArray(schema.type) ? schema.type : schema.type === undefined ? [] : [schema.type];

function storableSchema(schema: Json): Json {
  if (!isObject(schema)) return schema;
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(schema)) {
    if (schemaKeywords.has(key)) out[key] = storableSchema(value);
    else if (schemaListKeywords.has(key) && Array.isArray(value)) {
      out[key] = value.map(storableSchema);
    } else if (schemaMapKeywords.has(key) && isObject(value)) {
      out[key] = Object.fromEntries(
        Object.entries(value).map(([name, property]) => [name, storableSchema(property)]),
      );
    } else out[key] = value;
  }
  const types = typesOf(schema);
  const constrained = ['pattern', 'format', 'enum', 'const'].some((key) => key in schema);
  if (types.includes('string') && !constrained) out.pattern = storableTextPattern;
  const composed = [...schemaListKeywords].some((key) => key in schema);
  const openKeys =
    (types.includes('object') || 'additionalProperties' in schema) &&
    schema.additionalProperties !== false &&
    !composed &&
    !('propertyNames' in schema);
  if (openKeys && (schema.additionalProperties !== undefined || !isObject(schema.properties))) {
    out.propertyNames = { pattern: storableTextPattern };
  }
  return out;
}

const mapValues = (value: Json | undefined, map: (entry: JsonObject) => Json): Json | undefined =>
  isObject(value)
    ? Object.fromEntries(
        Object.entries(value).map(([key, entry]) => [key, map(entry as JsonObject)]),
      )
    : value;

/** A media-type map (`content`) with each schema made storable. */
const storableContent = (content: Json | undefined) =>
  mapValues(content, (media) =>
    isObject(media) && 'schema' in media
      ? { ...media, schema: storableSchema(media.schema) }
      : media,
  );

const storableParameter = (parameter: Json): Json =>
  isObject(parameter) && 'schema' in parameter
    ? { ...parameter, schema: storableSchema(parameter.schema) }
    : parameter;

function storableOperation(operation: JsonObject): JsonObject {
  const out: JsonObject = { ...operation };
  if (Array.isArray(operation.parameters))
    out.parameters = operation.parameters.map(storableParameter);
  if (isObject(operation.requestBody)) {
    out.requestBody = {
      ...operation.requestBody,
      content: storableContent(operation.requestBody.content) ?? {},
    };
  }
  return out;
}

const componentPrefix = '#/components/schemas/';
const methods = ['get', 'put', 'post', 'delete', 'patch'];

/** The names of the component schemas `roots` refer to, directly or through one another. */
function referredSchemas(roots: Json[], schemas: JsonObject): Set<string> {
  const found = new Set<string>();
  const visit = (node: Json | undefined): void => {
    if (Array.isArray(node)) node.forEach(visit);
    if (!isObject(node)) return;
    const { $ref } = node;
    if (typeof $ref === 'string' && $ref.startsWith(componentPrefix)) {
      const name = $ref.slice(componentPrefix.length);
      if (!found.has(name)) {
        found.add(name);
        visit(schemas[name]);
      }
    }
    Object.values(node).forEach(visit);
  };
  roots.forEach(visit);
  return found;
}

const operationsOf = (paths: Json | undefined): JsonObject[] =>
  isObject(paths)
    ? Object.values(paths).flatMap((item) =>
        isObject(item)
          ? Object.entries(item)
              .filter(([key, value]) => methods.includes(key) && isObject(value))
              .map(([, value]) => value as JsonObject)
          : [],
      )
    : [];

/**
 * A copy of the document whose request-side strings and open keys exclude the NUL character:
 * the schemas of parameters and request bodies, and the components they refer to. Schemas only
 * responses use stay as they are: an error's message may quote the NUL a request was refused for.
 */
export function withStorableText(document: Json): Json {
  if (!isObject(document)) return document;
  const out: JsonObject = { ...document };
  if (isObject(document.components)) {
    const schemas = isObject(document.components.schemas) ? document.components.schemas : {};
    const requestSide = referredSchemas(
      [
        document.components.parameters ?? null,
        ...operationsOf(document.paths).flatMap((operation) => [
          operation.parameters ?? null,
          operation.requestBody ?? null,
        ]),
        ...(isObject(document.paths)
          ? Object.values(document.paths).map((item) =>
              isObject(item) ? (item.parameters ?? null) : null,
            )
          : []),
      ],
      schemas,
    );
    const components: JsonObject = { ...document.components };
    components.schemas = Object.fromEntries(
      Object.entries(schemas).map(([name, schema]) => [
        name,
        requestSide.has(name) ? storableSchema(schema) : schema,
      ]),
    );
    components.parameters = mapValues(document.components.parameters, storableParameter) ?? {};
    if (document.components.parameters === undefined) delete components.parameters;
    if (document.components.schemas === undefined) delete components.schemas;
    out.components = components;
  }
  out.paths =
    mapValues(document.paths, (item) =>
      Object.fromEntries(
        Object.entries(item).map(([key, value]) =>
          key === 'parameters' && Array.isArray(value)
            ? [key, value.map(storableParameter)]
            : isObject(value) && methods.includes(key)
              ? [key, storableOperation(value)]
              : [key, value],
        ),
      ),
    ) ?? {};
  return out;
}
