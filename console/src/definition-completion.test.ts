import { describe, expect, it } from 'vitest';
import { typedDefinitionSchema } from '../../core/src/definition/typed-schema.js';
import { completionsAt, helpAt } from './definition-completion.js';

const served = typedDefinitionSchema([
  {
    type: 'Flow/Delay',
    version: '1.0.0',
    parametersSchema: {
      type: 'object',
      properties: { milliseconds: { type: 'integer', description: 'How long to wait.' } },
    },
  },
  { type: 'Flow/Log', version: '1.0.0', parametersSchema: { type: 'object' } },
]);
/** The completions where `|` stands in the text. */
const at = (marked: string) => {
  const offset = marked.indexOf('|');
  const text = marked.replace('|', '');
  const found = completionsAt(served, text, offset);
  return found && { ...found, labels: found.options.map((option) => option.label) };
};

describe('completions of a definition being typed', () => {
  it('offers a task’s keys inside its quotes, replacing what is typed', () => {
    const found = at('{"tasks": [{"ty|"}]}');
    expect(found?.labels).toEqual(expect.arrayContaining(['name', 'type', 'manualApproval']));
    expect(found).toMatchObject({ from: 13, to: 15 });
    expect(found?.options.find((option) => option.label === 'type')?.apply).toBe('type');
  });

  it('offers quoted keys where no quote is typed yet', () => {
    const found = at('{"tasks": [{"type": {|}}]}');
    expect(found?.labels).toEqual(['plugin', 'version', 'specifications']);
    expect(found?.options[0]?.apply).toBe('"plugin"');
  });

  it('offers the installed plugins as the value of type.plugin', () => {
    expect(at('{"tasks": [{"type": {"plugin": "Fl|"}}]}')).toMatchObject({
      from: 32,
      to: 34,
      labels: ['Flow/Delay', 'Flow/Log'],
    });
    expect(at('{"tasks": [{"name": "Fl|"}]}')).toBeNull();
  });

  it('offers the parameters of the task’s plugin inside parameters', () => {
    expect(
      at('{"tasks": [{"type": {"plugin": "Flow/Delay"}, "parameters": {"|"}}]}')?.labels,
    ).toEqual(['milliseconds']);
  });
});

describe('help on the key under the pointer', () => {
  it('gives the schema’s description of a key and of a plugin’s parameter', () => {
    const text =
      '{"tasks": [{"type": {"plugin": "Flow/Delay"}, "parameters": {"milliseconds": 5}}]}';
    const help = helpAt(served, text, text.indexOf('milliseconds') + 2);
    expect(help).toEqual({
      from: text.indexOf('"milliseconds"'),
      to: text.indexOf('"milliseconds"') + 14,
      text: 'How long to wait.',
    });
    expect(helpAt(served, text, text.indexOf('"type"') + 2)?.text).toMatch(/^What carries/);
    expect(helpAt(served, text, 0)).toBeNull();
  });
});
