import type { ValidateFunction } from 'ajv';
import { describeValidationErrors, type MessageStyle } from './describe.js';

/**
 * How problems with plugin manifests, registry indexes and task parameters are worded:
 * `parameter "url" must be string`, `parameter "headers.Accept" must be string`, the field named
 * the way a user wrote it; `subject` is the noun ("parameter", "field", "index field").
 */
export function pluginMessageStyle(subject: string): MessageStyle {
  return {
    sentence: (path, problem) =>
      path.length > 0 ? `${subject} "${path.join('.')}" ${problem}` : `${subject}s ${problem}`,
  };
}

/** Runs a compiled validator and returns its problems (empty when valid). */
export function validationProblems(
  validate: ValidateFunction,
  value: unknown,
  subject: string,
): string[] {
  return validate(value)
    ? []
    : describeValidationErrors(validate.errors, pluginMessageStyle(subject));
}
