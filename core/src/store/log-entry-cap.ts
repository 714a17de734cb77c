import {
  InsertQueryNode,
  PrimitiveValueListNode,
  ValueListNode,
  ValueNode,
  ValuesNode,
  type WithNode,
  type KyselyPlugin,
  type OperationNode,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type QueryResult,
  type RootOperationNode,
  type UnknownRow,
} from 'kysely';
import { formatBytes } from '#definition/format-bytes.js';

/**
 * The size cap of log entries (`ExecutionLogs.MaxEntryBytes`). A log message comes from any
 * plugin, in-process ones included, or from Trellis itself (an expression's value can be
 * megabytes), and every later read of the log carries it: a message or exception longer than the
 * cap is cut, with a marker saying how much went. The cap is a plugin of the database handle, so
 * every insert into `log_entry` through Kysely is capped, whichever repository writes it.
 */

/** Room kept for the marker: its own length, plus slack for the cut's size being worded longer. */
const markerRoom = (bytes: number) => Buffer.byteLength(marker(bytes)) + 8;

const marker = (cutBytes: number) => `… [truncated ${formatBytes(cutBytes)}]`;

/**
 * `text` within `maxBytes` of UTF-8: as it is when it fits, else its start, cut between two
 * characters (never inside a UTF-8 sequence or a UTF-16 surrogate pair), then the marker.
 */
export function cutToBytes(text: string, maxBytes: number): string {
  // UTF-16 code units take at most 3 bytes each in UTF-8: most text needs no counting.
  if (text.length * 3 <= maxBytes) return text;
  const bytes = Buffer.byteLength(text);
  if (bytes <= maxBytes) return text;
  const room = Math.max(0, maxBytes - markerRoom(bytes));
  // `room` code units hold at least `room` bytes; the encoded start is then cut to `room` bytes.
  const start = Buffer.from(text.slice(0, room));
  let end = Math.min(room, start.length);
  // Back off over continuation bytes (10xxxxxx) to the first byte of the character cut through.
  if (end < start.length) while (end > 0 && (start[end]! & 0xc0) === 0x80) end--;
  const kept = start.subarray(0, end).toString();
  return kept + marker(bytes - end);
}

/** The columns of `log_entry` holding text of any size. */
const cappedColumns = new Set(['message', 'exception']);
const logEntryTables = new Set(['logEntry', 'log_entry']);

/**
 * Caps what every insert into `log_entry` writes to its `message` and `exception` at
 * `maxBytes` each (`cutToBytes`). Only a statement with a value over the cap is rebuilt: every
 * other query, log inserts with short text included (nearly all), passes as the same object.
 */
export class LogEntryCapPlugin implements KyselyPlugin {
  constructor(private readonly maxBytes: number) {}

  transformQuery({ node }: PluginTransformQueryArgs): RootOperationNode {
    return this.#capped(node) as RootOperationNode;
  }

  transformResult({ result }: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return Promise.resolve(result);
  }

  #capped(node: OperationNode): OperationNode {
    let result = node;
    if (InsertQueryNode.is(node) && logEntryTables.has(node.into?.table.identifier.name ?? '')) {
      result = this.#cappedInsert(node);
    }
    // A data-modifying CTE may write the entries (a status change with its log lines).
    if ('with' in result && result.with) {
      const withNode = result.with as WithNode;
      const expressions = withNode.expressions.map((cte) => {
        const expression = this.#capped(cte.expression);
        return expression === cte.expression ? cte : Object.freeze({ ...cte, expression });
      });
      if (expressions.some((cte, index) => cte !== withNode.expressions[index])) {
        result = Object.freeze({ ...result, with: Object.freeze({ ...withNode, expressions }) });
      }
    }
    return result;
  }

  #cappedInsert(insert: InsertQueryNode): InsertQueryNode {
    if (!insert.values || !ValuesNode.is(insert.values) || !insert.columns) return insert;
    const capped = insert.columns.map((column) => cappedColumns.has(column.column.name));
    const cap = (value: unknown) =>
      typeof value === 'string' ? cutToBytes(value, this.maxBytes) : value;
    let changed = false;
    const rows = insert.values.values.map((row) => {
      if (PrimitiveValueListNode.is(row)) {
        const values = row.values.map((value, index) => (capped[index] ? cap(value) : value));
        if (values.every((value, index) => value === row.values[index])) return row;
        changed = true;
        return PrimitiveValueListNode.create(values);
      }
      const values = row.values.map((value) => value);
      row.values.forEach((value, index) => {
        if (!capped[index] || !ValueNode.is(value)) return;
        const text = cap(value.value);
        if (text === value.value) return;
        values[index] = Object.freeze({ ...value, value: text });
        changed = true;
      });
      return values.every((value, index) => value === row.values[index])
        ? row
        : ValueListNode.create(values);
    });
    return changed
      ? InsertQueryNode.cloneWith(insert, { values: ValuesNode.create(rows) })
      : insert;
  }
}
