import { describe, expect, it } from 'vitest';
import { didYouMean, editDistance, suggestionsFor } from './suggestions.js';

describe('editDistance', () => {
  it('counts inserts, deletes, replacements and swaps of neighbours as one edit each', () => {
    expect(editDistance('Flow/Log', 'Flow/Log')).toBe(0);
    expect(editDistance('Flow/Lgo', 'Flow/Log')).toBe(1);
    expect(editDistance('Fetch', 'Fetc')).toBe(1);
    expect(editDistance('Fetch', 'Fetchh')).toBe(1);
    expect(editDistance('Fetch', 'Fatch')).toBe(1);
    expect(editDistance('ca', 'abc')).toBe(3);
    expect(editDistance('', 'abc')).toBe(3);
    expect(editDistance('kitten', 'sitting')).toBe(3);
  });

  it('stops past the limit', () => {
    expect(editDistance('kitten', 'sitting', 1)).toBe(2);
    expect(editDistance('a', 'abcdef', 2)).toBe(3);
  });
});

describe('suggestionsFor', () => {
  const plugins = ['Flow/NoOp', 'Flow/Log', 'Net/Http', 'Data/Json'];

  it('offers the closest known names, ignoring case, closest first', () => {
    expect(suggestionsFor('Flow/Lgo', plugins)).toEqual(['Flow/Log']);
    expect(suggestionsFor('flow/log', plugins)).toEqual(['Flow/Log']);
    expect(suggestionsFor('Fetch', ['Parse', 'Fech', 'Fetch2', 'Fetc'])).toEqual([
      'Fech',
      'Fetch2',
      'Fetc',
    ]);
    expect(suggestionsFor('region', ['regoin', 'region2', 'reason'])).toEqual([
      'regoin',
      'region2',
      'reason',
    ]);
  });

  it('offers nothing far off, nor a whole replacement of a short name', () => {
    expect(suggestionsFor('Net/Gopher', plugins)).toEqual([]);
    expect(suggestionsFor('a', ['b', 'c'])).toEqual([]);
    expect(suggestionsFor('ab', ['ba'])).toEqual(['ba']);
    expect(suggestionsFor('x', [])).toEqual([]);
  });
});

describe('didYouMean', () => {
  it('names the first suggestion, or says nothing', () => {
    expect(didYouMean(['Flow/Log', 'Flow/NoOp'])).toBe(" (did you mean 'Flow/Log'?)");
    expect(didYouMean([])).toBe('');
  });
});
