import { describe, expect, it } from 'vitest';
import { listReply, pageInMemory } from './lists.js';

describe('pageInMemory and listReply', () => {
  const items = ['a', 'b', 'c', 'd', 'e'];

  it('returns everything without pagination unless a page is asked for', () => {
    const reply = listReply(pageInMemory(items, {}), {}, (item) => item.toUpperCase());
    expect(reply).toEqual({ data: ['A', 'B', 'C', 'D', 'E'] });
  });

  it('slices the requested page and reports where it sits', () => {
    const query = { page: 2, pageSize: 2 };
    expect(listReply(pageInMemory(items, query), query, (item) => item)).toEqual({
      data: ['c', 'd'],
      pagination: { page: 2, pageSize: 2, totalCount: 5, totalPages: 3 },
    });
    const beyond = { page: 9, pageSize: 2 };
    expect(listReply(pageInMemory(items, beyond), beyond, (item) => item).data).toEqual([]);
  });
});
