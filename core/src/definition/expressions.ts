/**
 * Workflow expressions: `$[ ... ]` templates inside strings, and conditions.
 *
 * Parsing is jsep's; evaluation is a small interpreter over jsep's AST that only knows literals,
 * `Outputs('Task')`, `Inputs('name')`, `Variables('key')`, `Approval('Task')`, a forEach task's
 * `Item()` and `Index()`,
 * member access, and the operators below. There is no
 * `eval`, no `Function`, no identifier lookup in any global scope, and member access reads only
 * own properties of plain data, so nothing outside the scope can be reached.
 *
 * Evaluation is bounded, so that no definition can hold up or exhaust the worker that resolves it:
 * the values one resolution produces may total at most `MAX_RESOLVED_BYTES`, and it may take at
 * most `MAX_EVALUATION_STEPS` (each node evaluated, each element compared or measured counts).
 * Past either, or past the stack's depth, it fails with an `ExpressionError`.
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

type Node = jsep.Expression;

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

const FORBIDDEN_PROPERTIES = new Set(['__proto__', 'constructor', 'prototype']);
const BINARY_OPERATORS = new Set([
  ...['==', '!=', '===', '!==', '<', '<=', '>', '>='],
  ...['&&', '||', '??'],
  ...['+', '-', '*', '/', '%'],
]);
const UNARY_OPERATORS = new Set(['!', '-', '+']);
const FUNCTIONS = {
  outputs: 'Outputs',
  variables: 'Variables',
  inputs: 'Inputs',
  approval: 'Approval',
} as const;
type FunctionName = (typeof FUNCTIONS)[keyof typeof FUNCTIONS];
/** The functions of a forEach task's item, called without arguments. */
const ITEM_FUNCTIONS = { item: 'Item', index: 'Index' } as const;
export type ItemFunctionName = (typeof ITEM_FUNCTIONS)[keyof typeof ITEM_FUNCTIONS];
const CALLABLE =
  "Outputs('Task'), Inputs('name'), Variables('key'), Approval('Task'), Item() and Index()";

// ---------------------------------------------------------------------------------------------
// Templates: finding `$[ ... ]` in a string
// ---------------------------------------------------------------------------------------------

type TemplatePart = { text: string } | { expression: string };

class TemplateSyntaxError extends Error {}

/** An expression whose syntax tree nests deeper than any check accepts. */
class ExpressionTooDeep extends TemplateSyntaxError {
  constructor(
    readonly expression: string,
    readonly depth: number,
  ) {
    super(`$[${shorten(expression)}] nests ${depth} levels deep`);
  }
}

/** Text (an expression, a value) as messages show it: a huge one is cut short. */
function shorten(text: string): string {
  return text.length <= 200 ? text : `${text.slice(0, 200)}…`;
}

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
const MAX_CACHED_LENGTH = 1000;
const parsed = new Map<string, Node>();
/** How deeply each parsed syntax tree nests. */
const depths = new WeakMap<Node, number>();

/**
 * The deepest syntax tree parsed at all, whatever the definition's limit: the checks and the
 * evaluator recurse over the tree (the `maxSupportedDepth` of the configuration).
 */
const MAX_TREE_DEPTH = 1000;

/** Parses and checks one bare expression; throws with a message for the user when invalid. */
function parseExpression(expression: string): Node {
  const cached = parsed.get(expression);
  if (cached) return cached;
  let ast: Node;
  try {
    ast = jsep(expression);
  } catch (error) {
    // jsep descends recursively into brackets: a deep enough nest exhausts the call stack.
    if (error instanceof RangeError) {
      throw new TemplateSyntaxError(`cannot parse $[${shorten(expression)}]: it nests too deeply`);
    }
    throw new TemplateSyntaxError(`cannot parse $[${expression}]: ${(error as Error).message}`);
  }
  const depth = treeDepth(ast);
  if (depth > MAX_TREE_DEPTH) throw new ExpressionTooDeep(expression, depth);
  depths.set(ast, depth);
  const problem = findUnsupported(ast);
  if (problem !== null) throw new TemplateSyntaxError(`${problem} in $[${shorten(expression)}]`);
  // A long expression's tree is large: kept only while it is in use.
  if (expression.length <= MAX_CACHED_LENGTH) {
    if (parsed.size >= MAX_CACHED) parsed.clear();
    parsed.set(expression, ast);
  }
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
      const callee = call.callee.type === 'Identifier' ? (call.callee as jsep.Identifier) : null;
      const itemFunction = callee === null ? null : itemFunctionName(callee);
      if (itemFunction !== null) {
        return call.arguments.length > 0 ? `${itemFunction}() takes no arguments` : null;
      }
      const name = callee === null ? null : functionName(callee);
      if (name === null) return `only ${CALLABLE} can be called`;
      const [argument, ...extra] = call.arguments;
      // `Approval()`: the decision on the task's own approval.
      if (name === 'Approval' && argument === undefined) return null;
      if (argument?.type !== 'Literal' || typeof argument.value !== 'string' || extra.length > 0) {
        return `${name}(...) takes one quoted name, e.g. ${name}('name')`;
      }
      return null;
    }
    case 'Identifier': {
      const name = (node as jsep.Identifier).name;
      if (itemFunctionName(node as jsep.Identifier) !== null) {
        return `${name} must be called: ${name}()`;
      }
      return functionName(node as jsep.Identifier) !== null
        ? `${name} must be called, e.g. ${name}('name')`
        : `unknown name '${name}' (use ${CALLABLE})`;
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

/** `Item`/`Index`, matched case-insensitively like the other functions. */
function itemFunctionName(identifier: jsep.Identifier): ItemFunctionName | null {
  const key = identifier.name.toLowerCase();
  return Object.hasOwn(ITEM_FUNCTIONS, key)
    ? ITEM_FUNCTIONS[key as keyof typeof ITEM_FUNCTIONS]
    : null;
}

/**
 * Checks a condition (bare, or wrapped in one `$[ ]`), its syntax tree at most `maxDepth` deep.
 * Returns a message for the user, or null when it is valid.
 */
export function checkExpression(expression: string, maxDepth = MAX_TREE_DEPTH): string | null {
  return problemOf(() => parseWithin(unwrapCondition(expression), maxDepth));
}

/** Checks every `$[ ... ]` in a string (trees at most `maxDepth` deep); the first problem, or null. */
export function checkTemplate(text: string, maxDepth = MAX_TREE_DEPTH): string | null {
  return problemOf(() => {
    for (const part of splitTemplate(text)) {
      if ('expression' in part) parseWithin(part.expression, maxDepth);
    }
  });
}

function parseWithin(expression: string, maxDepth: number): void {
  let depth: number;
  try {
    depth = depths.get(parseExpression(expression)) ?? 0;
  } catch (error) {
    if (!(error instanceof ExpressionTooDeep)) throw error;
    depth = error.depth;
  }
  if (depth > maxDepth) {
    const tooDeep = new ExpressionTooDeep(expression, depth);
    throw new TemplateSyntaxError(
      `${tooDeep.message}, over the limit of ${maxDepth} (Definitions.MaxDepth)`,
    );
  }
}

/** How deeply a syntax tree nests, found without recursion: what runs after it recurses. */
function treeDepth(root: Node): number {
  let deepest = 0;
  const stack: Array<[Node, number]> = [[root, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    deepest = Math.max(deepest, depth);
    for (const value of Object.values(node)) {
      if (Array.isArray(value)) {
        for (const item of value) if (isNode(item)) stack.push([item, depth + 1]);
      } else if (isNode(value)) {
        stack.push([value, depth + 1]);
      }
    }
  }
  return deepest;
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

/**
 * The functions an expression calls (`Outputs`, `Inputs`, ...), as spelled canonically; takes
 * what {@link referencedTasks} takes. For parts of a definition that may read only some sources.
 */
export function calledFunctions(text: string): string[] {
  const called = new Set<string>();
  const visit = (node: Node): void => {
    if (node.type === 'CallExpression') {
      const callee = (node as jsep.CallExpression).callee;
      if (callee.type === 'Identifier') {
        const identifier = callee as jsep.Identifier;
        called.add(functionName(identifier) ?? identifier.name);
      }
    }
    for (const value of Object.values(node)) {
      if (Array.isArray(value)) {
        for (const item of value) if (isNode(item)) visit(item);
      } else if (isNode(value)) visit(value);
    }
  };
  for (const expression of expressionsOf(text)) {
    try {
      visit(parseExpression(expression));
    } catch {
      // What does not parse is reported by the checks.
    }
  }
  return [...called];
}

function expressionsOf(text: string): string[] {
  return text.includes('$[')
    ? splitTemplateOrEmpty(text).flatMap((part) => ('expression' in part ? [part.expression] : []))
    : [text];
}

/**
 * The tasks whose approval decisions are read through `Approval('...')`, like
 * {@link referencedTasks}; `Approval()` (the task's own) is the empty name `''`.
 */
export function referencedApprovals(text: string): string[] {
  return referencedNames(text, 'Approval');
}

function referencedNames(text: string, source: 'Outputs' | 'Inputs' | 'Approval'): string[] {
  const names = new Set<string>();
  for (const ast of parsedExpressions(text)) collectCalls(ast, source, names);
  return [...names];
}

/**
 * The item functions (`Item()`, `Index()`) a condition or template calls, like
 * {@link referencedTasks}: valid only in a forEach task's parameters and condition.
 */
export function referencedItemFunctions(text: string): ItemFunctionName[] {
  const found = new Set<ItemFunctionName>();
  for (const ast of parsedExpressions(text)) {
    visitNodes(ast, (node) => {
      if (node.type !== 'CallExpression') return;
      const callee = (node as jsep.CallExpression).callee;
      const name =
        callee.type === 'Identifier' ? itemFunctionName(callee as jsep.Identifier) : null;
      if (name !== null) found.add(name);
    });
  }
  return [...found];
}

/** The syntax trees of a condition or template's expressions; what does not parse is left out. */
function parsedExpressions(text: string): Node[] {
  const expressions = text.includes('$[')
    ? splitTemplateOrEmpty(text).flatMap((part) => ('expression' in part ? [part.expression] : []))
    : [text];
  const trees: Node[] = [];
  for (const expression of expressions) {
    try {
      trees.push(parseExpression(expression));
    } catch {
      // reported by the checks
    }
  }
  return trees;
}

function visitNodes(root: Node, visit: (node: Node) => void): void {
  const stack: Node[] = [root];
  while (stack.length > 0) {
    const node = stack.pop()!;
    visit(node);
    for (const value of Object.values(node)) {
      if (Array.isArray(value)) {
        for (const item of value) if (isNode(item)) stack.push(item);
      } else if (isNode(value)) {
        stack.push(value);
      }
    }
  }
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
      functionName(call.callee as jsep.Identifier) === source
    ) {
      if (argument?.type === 'Literal') names.add(String((argument as jsep.Literal).value));
      else if (argument === undefined) names.add('');
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
