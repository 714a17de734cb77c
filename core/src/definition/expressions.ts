/**
 * Workflow expressions: `$[ ... ]` templates inside strings, and conditions.
 *
 * Parsing is jsep's; evaluation is a small interpreter over jsep's AST that only knows literals,
 * `Outputs('Task')`, `Inputs('name')`, `Variables('key')`, member access, and the operators below. There is no
 * `eval`, no `Function`, no identifier lookup in any global scope, and member access reads only
 * own properties of plain data, so nothing outside the scope can be reached.
 *
 * This module is pure and deterministic: it is bundled into Temporal workflow code, so it imports
 * nothing from Node.
 */
import jsep from 'jsep';

/** What expressions can read: task outputs by task name, the run's inputs, the variables. */
export interface ExpressionScope {
  outputs: Record<string, unknown>;
  variables: Record<string, unknown>;
  /** The run's resolved inputs; absent reads as none. */
  inputs?: Record<string, unknown>;
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

type Node = jsep.Expression;

const FORBIDDEN_PROPERTIES = new Set(['__proto__', 'constructor', 'prototype']);
const BINARY_OPERATORS = new Set([
  ...['==', '!=', '===', '!==', '<', '<=', '>', '>='],
  ...['&&', '||', '??'],
  ...['+', '-', '*', '/', '%'],
]);
const UNARY_OPERATORS = new Set(['!', '-', '+']);
const FUNCTIONS = { outputs: 'Outputs', variables: 'Variables', inputs: 'Inputs' } as const;
type FunctionName = (typeof FUNCTIONS)[keyof typeof FUNCTIONS];

// ---------------------------------------------------------------------------------------------
// Templates: finding `$[ ... ]` in a string
// ---------------------------------------------------------------------------------------------

type TemplatePart = { text: string } | { expression: string };

class TemplateSyntaxError extends Error {}

/**
 * Splits a string into literal text and `$[ ... ]` expressions. The closing `]` is the one that
 * balances the opening bracket, ignoring brackets inside quoted strings, so `$[Outputs('A')[0]]`
 * and `$[Outputs('A')['x]']]` are single expressions.
 */
function splitTemplate(text: string): TemplatePart[] {
  const parts: TemplatePart[] = [];
  let literalStart = 0;
  let index = text.indexOf('$[');
  while (index !== -1) {
    const end = findClosingBracket(text, index + 2);
    if (end === -1) {
      throw new TemplateSyntaxError(`unterminated $[ at character ${index}: missing ]`);
    }
    if (index > literalStart) parts.push({ text: text.slice(literalStart, index) });
    const expression = text.slice(index + 2, end).trim();
    if (expression === '') throw new TemplateSyntaxError(`empty $[ ] at character ${index}`);
    parts.push({ expression });
    literalStart = end + 1;
    index = text.indexOf('$[', literalStart);
  }
  if (literalStart < text.length) parts.push({ text: text.slice(literalStart) });
  return parts;
}

function findClosingBracket(text: string, from: number): number {
  let depth = 0;
  let quote: string | null = null;
  for (let i = from; i < text.length; i++) {
    const char = text[i];
    if (quote !== null) {
      if (char === '\\') i++;
      else if (char === quote) quote = null;
    } else if (char === "'" || char === '"') {
      quote = char;
    } else if (char === '[') {
      depth++;
    } else if (char === ']') {
      if (depth === 0) return i;
      depth--;
    }
  }
  return -1;
}

/** The expression inside a string that is exactly one `$[ ... ]`, or null. */
function soleExpression(parts: TemplatePart[]): string | null {
  const [only, ...rest] = parts;
  return only !== undefined && rest.length === 0 && 'expression' in only ? only.expression : null;
}

/** A condition may be written bare (`a == 1`) or wrapped (`$[a == 1]`). */
function unwrapCondition(condition: string): string {
  const text = condition.trim();
  if (!text.includes('$[')) return text;
  const sole = soleExpression(splitTemplate(text));
  if (sole === null) {
    throw new TemplateSyntaxError('a condition must be one expression, with or without $[ ]');
  }
  return sole;
}

// ---------------------------------------------------------------------------------------------
// Parsing and static checks
// ---------------------------------------------------------------------------------------------

const MAX_CACHED = 1000;
const parsed = new Map<string, Node>();

/** Parses and checks one bare expression; throws with a message for the user when invalid. */
function parseExpression(expression: string): Node {
  const cached = parsed.get(expression);
  if (cached) return cached;
  let ast: Node;
  try {
    ast = jsep(expression);
  } catch (error) {
    throw new TemplateSyntaxError(
      `cannot parse $[${expression}]: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  const problem = findUnsupported(ast);
  if (problem !== null) throw new TemplateSyntaxError(`${problem} in $[${expression}]`);
  if (parsed.size >= MAX_CACHED) parsed.clear();
  parsed.set(expression, ast);
  return ast;
}

/** Rejects everything the evaluator does not support, so that errors show up at validation. */
function findUnsupported(node: Node): string | null {
  switch (node.type) {
    case 'Literal':
      return node.value instanceof RegExp ? 'regular expressions are not supported' : null;
    case 'ArrayExpression':
      return firstProblem((node as jsep.ArrayExpression).elements);
    case 'UnaryExpression': {
      const unary = node as jsep.UnaryExpression;
      if (!UNARY_OPERATORS.has(unary.operator))
        return `operator ${unary.operator} is not supported`;
      return findUnsupported(unary.argument);
    }
    case 'BinaryExpression': {
      const binary = node as jsep.BinaryExpression;
      if (!BINARY_OPERATORS.has(binary.operator)) {
        return `operator ${binary.operator} is not supported`;
      }
      return firstProblem([binary.left, binary.right]);
    }
    case 'ConditionalExpression': {
      const conditional = node as jsep.ConditionalExpression;
      return firstProblem([conditional.test, conditional.consequent, conditional.alternate]);
    }
    case 'MemberExpression': {
      const member = node as jsep.MemberExpression;
      if (!member.computed) {
        const name = (member.property as jsep.Identifier).name;
        if (FORBIDDEN_PROPERTIES.has(name)) return `property '${name}' is not accessible`;
      } else if (isForbiddenLiteral(member.property)) {
        return `property '${String((member.property as jsep.Literal).value)}' is not accessible`;
      }
      return firstProblem(member.computed ? [member.object, member.property] : [member.object]);
    }
    case 'CallExpression': {
      const call = node as jsep.CallExpression;
      const name =
        call.callee.type === 'Identifier' ? functionName(call.callee as jsep.Identifier) : null;
      if (name === null) {
        return "only Outputs('Task'), Inputs('name') and Variables('key') can be called";
      }
      const [argument, ...extra] = call.arguments;
      if (argument?.type !== 'Literal' || typeof argument.value !== 'string' || extra.length > 0) {
        return `${name}(...) takes one quoted name, e.g. ${name}('name')`;
      }
      return null;
    }
    case 'Identifier': {
      const name = (node as jsep.Identifier).name;
      return functionName(node as jsep.Identifier) !== null
        ? `${name} must be called, e.g. ${name}('name')`
        : `unknown name '${name}' (use Outputs('Task'), Inputs('name') or Variables('key'))`;
    }
    case 'ThisExpression':
      return "'this' is not supported";
    case 'Compound':
    case 'SequenceExpression':
      return 'only one expression is allowed';
    default:
      return `${node.type} is not supported`;
  }
}

function firstProblem(nodes: Array<Node | null>): string | null {
  for (const child of nodes) {
    if (child === null) return 'empty array elements are not supported';
    const problem = findUnsupported(child);
    if (problem !== null) return problem;
  }
  return null;
}

function isForbiddenLiteral(node: Node): boolean {
  return node.type === 'Literal' && FORBIDDEN_PROPERTIES.has(String((node as jsep.Literal).value));
}

/** `Outputs`/`Inputs`/`Variables`, matched case-insensitively like the definition's keys. */
function functionName(identifier: jsep.Identifier): FunctionName | null {
  const key = identifier.name.toLowerCase();
  return Object.hasOwn(FUNCTIONS, key) ? FUNCTIONS[key as keyof typeof FUNCTIONS] : null;
}

/**
 * Checks a condition (bare, or wrapped in one `$[ ]`). Returns a message for the user, or null
 * when it is valid.
 */
export function checkExpression(expression: string): string | null {
  return problemOf(() => parseExpression(unwrapCondition(expression)));
}

/** Checks every `$[ ... ]` in a string. Returns the first problem, or null. */
export function checkTemplate(text: string): string | null {
  return problemOf(() => {
    for (const part of splitTemplate(text)) {
      if ('expression' in part) parseExpression(part.expression);
    }
  });
}

/**
 * Checks one of the definition's `outputs`: a bare expression, or text with `$[ ... ]` in it.
 * Returns the first problem, or null.
 */
export function checkOutputExpression(text: string): string | null {
  return text.includes('$[') ? checkTemplate(text) : checkExpression(text);
}

function problemOf(check: () => unknown): string | null {
  try {
    check();
    return null;
  } catch (error) {
    if (error instanceof TemplateSyntaxError) return error.message;
    throw error;
  }
}

/**
 * The task names read through `Outputs('...')`. Takes a condition (bare or wrapped) or a string
 * with `$[ ... ]` templates; what does not parse contributes nothing (the checks report it).
 */
export function referencedTasks(text: string): string[] {
  return referencedNames(text, 'Outputs');
}

/** The input names read through `Inputs('...')`, like {@link referencedTasks}. */
export function referencedInputs(text: string): string[] {
  return referencedNames(text, 'Inputs');
}

function referencedNames(text: string, source: 'Outputs' | 'Inputs'): string[] {
  const names = new Set<string>();
  const expressions = text.includes('$[')
    ? splitTemplateOrEmpty(text).flatMap((part) => ('expression' in part ? [part.expression] : []))
    : [text];
  for (const expression of expressions) {
    let ast: Node;
    try {
      ast = parseExpression(expression);
    } catch {
      continue;
    }
    collectCalls(ast, source, names);
  }
  return [...names];
}

function splitTemplateOrEmpty(text: string): TemplatePart[] {
  try {
    return splitTemplate(text);
  } catch {
    return [];
  }
}

function collectCalls(node: Node, source: FunctionName, names: Set<string>): void {
  if (node.type === 'CallExpression') {
    const call = node as jsep.CallExpression;
    const argument = call.arguments[0];
    if (
      call.callee.type === 'Identifier' &&
      functionName(call.callee as jsep.Identifier) === source &&
      argument?.type === 'Literal'
    ) {
      names.add(String((argument as jsep.Literal).value));
    }
    return;
  }
  for (const value of Object.values(node)) {
    if (Array.isArray(value)) {
      for (const item of value) if (isNode(item)) collectCalls(item, source, names);
    } else if (isNode(value)) {
      collectCalls(value, source, names);
    }
  }
}

function isNode(value: unknown): value is Node {
  return typeof value === 'object' && value !== null && typeof (value as Node).type === 'string';
}

// ---------------------------------------------------------------------------------------------
// Evaluation
// ---------------------------------------------------------------------------------------------

/**
 * Resolves every `$[ ... ]` in the strings of a value, deeply through arrays and objects (keys
 * are left alone). A string that is exactly one expression becomes the expression's raw value;
 * otherwise each result is interpolated as text (null as '', objects as JSON).
 */
export function resolveValue(value: unknown, scope: ExpressionScope): unknown {
  if (typeof value === 'string') return resolveString(value, scope);
  if (Array.isArray(value)) return value.map((item) => resolveValue(item, scope));
  if (isPlainObject(value)) {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, resolveValue(item, scope)]),
    );
  }
  return value;
}

function resolveString(text: string, scope: ExpressionScope): unknown {
  if (!text.includes('$[')) return text;
  const parts = parseTemplate(text);
  const sole = soleExpression(parts);
  if (sole !== null) return evaluateExpression(sole, scope);
  return parts
    .map((part) =>
      'text' in part ? part.text : toText(evaluateExpression(part.expression, scope)),
    )
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
  let bare: string;
  try {
    bare = unwrapCondition(expression);
  } catch (error) {
    throw new ExpressionError(
      expression,
      `${(error as Error).message}: ${JSON.stringify(expression)}`,
    );
  }
  return truthy(evaluateExpression(bare, scope));
}

/** Evaluates one bare expression (the text inside `$[ ]`) to its raw value. */
export function evaluateExpression(expression: string, scope: ExpressionScope): unknown {
  let ast: Node;
  try {
    ast = parseExpression(expression);
  } catch (error) {
    throw new ExpressionError(expression, (error as Error).message);
  }
  return new Evaluator(expression, scope).evaluate(ast);
}

class Evaluator {
  constructor(
    private readonly expression: string,
    private readonly scope: ExpressionScope,
  ) {}

  evaluate(node: Node): unknown {
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
    const name = functionName(node.callee as jsep.Identifier);
    const key = String((node.arguments[0] as jsep.Literal).value);
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
        return sameValue(left, right);
      case '!=':
      case '!==':
        return !sameValue(left, right);
      case '<':
      case '<=':
      case '>':
      case '>=':
        return this.compare(operator, left, right);
      case '+':
        if (typeof left === 'number' && typeof right === 'number') return left + right;
        if (typeof left === 'string' || typeof right === 'string') {
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
function sameValue(left: unknown, right: unknown): boolean {
  if (left === right || (left == null && right == null)) return true;
  if (Array.isArray(left) && Array.isArray(right)) {
    return left.length === right.length && left.every((item, i) => sameValue(item, right[i]));
  }
  if (isPlainObject(left) && isPlainObject(right)) {
    const keys = Object.keys(left);
    return (
      keys.length === Object.keys(right).length &&
      keys.every((key) => Object.hasOwn(right, key) && sameValue(left[key], right[key]))
    );
  }
  return false;
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
  if (typeof value === 'string') return `the string ${JSON.stringify(value)}`;
  return `the ${typeof value} ${typeof value === 'number' || typeof value === 'boolean' ? String(value) : JSON.stringify(value)}`;
}
