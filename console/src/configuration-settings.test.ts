import { describe, expect, it } from 'vitest';
import { settingsOf, stored, valuesOf } from './configuration-settings.js';

const spec = (key: string, type: string, secret = false) =>
  ({ key, type, secret, required: false, description: '' }) as Parameters<
    typeof settingsOf
  >[0][number];

const specifications = [
  spec('baseUrl', 'string'),
  spec('token', 'string', true),
  spec('retries', 'integer'),
  spec('ratio', 'number'),
  spec('verbose', 'boolean'),
  spec('headers', 'object'),
];

describe('configuration settings in a form', () => {
  it('puts stored values in fields, never a secret', () => {
    expect(
      valuesOf({ baseUrl: 'https://x.test', token: stored, retries: 3, headers: { a: '1' } }),
    ).toEqual({ baseUrl: 'https://x.test', retries: '3', headers: '{\n  "a": "1"\n}' });
  });

  it('sends typed values, leaving empty fields out', () => {
    const values = {
      baseUrl: 'https://x.test',
      token: 's3cret',
      retries: '4',
      ratio: '0.5',
      verbose: 'false',
      headers: '{"a": "1"}',
    };
    expect(settingsOf(specifications, values, () => false)).toEqual({
      baseUrl: 'https://x.test',
      token: 's3cret',
      retries: 4,
      ratio: 0.5,
      verbose: false,
      headers: { a: '1' },
    });
    expect(settingsOf(specifications, { baseUrl: '', verbose: '' }, () => false)).toEqual({});
  });

  it('keeps a stored secret whose field is left empty, and replaces it when typed', () => {
    expect(settingsOf(specifications, {}, (key) => key === 'token')).toEqual({ token: stored });
    expect(settingsOf(specifications, { token: 'new' }, () => true)).toEqual({ token: 'new' });
  });

  it('names a field whose text is not its type', () => {
    expect(() => settingsOf(specifications, { retries: '1.5' }, () => false)).toThrow(
      'retries: enter a whole number.',
    );
    expect(() => settingsOf(specifications, { ratio: 'many' }, () => false)).toThrow(
      'ratio: enter a number.',
    );
    expect(() => settingsOf(specifications, { headers: '{' }, () => false)).toThrow(
      'headers: enter JSON (an object).',
    );
  });
});
