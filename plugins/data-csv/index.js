// @ts-check
import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import { nonRetryable as inputError } from '@trellis/plugin-kit';

/**
 * @typedef {{ operation: 'parse' | 'stringify', text?: string, rows?: unknown[], header: boolean,
 *   columns?: string[], delimiter: string, skipEmptyLines: boolean, trim: boolean }} Parameters
 */

/** @type {import('@trellis/plugin-kit').PluginExecute<Parameters>} */
export function execute(parameters) {
  return parameters.operation === 'parse' ? parseCsv(parameters) : stringifyCsv(parameters);
}

/** @param {{ text?: string, header: boolean, delimiter: string, skipEmptyLines: boolean, trim: boolean }} parameters */
function parseCsv(parameters) {
  if (parameters.text === undefined) throw inputError('parameter "text" is required to parse');
  try {
    /** @type {unknown[]} */
    const rows = parse(parameters.text, {
      columns: parameters.header,
      delimiter: parameters.delimiter,
      skip_empty_lines: parameters.skipEmptyLines,
      trim: parameters.trim,
    });
    return { rows, count: rows.length };
  } catch (error) {
    throw inputError(`text is not valid CSV: ${/** @type {Error} */ (error).message}`);
  }
}

/** @param {{ rows?: unknown[], header: boolean, columns?: string[], delimiter: string }} parameters */
function stringifyCsv(parameters) {
  if (parameters.rows === undefined) throw inputError('parameter "rows" is required to stringify');
  const first = parameters.rows[0];
  const columns =
    parameters.columns ??
    (first && typeof first === 'object' && !Array.isArray(first) ? Object.keys(first) : undefined);
  const text = stringify(/** @type {any[]} */ (parameters.rows), {
    header: parameters.header && columns !== undefined,
    columns,
    delimiter: parameters.delimiter,
  });
  return { text, count: parameters.rows.length };
}
