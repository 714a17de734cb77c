import { describe, expect, it } from 'vitest';
import { derivedId, isUuid, newId } from './ids.js';

describe('ids', () => {
  it('derives the same version 5 UUID from the same name, and another from another name', () => {
    const id = derivedId('subworkflow:task:1:');
    expect(isUuid(id)).toBe(true);
    expect(id).toBe(derivedId('subworkflow:task:1:'));
    expect(id[14]).toBe('5'); // version
    expect('89ab').toContain(id[19]); // RFC variant
    expect(derivedId('subworkflow:task:2:')).not.toBe(id);
    expect(newId()).not.toBe(newId());
  });
});
