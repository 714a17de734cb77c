import { expect } from 'vitest';
import { TrellisApiError } from '../../sdk/src/index.js';

/** Awaits a call that must fail and returns its `TrellisApiError`. */
export async function apiError(call: Promise<unknown>): Promise<TrellisApiError> {
  const outcome = await call.then(
    (value: unknown) => ({ value }),
    (error: unknown) => ({ error }),
  );
  if (!('error' in outcome)) {
    throw new Error(`expected the call to fail, it returned ${JSON.stringify(outcome.value)}`);
  }
  if (!(outcome.error instanceof TrellisApiError)) throw outcome.error;
  return outcome.error;
}

/**
 * Asserts a call fails with `status` and the error envelope (`data: null`, `succeeded: false`,
 * a timestamp); `message`, when given, must match one of the messages.
 */
export async function expectFailure(
  call: Promise<unknown>,
  status: number,
  message?: RegExp | string,
): Promise<TrellisApiError> {
  const error = await apiError(call);
  expect(error.status, error.messages.join('; ')).toBe(status);
  expect(error.body).toMatchObject({ data: null, succeeded: false });
  expect(Date.parse((error.body as { generatedAtUtc: string }).generatedAtUtc)).not.toBeNaN();
  expect(error.messages.length).toBeGreaterThan(0);
  // `errors` repeats `messages`, each with a stable code.
  expect(error.errors.map((detail) => detail.message)).toEqual(error.messages);
  for (const detail of error.errors) expect(detail.code).toMatch(/^[a-z_]+(\.[a-z_]+)?$/);
  if (message !== undefined) {
    const pattern = typeof message === 'string' ? new RegExp(escape(message)) : message;
    expect(
      error.messages.some((text) => pattern.test(text)),
      error.messages.join('\n'),
    ).toBe(true);
  }
  return error;
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
