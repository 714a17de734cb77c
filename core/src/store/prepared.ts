import { createQueryId, type Compilable, type CompiledQuery, type Kysely } from 'kysely';
import type { Database } from './tables.js';

/** Where a parameter of the compiled SQL comes from: a value of the call, or a constant. */
type Slot<Values> = { value: keyof Values & string } | { constant: unknown };

interface Template<Values, Row> {
  compiled: CompiledQuery<Row>;
  slots: Slot<Values>[];
}

/**
 * A query that Kysely builds and compiles once, on its first run; every later run sends the same
 * SQL with the call's values as its parameters. On hot paths (`GET /workflows/{id}`, the worker's
 * writes per task) building and compiling the query, CamelCasePlugin's rewrite included, cost
 * more CPU than the database round trip.
 *
 * `build` receives stand-ins for the values: it must give every value to Kysely as a value (never
 * branch on one or turn it into SQL), so that each reaches the SQL as a parameter; compiling fails
 * when one does not. Results go through the plugins as usual.
 */
export function preparedQuery<Values extends Record<string, unknown>, Row>(
  build: (db: Kysely<Database>, values: Values) => Compilable<Row>,
): (db: Kysely<Database>, values: Values) => Promise<Row[]> {
  let template: Template<Values, Row> | undefined;
  return async (db, values) => {
    template ??= compileTemplate(db, build);
    const parameters = template.slots.map((slot) =>
      'value' in slot ? values[slot.value] : slot.constant,
    );
    const result = await db.executeQuery<Row>({
      ...template.compiled,
      parameters,
      queryId: createQueryId(),
    });
    return result.rows;
  };
}

const standInPrefix = '\u0000trellis-prepared-value:';

function compileTemplate<Values extends Record<string, unknown>, Row>(
  db: Kysely<Database>,
  build: (db: Kysely<Database>, values: Values) => Compilable<Row>,
): Template<Values, Row> {
  const names = new Set<string>();
  const standIns = new Proxy({} as Values, {
    get: (_target, name) => {
      if (typeof name !== 'string') return undefined;
      names.add(name);
      return `${standInPrefix}${name}`;
    },
  });
  const compiled = build(db, standIns).compile();
  const slots = compiled.parameters.map((parameter): Slot<Values> => {
    if (typeof parameter === 'string' && parameter.startsWith(standInPrefix)) {
      return { value: parameter.slice(standInPrefix.length) };
    }
    return { constant: parameter };
  });
  for (const name of names) {
    if (!slots.some((slot) => 'value' in slot && slot.value === name)) {
      throw new Error(`preparedQuery: the value "${name}" did not become a parameter of the SQL`);
    }
  }
  if (compiled.sql.includes(standInPrefix)) {
    throw new Error('preparedQuery: a value was written into the SQL text instead of a parameter');
  }
  return { compiled, slots };
}
