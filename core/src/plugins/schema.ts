import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';

/**
 * JSON Schema checking for plugin manifests, registry indexes and task parameters, with
 * messages that name the offending field the way a user wrote it.
 */

// ajv-formats is CommonJS; under NodeNext its default import is the module object.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

/** A fresh Ajv: all errors (one message per problem), formats, schema defaults filled in. */
export function createAjv(): Ajv {
  return addFormats(new Ajv({ allErrors: true, useDefaults: true, strict: false }));
}

/**
 * Turns Ajv errors into messages like `parameter "url" must be string` or
 * `parameter "headers.Accept" must be string`; `subject` is the noun ("parameter", "plugin.json field").
 */
export function describeSchemaErrors(
  errors: readonly ErrorObject[] | null | undefined,
  subject: string,
): string[] {
  return (errors ?? []).map((error) => {
    const path = pointerToPath(error.instancePath);
    if (error.keyword === 'required') {
      const missing = (error.params as { missingProperty: string }).missingProperty;
      return `${subject} "${joinPath(path, missing)}" is required`;
    }
    if (error.keyword === 'additionalProperties') {
      const extra = (error.params as { additionalProperty: string }).additionalProperty;
      return `${subject} "${joinPath(path, extra)}" is not allowed`;
    }
    if (error.keyword === 'enum') {
      const allowed = (error.params as { allowedValues: unknown[] }).allowedValues;
      return `${subject} "${path || '(root)'}" must be one of ${allowed.map((v) => JSON.stringify(v)).join(', ')}`;
    }
    return path
      ? `${subject} "${path}" ${error.message ?? 'is invalid'}`
      : `${subject}s ${error.message ?? 'are invalid'}`;
  });
}

/** Runs a compiled validator and returns its problems (empty when valid). */
export function validationProblems(
  validate: ValidateFunction,
  value: unknown,
  subject: string,
): string[] {
  return validate(value) ? [] : describeSchemaErrors(validate.errors, subject);
}

function pointerToPath(pointer: string): string {
  return pointer
    .split('/')
    .slice(1)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .join('.');
}

function joinPath(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}
