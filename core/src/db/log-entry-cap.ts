import {
  InsertQueryNode,
  OperationNodeTransformer,
  PrimitiveValueListNode,
  ValueListNode,
  ValueNode,
  ValuesNode,
  type WithNode,
  type KyselyPlugin,
  type OperationNode,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type QueryId,
  type QueryResult,
  type RootOperationNode,
  type UnknownRow,
} from 'kysely';
import { formatBytes } from '../format-bytes.js';

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

class LogEntryCapper extends OperationNodeTransformer {
  constructor(private readonly maxBytes: number) {
    super();
  }

  protected override transformInsertQuery(
    node: InsertQueryNode,
    queryId?: QueryId,
  ): InsertQueryNode {
    const insert = super.transformInsertQuery(node, queryId);
    const table = insert.into?.table.identifier.name;
    if (table === undefined || !logEntryTables.has(table) || !insert.values) return insert;
    if (!ValuesNode.is(insert.values) || !insert.columns) return insert;
    const capped = insert.columns.map((column) => cappedColumns.has(column.column.name));
    const cap = (value: unknown) =>
      typeof value === 'string' ? cutToBytes(value, this.maxBytes) : value;
    const rows = insert.values.values.map((row) => {
      if (PrimitiveValueListNode.is(row)) {
        return PrimitiveValueListNode.create(
          row.values.map((value, index) => (capped[index] ? cap(value) : value)),
        );
      }
      return ValueListNode.create(
        row.values.map((value, index) =>
          capped[index] && ValueNode.is(value) ? { ...value, value: cap(value.value) } : value,
        ),
      );
    });
    return InsertQueryNode.cloneWith(insert, { values: ValuesNode.create(rows) });
  }
}

/**
 * Caps what every insert into `log_entry` writes to its `message` and `exception` at
 * `maxBytes` each (`cutToBytes`). Queries that insert no log entry pass untouched and unwalked.
 */
export class LogEntryCapPlugin implements KyselyPlugin {
  readonly #capper: LogEntryCapper;

  constructor(maxBytes: number) {
    this.#capper = new LogEntryCapper(maxBytes);
  }

  transformQuery({ node }: PluginTransformQueryArgs): RootOperationNode {
    return insertsLogEntries(node) ? this.#capper.transformNode(node) : node;
  }

  transformResult({ result }: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return Promise.resolve(result);
  }
}

/**
 * Whether `node` inserts into `log_entry`, itself or in a data-modifying CTE of its `with`: only
 * such statements are walked (and copied) by the capper; every other query passes as it is.
 */
function insertsLogEntries(node: OperationNode): boolean {
  if (InsertQueryNode.is(node) && logEntryTables.has(node.into?.table.identifier.name ?? '')) {
    return true;
  }
  if (!('with' in node) || !node.with) return false;
  return (node.with as WithNode).expressions.some((cte) => insertsLogEntries(cte.expression));
}
