import type { Paged, Pagination, Slice } from '#store/paging.js';
import { isPageRequested, normalizePage } from '#store/paging.js';
import { Invalid } from '#definition/errors.js';
import { problemAt } from '#definition/validation/problem.js';

interface PagingQuery {
  page?: number;
  pageSize?: number;
}

/** The `page` to ask a repository for: undefined (everything) unless the client asked for one. */
export function requestedPage(query: PagingQuery) {
  return isPageRequested(query) ? normalizePage(query) : undefined;
}

/** A list reply: `data` always an array, `pagination` only when the client asked for a page. */
export function listReply<T, D>(
  paged: Paged<T>,
  query: PagingQuery,
  toData: (item: T) => D,
): { data: D[]; pagination?: Pagination } {
  const data = paged.items.map(toData);
  return isPageRequested(query) ? { data, pagination: paged.pagination } : { data };
}

/** The query of a list with keyset paging beside numbered pages (`after`: an item's id). */
export interface CursorPagingQuery extends PagingQuery {
  after?: string;
}

/** Which part of a list the query asks for: the items after one, a numbered page, or all. */
export function requestedSlice(query: CursorPagingQuery): Slice {
  if (query.after === undefined) {
    const page = requestedPage(query);
    return page ? { page } : {};
  }
  if (query.page !== undefined) {
    throw new Invalid(
      problemAt('query.after', 'cannot be combined with page (use one way of paging)'),
    );
  }
  return { after: query.after, pageSize: normalizePage(query).pageSize };
}

/** A list reply to a query that may page by cursor: with `after`, no `pagination`. */
export function cursorListReply<T, D>(
  paged: Paged<T>,
  query: CursorPagingQuery,
  toData: (item: T) => D,
): { data: D[]; pagination?: Pagination } {
  if (query.after !== undefined) return { data: paged.items.map(toData) };
  return listReply(paged, query, toData);
}

/** Pages a list already in memory (small lists sorted in code, like installed plugins). */
export function pageInMemory<T>(items: T[], query: PagingQuery): Paged<T> {
  const page = requestedPage(query);
  if (!page) {
    const count = items.length;
    return {
      items,
      pagination: { page: 1, pageSize: count, totalCount: count, totalPages: count > 0 ? 1 : 0 },
    };
  }
  const start = (page.page - 1) * page.pageSize;
  return {
    items: items.slice(start, start + page.pageSize),
    pagination: {
      page: page.page,
      pageSize: page.pageSize,
      totalCount: items.length,
      totalPages: Math.ceil(items.length / page.pageSize),
    },
  };
}
