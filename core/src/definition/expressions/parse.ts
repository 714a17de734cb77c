/**
 * Parsing workflow expressions: jsep's parser, then a check that the tree holds only what the
 * evaluator knows (literals, `Outputs('Task')`, `Inputs('name')`, `Variables('key')`,
 * `Approval('Task')`, a forEach task's `Item()` and `Index()`, member access, and a few
 * operators), so that every unsupported expression is refused when a definition is checked.
 *
 * Like the whole folder, this is pure and deterministic: it imports nothing from Node.
 */
import jsep from 'jsep';
import { shorten, TemplateSyntaxError } from './template.js';

export type Node = jsep.Expression;

export const FORBIDDEN_PROPERTIES = new Set(['__proto__', 'constructor', 'prototype']);
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
export type FunctionName = (typeof FUNCTIONS)[keyof typeof FUNCTIONS];
/** The functions of a forEach task's item, called without arguments. */
const ITEM_FUNCTIONS = { item: 'Item', index: 'Index' } as const;
export type ItemFunctionName = (typeof ITEM_FUNCTIONS)[keyof typeof ITEM_FUNCTIONS];
const CALLABLE =
  "Outputs('Task'), Inputs('name'), Variables('key'), Approval('Task'), Item() and Index()";

/** An expression whose syntax tree nests deeper than any check accepts. */
export class ExpressionTooDeep extends TemplateSyntaxError {
  constructor(
    readonly expression: string,
    readonly depth: number,
  ) {
    super(`$[${shorten(expression)}] nests ${depth} levels deep`);
  }
}

const MAX_CACHED = 1000;
const MAX_CACHED_LENGTH = 1000;
const parsed = new Map<string, Node>();
/** How deeply each parsed syntax tree nests. */
const depths = new WeakMap<Node, number>();

/**
 * The deepest syntax tree parsed at all, whatever the definition's limit: the checks and the
 * evaluator recurse over the tree (the `maxSupportedDepth` of the configuration).
 */
export const MAX_TREE_DEPTH = 1000;

/** Parses and checks one bare expression; throws with a message for the user when invalid. */
export function parseExpression(expression: string): Node {
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

/** How deeply a parsed expression's syntax tree nests (see {@link parseExpression}). */
export function parsedDepth(expression: string): number {
  return depths.get(parseExpression(expression)) ?? 0;
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
export function functionName(identifier: jsep.Identifier): FunctionName | null {
  const key = identifier.name.toLowerCase();
  return Object.hasOwn(FUNCTIONS, key) ? FUNCTIONS[key as keyof typeof FUNCTIONS] : null;
}

/** `Item`/`Index`, matched case-insensitively like the other functions. */
export function itemFunctionName(identifier: jsep.Identifier): ItemFunctionName | null {
  const key = identifier.name.toLowerCase();
  return Object.hasOwn(ITEM_FUNCTIONS, key)
    ? ITEM_FUNCTIONS[key as keyof typeof ITEM_FUNCTIONS]
    : null;
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

export function isNode(value: unknown): value is Node {
  return typeof value === 'object' && value !== null && typeof (value as Node).type === 'string';
}
