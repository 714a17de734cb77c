import { describe, expect, it } from 'vitest';
import { Invalid } from '#definition/errors.js';
import { isPageRequested, normalizePage } from './paging.js';

describe('normalizePage', () => {
  it('defaults to the first page of 100', () => {
    expect(normalizePage()).toEqual({ page: 1, pageSize: 100 });
    expect(normalizePage({ page: '', pageSize: undefined })).toEqual({ page: 1, pageSize: 100 });
  });

  it('reads numbers and numeric strings', () => {
    expect(normalizePage({ page: '3', pageSize: '25' })).toEqual({ page: 3, pageSize: 25 });
    expect(normalizePage({ page: 2, pageSize: 1000 })).toEqual({ page: 2, pageSize: 1000 });
  });

  it('rejects values that are not positive integers, or pages over 1000, naming each', () => {
    for (const query of [
      { page: '0' },
      { page: 'x' },
      { page: 1.5 },
      { pageSize: 1001 },
      { pageSize: -1 },
    ]) {
      expect(() => normalizePage(query)).toThrow(Invalid);
    }
    let thrown: unknown;
    try {
      normalizePage({ page: 'x', pageSize: '5000' });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(Invalid);
    expect(thrown).toMatchObject({
      messages: [
        'page: must be an integer from 1 to 9007199254740991',
        'pageSize: must be an integer from 1 to 1000',
      ],
    });
  });
});

describe('isPageRequested', () => {
  it('is true only when page or pageSize is given', () => {
    expect(isPageRequested({})).toBe(false);
    expect(isPageRequested({ page: '' })).toBe(false);
    expect(isPageRequested({ page: '1' })).toBe(true);
    expect(isPageRequested({ pageSize: 10 })).toBe(true);
  });
});
