import type { SelectQueryBuilder } from 'kysely';
import { Invalid } from '#definition/errors.js';
import { problemAt, type Problem } from '#definition/validation/problem.js';

/** A requested page; `page` counts from 1. */
export type Page = { page: number; pageSize: number };

/** What a paged list response carries beside `data` (docs/ARCHITECTURE.md#api-conventions). */
export type Pagination = { page: number; pageSize: number; totalCount: number; totalPages: number };

export type Paged<T> = { items: T[]; pagination: Pagination };

/**
 * Which part of a list to read: a numbered page (offset paging, with a total count), the items
 * after a given one (keyset paging: an index range scan whose cost does not grow with how deep
 * the page is), or everything.
 */
export type Slice = { page: Page } | { after: string; pageSize: number } | Record<string, never>;

/** The answer to a keyset page: no count (counting would cost what the cursor saves). */
export function keysetPage<T>(items: T[], pageSize: number): Paged<T> {
  return { items, pagination: { page: 1, pageSize, totalCount: items.length, totalPages: 1 } };
}

export const defaultPageSize = 100;
export const maxPageSize = 1000;

/**
 * Reads `page` and `pageSize` from a query string (numbers or strings), applying the defaults;
 * values that are not positive integers, or a page size over the maximum, are `Invalid`.
 */
export function normalizePage(query: { page?: unknown; pageSize?: unknown } = {}): Page {
  const problems: Problem[] = [];
  const read = (name: 'page' | 'pageSize', fallback: number, max: number) => {
    const raw = query[name];
    if (raw === undefined || raw === null || raw === '') return fallback;
    const value =
      typeof raw === 'number' ? raw : typeof raw === 'string' ? Number(raw.trim()) : NaN;
    if (!Number.isInteger(value) || value < 1 || value > max) {
      problems.push(problemAt(name, `must be an integer from 1 to ${max}`));
      return fallback;
    }
    return value;
  };
  const page = read('page', 1, Number.MAX_SAFE_INTEGER);
  const pageSize = read('pageSize', defaultPageSize, maxPageSize);
  if (problems.length > 0) throw new Invalid(problems);
  return { page, pageSize };
}

/** True when the client asked for a page, i.e. the response should carry `pagination`. */
export function isPageRequested(query: { page?: unknown; pageSize?: unknown } = {}): boolean {
  return [query.page, query.pageSize].some((value) => value !== undefined && value !== '');
}

/** What a page's rows are read with: the page's query as it is, or a query around it. */
type RowsOf<DB, TB extends keyof DB, O, R> = (rows: SelectQueryBuilder<DB, TB, O>) => {
  execute(): Promise<R[]>;
};

/**
 * Runs an ordered select for one page plus a count of all matching rows. Without `page`, returns
 * every row (as one page). The count query drops the selection and ordering, so `query` must not
 * use `group by` or `distinct`. `rowsOf` may read fewer rows than the page's (a query around it).
 */
export async function paginate<DB, TB extends keyof DB, O, R = O>(
  query: SelectQueryBuilder<DB, TB, O>,
  page?: Page,
  rowsOf: RowsOf<DB, TB, O, R> = (rows) => rows as unknown as { execute(): Promise<R[]> },
): Promise<Paged<R>> {
  if (!page) {
    const items = await rowsOf(query).execute();
    const pagination = {
      page: 1,
      pageSize: items.length,
      totalCount: items.length,
      totalPages: items.length > 0 ? 1 : 0,
    };
    return { items, pagination };
  }
  const [items, counted] = await Promise.all([
    rowsOf(query.limit(page.pageSize).offset((page.page - 1) * page.pageSize)).execute(),
    query
      .clearSelect()
      .clearOrderBy()
      .select((eb) => eb.fn.countAll<string>().as('totalCount'))
      .executeTakeFirst(),
  ]);
  // Kysely cannot narrow the row type of a select on generic tables.
  const totalCount = Number((counted as { totalCount?: string } | undefined)?.totalCount ?? 0);
  return {
    items,
    pagination: {
      page: page.page,
      pageSize: page.pageSize,
      totalCount,
      totalPages: Math.ceil(totalCount / page.pageSize),
    },
  };
}
