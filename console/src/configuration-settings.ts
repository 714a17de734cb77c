/**
 * A plugin configuration's settings between the API and a form: each setting a field of text
 * (a boolean's `''`, `true` or `false`), secrets never put in one.
 */
import type { components } from '@trellis/sdk';

type Specification = components['schemas']['PluginSpecification'];

/** What the API gives in place of a stored secret, and takes as "keep it". */
export const stored = '********';

/** A setting's field as typed: text, or for a boolean `''`, `true` or `false`. */
export type Values = Record<string, string>;

/** The fields' text from stored settings; secrets are never put in a field. */
export function valuesOf(specifications: Record<string, unknown>): Values {
  return Object.fromEntries(
    Object.entries(specifications)
      .filter(([, value]) => value !== stored)
      .map(([key, value]) => [
        key,
        typeof value === 'string' ? value : JSON.stringify(value, null, 2),
      ]),
  );
}

/**
 * The settings to send from the fields: empty ones left out (a stored secret's kept as
 * `********`), numbers and JSON parsed; throws naming a field whose text is not its type.
 */
export function settingsOf(
  specifications: Specification[],
  values: Values,
  isStored: (key: string) => boolean,
): Record<string, unknown> {
  const settings: Record<string, unknown> = {};
  for (const { key, type, secret } of specifications) {
    const text = (values[key] ?? '').trim();
    if (text === '') {
      if (secret && isStored(key)) settings[key] = stored;
      continue;
    }
    if (type === 'string') settings[key] = values[key];
    else if (type === 'boolean') settings[key] = text === 'true';
    else if (type === 'number' || type === 'integer') {
      const number = Number(text);
      if (!Number.isFinite(number) || (type === 'integer' && !Number.isInteger(number))) {
        throw new Error(`${key}: enter ${type === 'integer' ? 'a whole number' : 'a number'}.`);
      }
      settings[key] = number;
    } else {
      try {
        settings[key] = JSON.parse(text);
      } catch {
        throw new Error(`${key}: enter JSON (an ${type === 'array' ? 'array' : 'object'}).`);
      }
    }
  }
  return settings;
}
