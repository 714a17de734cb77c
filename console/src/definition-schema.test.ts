import { describe, expect, it } from 'vitest';
import { typedDefinitionSchema } from '../../core/src/definition/typed-schema.js';
import {
  describeKey,
  installedPlugins,
  knownKeysAt,
  parameterSchema,
} from './definition-schema.js';

const served = typedDefinitionSchema([
  {
    type: 'Flow/Delay',
    version: '1.0.0',
    parametersSchema: {
      type: 'object',
      additionalProperties: false,
      properties: { milliseconds: { type: 'integer', description: 'How long to wait.' } },
    },
  },
  { type: 'Flow/Log', version: '1.0.0', parametersSchema: { type: 'object' } },
]);
const definition = { tasks: [{ name: 'A', type: { plugin: 'flow/delay' }, parameters: {} }] };
const names = (path: Array<string | number>) =>
  knownKeysAt(served, path, definition).map((key) => key.name);

describe('the served definition schema, read for the editor', () => {
  it('lists the installed plugins and finds a plugin’s parameter schema, any case', () => {
    expect(installedPlugins(served)).toEqual(['Flow/Delay', 'Flow/Log']);
    expect(parameterSchema(served, 'FLOW/DELAY')?.properties).toHaveProperty('milliseconds');
    expect(parameterSchema(served, 'Flow/Lgo')).toBeNull();
  });

  it('gives the keys an object takes at a path, through refs and unions', () => {
    expect(names([])).toEqual(expect.arrayContaining(['name', 'tasks', 'inputs']));
    expect(names(['tasks', 0])).toEqual(
      expect.arrayContaining(['name', 'type', 'parameters', 'manualApproval', 'dependencies']),
    );
    expect(names(['tasks', 0, 'type'])).toEqual(['plugin', 'version', 'specifications']);
    expect(names(['tasks', 0, 'manualApproval'])).toContain('enabled');
  });

  it('gives a task’s parameters from its plugin', () => {
    expect(names(['tasks', 0, 'parameters'])).toEqual(['milliseconds']);
    expect(knownKeysAt(served, ['tasks', 0, 'parameters'], { tasks: [{}] })).toEqual([]);
  });

  it('describes a key as the schema does', () => {
    expect(describeKey(served, ['tasks', 0, 'parameters'], 'milliseconds', definition)).toBe(
      'How long to wait.',
    );
    expect(describeKey(served, ['tasks', 0], 'Dependencies', definition)).toMatch(/^Tasks that/);
    expect(describeKey(served, ['tasks', 0], 'nope', definition)).toBeNull();
  });
});
