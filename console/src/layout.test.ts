import { describe, expect, it } from 'vitest';
import { readDefinition } from './definition.js';
import { edgesOf, layoutGraph, nodeWidth } from './layout.js';

const definition = readDefinition({
  name: 'd',
  tasks: [
    { name: 'Fetch', type: { plugin: 'Net/Http' } },
    {
      name: 'Gate',
      type: 'ops',
      dependencies: ['Fetch'],
      manualApproval: { enabled: true, comment: 'ok?' },
    },
    {
      name: 'Store',
      Type: { Plugin: 'Storage/Local', Version: '1.0.0' },
      DEPENDENCIES: ['Gate', 'Missing'],
      executionCondition: { expression: "Outputs('Fetch').status == 200" },
      errorHandling: { strategy: 'TriggerTask', triggerTask: 'Alert' },
    },
    { name: 'Alert', type: { plugin: 'Net/Http' }, runOnFailureOf: ['Store'] },
  ],
});

describe('readDefinition', () => {
  it('reads what each task is, keys in any case', () => {
    expect(
      definition.tasks.map(({ name, kind, typeLabel, condition, approval }) => ({
        name,
        kind,
        typeLabel,
        condition,
        approval,
      })),
    ).toEqual([
      { name: 'Fetch', kind: 'plugin', typeLabel: 'Net/Http', condition: null, approval: null },
      {
        name: 'Gate',
        kind: 'configuration',
        typeLabel: 'ops',
        condition: null,
        approval: { comment: 'ok?' },
      },
      {
        name: 'Store',
        kind: 'plugin',
        typeLabel: 'Storage/Local 1.0.0',
        condition: "Outputs('Fetch').status == 200",
        approval: null,
      },
      { name: 'Alert', kind: 'plugin', typeLabel: 'Net/Http', condition: null, approval: null },
    ]);
  });
});

describe('layoutGraph', () => {
  it('has an edge per dependency, failure handler and triggered task, only between tasks it has', () => {
    expect(edgesOf(definition)).toEqual([
      { from: 'Fetch', to: 'Gate', kind: 'dependency' },
      { from: 'Gate', to: 'Store', kind: 'dependency' },
      { from: 'Store', to: 'Alert', kind: 'trigger' },
      { from: 'Store', to: 'Alert', kind: 'failure' },
    ]);
  });

  it('places tasks in layers along the direction, inside the drawing, without overlap', () => {
    for (const direction of ['LR', 'TB'] as const) {
      const layout = layoutGraph(definition, direction);
      const at = Object.fromEntries(layout.tasks.map((task) => [task.task.name, task]));
      const along = (name: string) => (direction === 'LR' ? at[name]!.x : at[name]!.y);
      expect(along('Fetch')).toBeLessThan(along('Gate'));
      expect(along('Gate')).toBeLessThan(along('Store'));
      expect(along('Store')).toBeLessThan(along('Alert'));
      for (const task of layout.tasks) {
        expect(task.x).toBeGreaterThanOrEqual(0);
        expect(task.y).toBeGreaterThanOrEqual(0);
        expect(task.x + task.width).toBeLessThanOrEqual(layout.width);
        expect(task.y + task.height).toBeLessThanOrEqual(layout.height);
        expect(task.width).toBe(nodeWidth(task.task));
      }
      expect(layout.edges).toHaveLength(4);
      for (const edge of layout.edges) expect(edge.points.length).toBeGreaterThanOrEqual(2);
    }
  });

  it('draws a cycle or a duplicate name without failing (the editor reports them)', () => {
    const broken = readDefinition({
      tasks: [
        { name: 'A', dependencies: ['B'] },
        { name: 'B', dependencies: ['A'] },
        { name: 'A' },
      ],
    });
    expect(layoutGraph(broken, 'LR').tasks.map((task) => task.task.name)).toEqual(['A', 'B']);
  });
});
