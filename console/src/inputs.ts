/**
 * The run form generated from a definition's declared `inputs`: one field per input, shown as
 * text, and read back into the values the execute call takes. Empty optional fields are left
 * out, so that the server fills in their defaults.
 */
import type { InputDeclaration, InputType } from './definition.js';

export interface InputField extends InputDeclaration {
  name: string;
  /** How it is edited: one line, a choice of true/false, or JSON text. */
  control: 'text' | 'number' | 'boolean' | 'json';
}

const controls: Record<InputType, InputField['control']> = {
  string: 'text',
  number: 'number',
  integer: 'number',
  boolean: 'boolean',
  object: 'json',
  array: 'json',
};

/** The form's fields, in the definition's order. */
export function inputFields(declarations: Record<string, InputDeclaration>): InputField[] {
  return Object.entries(declarations).map(([name, declaration]) => ({
    name,
    ...declaration,
    control: controls[declaration.type],
  }));
}

/** The text a field starts with: its default, as it would be typed. */
export function initialText(field: InputField): string {
  if (!('default' in field) || field.default === undefined || field.default === null) return '';
  if (field.type === 'string' && typeof field.default === 'string') return field.default;
  return field.control === 'json'
    ? JSON.stringify(field.default, null, 2)
    : JSON.stringify(field.default).replace(/^"(.*)"$/, '$1');
}

export interface ReadInputs {
  inputs: Record<string, unknown>;
  /** What is wrong with a field, by input name. */
  problems: Record<string, string>;
}

/** The values of the form's texts; a field that cannot be read is a problem instead. */
export function readInputs(fields: InputField[], texts: Record<string, string>): ReadInputs {
  const inputs: Record<string, unknown> = {};
  const problems: Record<string, string> = {};
  for (const field of fields) {
    const given = texts[field.name] ?? '';
    // Spaces may be a string's value; for any other type they are nothing.
    const empty = field.type === 'string' ? given === '' : given.trim() === '';
    if (empty) {
      if (field.required && !('default' in field)) problems[field.name] = 'is required';
      continue;
    }
    const read = readValue(field, given);
    if ('problem' in read) problems[field.name] = read.problem;
    else inputs[field.name] = read.value;
  }
  return { inputs, problems };
}

function readValue(field: InputField, text: string): { value: unknown } | { problem: string } {
  switch (field.type) {
    case 'string':
      return { value: text };
    case 'boolean':
      return text === 'true' || text === 'false'
        ? { value: text === 'true' }
        : { problem: 'must be true or false' };
    case 'number':
    case 'integer': {
      const number = Number(text.trim());
      if (!Number.isFinite(number)) return { problem: 'must be a number' };
      if (field.type === 'integer' && !Number.isInteger(number)) {
        return { problem: 'must be a whole number' };
      }
      return { value: number };
    }
    case 'object':
    case 'array': {
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        return { problem: `must be JSON (an ${field.type})` };
      }
      const isArray = Array.isArray(value);
      const fits =
        field.type === 'array' ? isArray : typeof value === 'object' && value !== null && !isArray;
      return fits ? { value } : { problem: `must be JSON of an ${field.type}` };
    }
  }
}

/**
 * The server's messages about inputs (`body.inputs.amount: must be a number, ...`) by input name;
 * the others as they are.
 */
export function splitServerMessages(
  messages: string[],
  names: string[],
): { byInput: Record<string, string>; others: string[] } {
  const byInput: Record<string, string> = {};
  const others: string[] = [];
  for (const message of messages) {
    const match = /^body\.inputs\.([^:]+): (.*)$/s.exec(message);
    const name = match?.[1];
    if (match && name !== undefined && names.includes(name)) {
      byInput[name] = byInput[name] ? `${byInput[name]}; ${match[2]}` : (match[2] ?? '');
    } else others.push(message);
  }
  return { byInput, others };
}
