/** What an expression reads: the tasks, inputs and approvals it names, the functions it calls. */
import type jsep from 'jsep';
import {
  functionName,
  isNode,
  itemFunctionName,
  parseExpression,
  type FunctionName,
  type ItemFunctionName,
  type Node,
} from './parse.js';
import { splitTemplate, type TemplatePart } from './template.js';

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
  for (const ast of parsedExpressions(text)) visit(ast);
  return [...called];
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
