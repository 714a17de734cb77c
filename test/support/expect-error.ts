import { expect } from 'vitest';

/** For tests: awaits a promise that must reject with an instance of `kind`, and returns it. */
export async function errorOf<E extends Error>(
  promise: Promise<unknown>,
  kind: abstract new (...args: never[]) => E,
): Promise<E> {
  const error = await promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(kind);
  return error as E;
}
