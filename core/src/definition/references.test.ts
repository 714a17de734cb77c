import { describe, expect, it } from 'vitest';
import { checkReferences as checkReferencesProblems, type ReferenceLookup } from './references.js';
import type { WorkflowDefinition } from './types.js';
import { renderProblem } from './validation/problem.js';

/** What a user reads of each problem. */
const checkReferences = async (...args: Parameters<typeof checkReferencesProblems>) =>
  (await checkReferencesProblems(...args)).map(renderProblem);

/** An in-memory lookup that records what it was asked (the real one queries the database). */
function lookup(plugins: Record<string, string[]>, configurations: string[]) {
  const asked: string[] = [];
  const value: ReferenceLookup = {
    async plugin(type, version) {
      asked.push(`plugin ${type} ${version ?? '(latest)'}`);
      const versions = plugins[type];
      return versions !== undefined && (version === undefined || versions.includes(version));
    },
    async configuration(name) {
      asked.push(`configuration ${name}`);
      return configurations.includes(name);
    },
    async pluginTypes() {
      asked.push('plugin types');
      return Object.keys(plugins);
    },
    async configurationNames() {
      asked.push('configuration names');
      return configurations;
    },
  };
  return { value, asked };
}

const definition: WorkflowDefinition = {
  name: 'W',
  tasks: [
    { name: 'Fetch', type: { plugin: 'Net/Http', version: '1.0.0' } },
    { name: 'Fetch2', type: { plugin: 'Net/Http', version: '2.0.0' } },
    { name: 'Any', type: { plugin: 'Net/Http' } },
    { name: 'Store', type: 'reports-bucket' },
    { name: 'Store2', type: 'reports-bucket' },
    { name: 'Ops', type: 'ops-approval' },
    { name: 'Zip', type: { plugin: 'Compression/Zip' } },
  ],
};

describe('checkReferences', () => {
  it('reports unknown configurations, plugins and versions, naming the task', async () => {
    const { value } = lookup({ 'Net/Http': ['1.0.0'] }, ['ops-approval']);
    expect(await checkReferences(definition, value)).toEqual([
      "tasks[1].type: task 'Fetch2' uses plugin 'Net/Http' version 2.0.0, which is not installed",
      "tasks[3].type: task 'Store' uses unknown plugin configuration 'reports-bucket'",
      "tasks[4].type: task 'Store2' uses unknown plugin configuration 'reports-bucket'",
      "tasks[6].type: task 'Zip' uses plugin 'Compression/Zip', which is not installed",
    ]);
  });

  it('suggests the known plugin or configuration closest to an unknown one, as data too', async () => {
    const { value, asked } = lookup({ 'Flow/Log': ['1.0.0'], 'Flow/NoOp': ['1.0.0'] }, [
      'reports-bucket',
    ]);
    const problems = await checkReferencesProblems(
      {
        name: 'W',
        tasks: [
          { name: 'Say', type: { plugin: 'Flow/Lgo' } },
          { name: 'Say2', type: { plugin: 'Flow/Lgo' } },
          { name: 'Store', type: 'report-bucket' },
          { name: 'Far', type: { plugin: 'Net/Gopher' } },
        ],
      },
      value,
    );
    expect(problems).toEqual([
      {
        code: 'validation.invalid',
        path: 'tasks[0].type',
        message:
          "task 'Say' uses plugin 'Flow/Lgo', which is not installed (did you mean 'Flow/Log'?)",
        suggestions: ['Flow/Log'],
      },
      expect.objectContaining({ path: 'tasks[1].type', suggestions: ['Flow/Log'] }),
      {
        code: 'validation.invalid',
        path: 'tasks[2].type',
        message:
          "task 'Store' uses unknown plugin configuration 'report-bucket' (did you mean 'reports-bucket'?)",
        suggestions: ['reports-bucket'],
      },
      {
        code: 'validation.invalid',
        path: 'tasks[3].type',
        message: "task 'Far' uses plugin 'Net/Gopher', which is not installed",
      },
    ]);
    expect(
      asked.filter((question) => question.endsWith('names') || question.endsWith('types')),
    ).toEqual(['plugin types', 'configuration names']);
  });

  it('asks about each distinct name once and passes no version when none is given', async () => {
    const { value, asked } = lookup(
      { 'Net/Http': ['1.0.0', '2.0.0'], 'Compression/Zip': ['1.0.0'] },
      ['ops-approval', 'reports-bucket'],
    );
    expect(await checkReferences(definition, value)).toEqual([]);
    expect(asked.sort()).toEqual([
      'configuration ops-approval',
      'configuration reports-bucket',
      'plugin Compression/Zip (latest)',
      'plugin Net/Http (latest)',
      'plugin Net/Http 1.0.0',
      'plugin Net/Http 2.0.0',
    ]);
  });
});
