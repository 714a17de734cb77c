import type { Kysely } from 'kysely';
import { LRUCache } from 'lru-cache';
import * as executionRepository from '#store/execution-repository.js';
import { itemValue } from '#store/foreach-item-repository.js';
import * as taskExecutionRepository from '#store/task-execution-repository.js';
import type { Database, WorkflowExecutionRow } from '#store/tables.js';
import { type ExpressionScope } from '#definition/expressions/evaluate.js';
import { referencedTasks } from '#definition/expressions/references.js';
import type { DefinitionLimits } from '#definition/limits.js';
import { parseDefinition } from '#definition/parse.js';
import { renderProblem } from '#definition/validation/problem.js';
import type { TaskDefinition, WorkflowDefinition } from '#definition/types.js';
import { Invalid } from '#definition/errors.js';
import { taskDecisionScope } from './approval-scope.js';
import type { LoadedDefinition } from './loaded-definition.js';

/** Caches parsed execution definitions; one per worker process. */
export class DefinitionCache {
  private readonly cache = new LRUCache<string, Promise<LoadedDefinition>>({ max: 200 });

  constructor(
    private readonly db: Kysely<Database>,
    private readonly limits: DefinitionLimits,
  ) {}

  /** The parsed definition of an execution (loaded from its row on a miss). */
  get(executionId: string): Promise<LoadedDefinition> {
    return this.cached(executionId, () => this.load(executionId));
  }

  /** The parsed definition of an execution whose row is at hand: a miss parses it, no read. */
  of(execution: WorkflowExecutionRow): Promise<LoadedDefinition> {
    return this.cached(execution.id, async () => parsed(execution, this.limits));
  }

  private cached(
    executionId: string,
    load: () => Promise<LoadedDefinition>,
  ): Promise<LoadedDefinition> {
    const cached = this.cache.get(executionId);
    if (cached) return cached;
    const loading = load();
    this.cache.set(executionId, loading);
    loading.catch(() => this.cache.delete(executionId));
    return loading;
  }

  /** Caches a definition already parsed (the execution was just created from it). */
  put(execution: LoadedDefinition['execution'], definition: WorkflowDefinition): void {
    this.cache.set(execution.id, Promise.resolve(loadedDefinition(execution, definition)));
  }

  private async load(executionId: string): Promise<LoadedDefinition> {
    const execution = await executionRepository.findExecution(this.db, executionId);
    if (!execution) throw new Error(`Execution ${executionId} does not exist`);
    return parsed(execution, this.limits);
  }
}

function parsed(execution: WorkflowExecutionRow, limits: DefinitionLimits): LoadedDefinition {
  const result = parseDefinition(execution.definition, limits);
  if (!result.ok) {
    throw new Invalid(
      `Execution ${execution.id} has an invalid definition: ${result.problems.map(renderProblem).join('; ')}`,
    );
  }
  return loadedDefinition(execution, result.definition);
}

function loadedDefinition(
  execution: LoadedDefinition['execution'],
  definition: WorkflowDefinition,
): LoadedDefinition {
  const tasks = new Map(definition.tasks.map((task) => [task.name, task]));
  const reads = new Map(
    definition.tasks.map((task) => {
      const texts = stringsIn(task.parameters);
      stringsIn(task.inputs, texts); // a subworkflow's

      if (task.executionCondition) texts.push(task.executionCondition.expression);
      if (task.forEach) texts.push(task.forEach.items);
      return [task.name, [...new Set(texts.flatMap(referencedTasks))]];
    }),
  );
  return {
    execution: {
      id: execution.id,
      projectId: execution.projectId,
      workflowId: execution.workflowId,
      workflowName: execution.workflowName,
      inputs: execution.inputs,
      dryRun: execution.dryRun,
      dryRunMocks: execution.dryRunMocks,
      dryRunTestCase: execution.dryRunTestCase,
    },
    definition,
    tasks,
    reads,
  };
}

/** Every string inside a JSON value that may hold an expression. */
function stringsIn(value: unknown, found: string[] = []): string[] {
  if (typeof value === 'string') {
    if (value.includes('$[')) found.push(value);
  } else if (Array.isArray(value)) {
    for (const item of value) stringsIn(item, found);
  } else if (typeof value === 'object' && value !== null) {
    for (const item of Object.values(value)) stringsIn(item, found);
  }
  return found;
}

/**
 * What a task's expressions may read: the outputs it refers to, the inputs and variables, and
 * for an item of a forEach task (its row and index) the item.
 */
export async function expressionScope(
  db: Kysely<Database>,
  loaded: LoadedDefinition,
  taskName: string,
  item?: { taskExecutionId: string; index: number },
): Promise<ExpressionScope> {
  const names = loaded.reads.get(taskName) ?? [];
  const [outputs, value, decisions] = await Promise.all([
    taskExecutionRepository.taskOutputs(db, loaded.execution.id, names),
    item && itemValue(db, item.taskExecutionId),
    taskDecisionScope(db, loaded, taskName),
  ]);
  return {
    outputs,
    variables: loaded.definition.variables ?? {},
    inputs: loaded.execution.inputs,
    ...(item ? { item: { value, index: item.index } } : {}),
    ...decisions,
  };
}

/** The task of a loaded definition; `Invalid` when the definition has no such task. */
export function taskOf(loaded: LoadedDefinition, name: string): TaskDefinition {
  const task = loaded.tasks.get(name);
  if (!task) throw new Invalid(`Execution ${loaded.execution.id} has no task '${name}'`);
  return task;
}
