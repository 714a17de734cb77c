import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { storableJson, storableText, unstorableCharacter } from './storable-text.js';

/** Any UTF-16 string, NULs and unpaired surrogates included. */
const anyText = fc.string({ unit: 'binary', maxLength: 30 });

/** The reference: each code point PostgreSQL cannot store replaced, one by one. */
function replacedByHand(text: string): string {
  let result = '';
  for (const character of text) {
    const unpaired = character.length === 1 && /[\uD800-\uDFFF]/.test(character);
    result += character === '\0' || unpaired ? '\uFFFD' : character;
  }
  return result;
}

/** A JSON value with `replacedByHand` applied to every key and string. */
function replacedEverywhere(value: unknown): unknown {
  if (typeof value === 'string') return replacedByHand(value);
  if (Array.isArray(value)) return value.map(replacedEverywhere);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => [replacedByHand(key), replacedEverywhere(item)]),
  );
}

describe('storable text', () => {
  it('names NULs and unpaired surrogates, and nothing else', () => {
    expect(unstorableCharacter('fine ✓ 😀')).toBeNull();
    expect(unstorableCharacter('a\0b')).toMatch(/NUL character/);
    expect(unstorableCharacter('x\uD800')).toMatch(/unpaired UTF-16 surrogate \(\\ud800\)/);
    expect(unstorableCharacter('\uDC00x')).toMatch(/\\udc00/);
    expect(unstorableCharacter('\uD83D\uDE00')).toBeNull();
  });

  it('replaces exactly the characters PostgreSQL cannot store by U+FFFD', () => {
    fc.assert(
      fc.property(anyText, (text) => {
        const stored = storableText(text);
        expect(stored).toBe(replacedByHand(text));
        expect(unstorableCharacter(stored)).toBeNull();
        if (unstorableCharacter(text) === null) expect(stored).toBe(text);
      }),
    );
  });

  it('writes JSON whose keys and strings are storable, and leaves storable values exact', () => {
    const value = fc.jsonValue({ maxDepth: 3, stringUnit: 'binary' });
    fc.assert(
      fc.property(value, (original) => {
        const json = storableJson(original);
        expect(json).not.toMatch(/(?<!\\)(\\\\)*\\u(0000|d[89a-f])/i);
        // The reference goes through JSON too: JSON has no -0, so fast-check's -0 reads back as 0.
        const asJson: unknown = JSON.parse(JSON.stringify(original));
        expect(JSON.parse(json)).toEqual(replacedEverywhere(asJson));
      }),
    );
    expect(storableJson({ 'k\0': ['\0', '\\u0000', '\uD800x', '\uD83D\uDE00'] })).toBe(
      '{"k\\ufffd":["\\ufffd","\\\\u0000","\\ufffdx","😀"]}',
    );
  });
});
