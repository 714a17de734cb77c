// @ts-check
import pg from 'pg';

/**
 * Connects, runs the statement with its parameters (never interpolated into the SQL), and
 * disconnects. Canceling the task closes the connection, which ends the statement.
 * @param {{ sql: string, params: unknown[] }} parameters
 * @param {{ specifications: { connectionString: string, statementTimeoutMilliseconds: number }, signal: AbortSignal }} context
 */
export async function execute(parameters, context) {
  const { connectionString, statementTimeoutMilliseconds } = context.specifications;
  const client = new pg.Client({
    connectionString,
    statement_timeout: statementTimeoutMilliseconds,
    connectionTimeoutMillis: 30_000,
  });
  const abort = () => void client.end().catch(() => {});
  context.signal.addEventListener('abort', abort, { once: true });
  try {
    await client.connect();
    const result = await client.query({ text: parameters.sql, values: parameters.params });
    return {
      command: result.command,
      rowCount: result.rowCount,
      fields: result.fields.map((field) => field.name),
      rows: result.rows,
    };
  } catch (error) {
    if (context.signal.aborted) throw context.signal.reason;
    throw describe(/** @type {Error & { code?: string, position?: string }} */ (error));
  } finally {
    context.signal.removeEventListener('abort', abort);
    await client.end().catch(() => {});
  }
}

// SQLSTATE classes that repeat on retry: data (22), constraints (23), syntax and access (42).
const PERMANENT = /^(22|23|42)/;

/** @param {Error & { code?: string, position?: string }} error */
function describe(error) {
  const where = error.position ? ` (at character ${error.position})` : '';
  const code = error.code ? ` [SQLSTATE ${error.code}]` : '';
  return Object.assign(new Error(`PostgreSQL: ${error.message}${where}${code}`), {
    nonRetryable: error.code !== undefined && PERMANENT.test(error.code),
  });
}
