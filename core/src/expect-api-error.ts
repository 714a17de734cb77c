import { expect } from 'vitest';
import { ApiError } from './errors.js';

/** For tests: awaits a promise that must reject with an `ApiError`, and returns that error. */
export async function apiErrorOf(promise: Promise<unknown>): Promise<ApiError> {
  const error = await promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(ApiError);
  return error as ApiError;
}
