import type { Paged, Pagination } from '../../core/src/db/paging.js';
import { isPageRequested, normalizePage } from '../../core/src/db/paging.js';

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
