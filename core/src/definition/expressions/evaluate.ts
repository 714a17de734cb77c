/**
 * Evaluating workflow expressions: `$[ ... ]` templates inside strings, and conditions.
 *
 * Evaluation is a small interpreter over jsep's AST that only knows what parsing accepts
 * (parse.ts): literals, `Outputs('Task')`, `Inputs('name')`, `Variables('key')`,
 * `Approval('Task')`, a forEach task's `Item()` and `Index()`, member access, and a few
 * operators. There is no `eval`, no `Function`, no identifier lookup in any global scope, and
 * member access reads only own properties of plain data, so nothing outside the scope can be
 * reached.
 *
 * Evaluation is bounded, so that no definition can hold up or exhaust the worker that resolves it:
 * the values one resolution produces may total at most `MAX_RESOLVED_BYTES`, and it may take at
 * most `MAX_EVALUATION_STEPS` (each node evaluated, each element compared or measured counts).
 * Past either, or past the stack's depth, it fails with an `ExpressionError`.
 *
 * This module is pure and deterministic: it imports nothing from Node.
 */
import type jsep from 'jsep';
import {
  FORBIDDEN_PROPERTIES,
  functionName,
  itemFunctionName,
  parseExpression,
  type Node,
} from './parse.js';
import {
  shorten,
  soleExpression,
  splitTemplate,
  unwrapCondition,
  type TemplatePart,
} from './template.js';

/** What expressions can read: task outputs by task name, the run's inputs, the variables. */
export interface ExpressionScope {
  outputs: Record<string, unknown>;
  variables: Record<string, unknown>;
  /** The run's resolved inputs; absent reads as none. */
  inputs?: Record<string, unknown>;
  /** The item a forEach task's run is for: what `Item()` and `Index()` read. */
  item?: { value: unknown; index: number };
  /** Decisions on approvals by task name (`Approval('Task')`); absent reads as none. */
  approvals?: Record<string, unknown>;
  /** The decision on the task's own approval (`Approval()`); absent reads as null. */
  approval?: unknown;
}

/** An expression failed while being evaluated (bad operand types, a forbidden property). */
export class ExpressionError extends Error {
  override readonly name = 'ExpressionError';

  constructor(
    readonly expression: string,
    message: string,
  ) {
    super(message);
  }
}

/** The most the values resolved for one task (its parameters, or a condition) may add up to. */
export const MAX_RESOLVED_BYTES = 16 * 1024 * 1024;
/** The most work one resolution may take: nodes evaluated, elements compared or measured. */
export const MAX_EVALUATION_STEPS = 10_000_000;

/** What is left of one resolution's allowance; shared by every expression it evaluates. */
class Budget {
  bytes = MAX_RESOLVED_BYTES;
  steps = MAX_EVALUATION_STEPS;
  /** Sizes of the objects measured so far: a value referenced many times is walked once. */
  readonly sizes = new WeakMap<object, number>();

  step(count = 1): void {
    this.steps -= count;
    if (this.steps < 0) {
      throw new BudgetExceeded(
        `would take more than ${MAX_EVALUATION_STEPS} evaluation steps (large values compared or measured many times)`,
      );
    }
  }

  /** Throws unless `bytes` more would still fit (nothing is spent). */
  fits(bytes: number): void {
    if (bytes > this.bytes) this.spend(bytes);
  }

  spend(bytes: number): void {
    this.bytes -= bytes;
    if (this.bytes < 0) {
      throw new BudgetExceeded(
        `would resolve to more than ${MAX_RESOLVED_BYTES / (1024 * 1024)} MiB of values`,
      );
    }
  }
}

class BudgetExceeded extends Error {}

// ---------------------------------------------------------------------------------------------
// Evaluation
// ---------------------------------------------------------------------------------------------

/**
 * Resolves every `$[ ... ]` in the strings of a value, deeply through arrays and objects (keys
 * are left alone). A string that is exactly one expression becomes the expression's raw value;
 * otherwise each result is interpolated as text (null as '', objects as JSON).
 */
export function resolveValue(value: unknown, scope: ExpressionScope): unknown {
  return bounded('the parameters', () => resolveWithin(value, scope, new Budget()));
}

function resolveWithin(value: unknown, scope: ExpressionScope, budget: Budget): unknown {
  if (typeof value === 'string') return resolveString(value, scope, budget);
  if (Array.isArray(value)) return value.map((item) => resolveWithin(item, scope, budget));
  if (isPlainObject(value)) {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, resolveWithin(item, scope, budget)]),
    );
  }
  return value;
}

function resolveString(text: string, scope: ExpressionScope, budget: Budget): unknown {
  if (!text.includes('$[')) return text;
  const parts = parseTemplate(text);
  const sole = soleExpression(parts);
  if (sole !== null) {
    const value = evaluateWithin(sole, scope, budget);
    budget.spend(jsonSize(value, budget));
    return value;
  }
  return parts
    .map((part) => {
      if ('text' in part) {
        budget.spend(part.text.length);
        return part.text;
      }
      const value = evaluateWithin(part.expression, scope, budget);
      // Measured before it is written out: JSON text of a large value is never built past the limit.
      budget.spend(jsonSize(value, budget));
      return toText(value);
    })
    .join('');
}

function parseTemplate(text: string): TemplatePart[] {
  try {
    return splitTemplate(text);
  } catch (error) {
    throw new ExpressionError(text, `${(error as Error).message} in ${JSON.stringify(text)}`);
  }
}

/** Evaluates one of the definition's `outputs` (see {@link checkOutputExpression}) to its value. */
export function evaluateOutputExpression(text: string, scope: ExpressionScope): unknown {
  return text.includes('$[') ? resolveValue(text, scope) : evaluateExpression(text, scope);
}

/** Evaluates a condition (bare, or wrapped in one `$[ ]`) to a boolean by its truthiness. */
export function evaluateCondition(expression: string, scope: ExpressionScope): boolean {
  return truthy(evaluateWrapped(expression, scope));
}

/**
 * Evaluates one expression written as a condition is (bare, or wrapped in one `$[ ]`) to its
 * raw value: a forEach task's `items`.
 */
export function evaluateWrapped(expression: string, scope: ExpressionScope): unknown {
  let bare: string;
  try {
    bare = unwrapCondition(expression);
  } catch (error) {
    throw new ExpressionError(
      expression,
      `${(error as Error).message}: ${JSON.stringify(expression)}`,
    );
  }
  return bounded(bare, () => evaluateWithin(bare, scope, new Budget()));
}

/** Evaluates one bare expression (the text inside `$[ ]`) to its raw value. */
export function evaluateExpression(expression: string, scope: ExpressionScope): unknown {
  return bounded(expression, () => evaluateWithin(expression, scope, new Budget()));
}

function evaluateWithin(expression: string, scope: ExpressionScope, budget: Budget): unknown {
  let ast: Node;
  try {
    ast = parseExpression(expression);
  } catch (error) {
    throw new ExpressionError(expression, (error as Error).message);
  }
  return new Evaluator(expression, scope, budget).evaluate(ast);
}

/**
 * Runs a resolution, turning its running out of allowance, or of stack (values or expressions
 * nested too deeply), into an `ExpressionError` naming what was being resolved.
 */
function bounded<T>(what: string, resolve: () => T): T {
  try {
    return resolve();
  } catch (error) {
    if (error instanceof BudgetExceeded) {
      throw new ExpressionError(what, `${shorten(what)} ${error.message}`);
    }
    if (error instanceof RangeError) {
      throw new ExpressionError(
        what,
        `${shorten(what)} cannot be evaluated: its values or expressions are nested too deeply or too large (${error.message})`,
      );
    }
    throw error;
  }
}

class Evaluator {
  constructor(
    private readonly expression: string,
    private readonly scope: ExpressionScope,
    private readonly budget: Budget,
  ) {}

  evaluate(node: Node): unknown {
    this.budget.step();
    switch (node.type) {
      case 'Literal':
        return (node as jsep.Literal).value;
      case 'ArrayExpression':
        return (node as jsep.ArrayExpression).elements.map((element) =>
          element === null ? null : this.evaluate(element),
        );
      case 'CallExpression':
        return this.call(node as jsep.CallExpression);
      case 'MemberExpression':
        return this.member(node as jsep.MemberExpression);
      case 'UnaryExpression':
        return this.unary(node as jsep.UnaryExpression);
      case 'BinaryExpression':
        return this.binary(node as jsep.BinaryExpression);
      case 'ConditionalExpression': {
        const conditional = node as jsep.ConditionalExpression;
        return truthy(this.evaluate(conditional.test))
          ? this.evaluate(conditional.consequent)
          : this.evaluate(conditional.alternate);
      }
      default:
        // Unreachable: parseExpression rejected every other node type.
        throw this.error(`${node.type} is not supported`);
    }
  }

  private call(node: jsep.CallExpression): unknown {
    const itemFunction = itemFunctionName(node.callee as jsep.Identifier);
    if (itemFunction !== null) {
      const { item } = this.scope;
      if (item === undefined) {
        throw this.error(`${itemFunction}() has a value only in a run of a forEach task's item`);
      }
      return itemFunction === 'Item' ? (item.value ?? null) : item.index;
    }
    const name = functionName(node.callee as jsep.Identifier);
    if (name === 'Approval' && node.arguments.length === 0) return this.scope.approval ?? null;
    const key = String((node.arguments[0] as jsep.Literal).value);
    if (name === 'Approval') return ownValue(this.scope.approvals ?? {}, key);
    const source =
      name === 'Outputs'
        ? this.scope.outputs
        : name === 'Inputs'
          ? (this.scope.inputs ?? {})
          : this.scope.variables;
    return ownValue(source, key);
  }

  private member(node: jsep.MemberExpression): unknown {
    const target = this.evaluate(node.object);
    const key = node.computed
      ? this.evaluate(node.property)
      : (node.property as jsep.Identifier).name;
    if (typeof key !== 'string' && typeof key !== 'number') {
      throw this.error(`cannot index with ${describe(key)}`);
    }
    if (typeof key === 'string' && FORBIDDEN_PROPERTIES.has(key)) {
      throw this.error(`property '${key}' is not accessible`);
    }
    if (target === null || target === undefined) return null;
    if (Array.isArray(target) || typeof target === 'string') {
      if (key === 'length') return target.length;
      return Number.isInteger(key) ? (target[key as number] ?? null) : null;
    }
    return isPlainObject(target) ? ownValue(target, String(key)) : null;
  }

  private unary(node: jsep.UnaryExpression): unknown {
    const value = this.evaluate(node.argument);
    if (node.operator === '!') return !truthy(value);
    if (typeof value !== 'number') {
      throw this.error(`operator ${node.operator} needs a number, not ${describe(value)}`);
    }
    return node.operator === '-' ? -value : value;
  }

  private binary(node: jsep.BinaryExpression): unknown {
    const { operator } = node;
    const left = this.evaluate(node.left);
    // Short-circuit like JavaScript, so `Outputs('A') && Outputs('A').x` is safe.
    if (operator === '&&') return truthy(left) ? this.evaluate(node.right) : left;
    if (operator === '||') return truthy(left) ? left : this.evaluate(node.right);
    if (operator === '??') return left ?? this.evaluate(node.right);
    const right = this.evaluate(node.right);
    switch (operator) {
      case '==':
      case '===':
        return sameValue(left, right, this.budget);
      case '!=':
      case '!==':
        return !sameValue(left, right, this.budget);
      case '<':
      case '<=':
      case '>':
      case '>=':
        return this.compare(operator, left, right);
      case '+':
        if (typeof left === 'number' && typeof right === 'number') return left + right;
        if (typeof left === 'string' || typeof right === 'string') {
          // Each part is measured before it is written out as text.
          this.budget.fits(jsonSize(left, this.budget) + jsonSize(right, this.budget));
          return toText(left) + toText(right);
        }
        throw this.error(`cannot add ${describe(left)} and ${describe(right)}`);
      default:
        return this.arithmetic(operator, left, right);
    }
  }

  private compare(operator: string, left: unknown, right: unknown): boolean {
    const comparable =
      (typeof left === 'number' && typeof right === 'number') ||
      (typeof left === 'string' && typeof right === 'string');
    if (!comparable) {
      throw this.error(`cannot compare ${describe(left)} ${operator} ${describe(right)}`);
    }
    // Both numbers or both strings here; `<` orders either (by code unit for strings).
    const [a, b] = [left, right] as [number, number];
    if (operator === '<') return a < b;
    if (operator === '<=') return a <= b;
    if (operator === '>') return a > b;
    return a >= b;
  }

  private arithmetic(operator: string, left: unknown, right: unknown): number {
    if (typeof left !== 'number' || typeof right !== 'number') {
      throw this.error(
        `operator ${operator} needs numbers, not ${describe(left)} and ${describe(right)}`,
      );
    }
    if ((operator === '/' || operator === '%') && right === 0) {
      throw this.error('division by zero');
    }
    if (operator === '-') return left - right;
    if (operator === '*') return left * right;
    if (operator === '/') return left / right;
    return left % right;
  }

  private error(problem: string): ExpressionError {
    return new ExpressionError(this.expression, `${problem} in $[${this.expression}]`);
  }
}

function ownValue(source: object, key: string): unknown {
  return Object.hasOwn(source, key) ? ((source as Record<string, unknown>)[key] ?? null) : null;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === Object.prototype || prototype === null;
}

function truthy(value: unknown): boolean {
  return Boolean(value);
}

/** Equality of JSON values: by value for arrays and objects, not by reference. */
function sameValue(left: unknown, right: unknown, budget: Budget): boolean {
  budget.step();
  if (left === right || (left == null && right == null)) return true;
  if (Array.isArray(left) && Array.isArray(right)) {
    return (
      left.length === right.length && left.every((item, i) => sameValue(item, right[i], budget))
    );
  }
  if (isPlainObject(left) && isPlainObject(right)) {
    const keys = Object.keys(left);
    return (
      keys.length === Object.keys(right).length &&
      keys.every((key) => Object.hasOwn(right, key) && sameValue(left[key], right[key], budget))
    );
  }
  return false;
}

/**
 * About how long a value's JSON text is, found by walking it (each element a step) without
 * writing it; the walk stops as soon as the length passes what the budget has left.
 */
function jsonSize(value: unknown, budget: Budget): number {
  if (typeof value !== 'object' || value === null) return measure(value, budget);
  let size = budget.sizes.get(value);
  if (size === undefined) {
    size = measure(value, budget);
    budget.sizes.set(value, size);
  }
  return size;
}

function measure(value: unknown, budget: Budget): number {
  let size = 0;
  const pending: unknown[] = [value];
  while (pending.length > 0 && size <= budget.bytes) {
    const item = pending.pop();
    budget.step();
    if (typeof item === 'string') size += item.length + 2;
    else if (Array.isArray(item)) {
      size += 2 + item.length;
      for (const element of item) pending.push(element);
    } else if (typeof item === 'object' && item !== null) {
      for (const [key, element] of Object.entries(item)) {
        size += key.length + 4;
        pending.push(element);
      }
      size += 2;
    } else size += String(item).length;
  }
  return size;
}

function toText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value) ?? '';
}

function describe(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return `the string ${JSON.stringify(shorten(value))}`;
  return `the ${typeof value} ${typeof value === 'number' || typeof value === 'boolean' ? String(value) : JSON.stringify(value)}`;
}
