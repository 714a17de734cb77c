import type { TrellisError } from '#definition/errors.js';

/** PostgreSQL error codes (SQLSTATE) the repositories translate. */
export const pgErrorCodes = {
  uniqueViolation: '23505',
  foreignKeyViolation: '23503',
} as const;

function sqlState(error: unknown): unknown {
  return typeof error === 'object' && error !== null
    ? (error as { code?: unknown }).code
    : undefined;
}

/** True when `error` is a unique-constraint violation (optionally of one named constraint). */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  return sqlState(error) === pgErrorCodes.uniqueViolation && matches(error, constraint);
}

/** True when `error` is a foreign-key violation (optionally of one named constraint). */
export function isForeignKeyViolation(error: unknown, constraint?: string): boolean {
  return sqlState(error) === pgErrorCodes.foreignKeyViolation && matches(error, constraint);
}

/**
 * True when PostgreSQL refused the data of a statement rather than failed to run it: a data
 * exception (SQLSTATE class 22: bad encoding, a value out of range...) or a program limit (54:
 * nesting too deep, a value too large). Running the same statement again fails the same way.
 */
export function isRefusedData(error: unknown): boolean {
  const code = sqlState(error);
  return typeof code === 'string' && (code.startsWith('22') || code.startsWith('54'));
}

function matches(error: unknown, constraint: string | undefined): boolean {
  return constraint === undefined || (error as { constraint?: unknown }).constraint === constraint;
}

/**
 * Runs a write, turning a unique or foreign-key violation into the domain error given
 * (`Conflict` for a duplicate name, `NotFound` for a missing parent...). Anything else passes
 * unchanged.
 */
export async function translateConstraintErrors<T>(
  write: () => Promise<T>,
  errors: { unique?: () => TrellisError; foreignKey?: () => TrellisError },
): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (errors.unique && isUniqueViolation(error)) throw errors.unique();
    if (errors.foreignKey && isForeignKeyViolation(error)) throw errors.foreignKey();
    throw error;
  }
}
