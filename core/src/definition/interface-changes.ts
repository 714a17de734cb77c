/**
 * A workflow's own contract, its declared `inputs` and `outputs`, compared between two revisions:
 * which changes break whoever starts its runs or reads their outputs, and whether a given caller
 * (a subworkflow task, a trigger with fixed inputs) is among those they break. Pure: no Node, no
 * database.
 */
import { formatPath } from './location.js';
import { shorten, soleExpression, splitTemplate } from './expressions/template.js';
import { isOfJsonType } from './validation/json-type.js';
import type { InputDeclaration, InputType, WorkflowDefinition } from './types.js';

/** The part of a definition its callers depend on. */
export type WorkflowInterface = Pick<WorkflowDefinition, 'inputs' | 'outputs'>;

/** A change of the declared interface that a caller working today may fail on. */
export type InterfaceBreak = {
  /** Where it is in the definition: `inputs.amount`, `outputs.total`. */
  path: string;
  /** What changed, as a sentence's predicate: `becomes required (number)`. */
  change: string;
  /**
   * Whether it breaks callers Trellis cannot see too (runs started through the API). Not when the
   * previous revision declared no inputs at all: declaring them is breaking only for the known
   * callers that then fail.
   */
  breaksUnseenCallers: boolean;
} & (
  | { kind: 'input.removed' | 'input.required'; input: string }
  | { kind: 'input.type'; input: string; type: InputType }
  | { kind: 'output.removed'; output: string }
);

/** Every input a run must be given: required and without a default. */
function mustBeGiven(declaration: InputDeclaration): boolean {
  return declaration.required === true && declaration.default === undefined;
}

/** Whether every value of `before` is also one of `after` (an integer is a number). */
function widens(before: InputType, after: InputType): boolean {
  return before === after || (before === 'integer' && after === 'number');
}

/**
 * The breaking changes from `before` to `after`, inputs first, each once: an input removed, one
 * a run must now be given (new and required without a default, or made so), one whose type
 * narrows or changes; an output removed. Outputs declare no type (each is an expression), so a
 * change of what one yields cannot be seen. Everything else passes: a new optional input or one
 * with a default, an input made optional, a new output, defaults and descriptions.
 */
export function interfaceBreaks(
  before: WorkflowInterface,
  after: WorkflowInterface,
): InterfaceBreak[] {
  const declaredBefore = before.inputs ?? {};
  const declaredAfter = after.inputs ?? {};
  const breaksUnseenCallers = Object.keys(declaredBefore).length > 0;
  const breaks: InterfaceBreak[] = [];
  for (const [input, declaration] of Object.entries(declaredAfter)) {
    const path = formatPath(['inputs', input]);
    const previous = Object.hasOwn(declaredBefore, input) ? declaredBefore[input] : undefined;
    if (previous !== undefined && !widens(previous.type, declaration.type)) {
      breaks.push({
        kind: 'input.type',
        input,
        type: declaration.type,
        path,
        change: `changes type from ${previous.type} to ${declaration.type}`,
        breaksUnseenCallers,
      });
    }
    if (mustBeGiven(declaration) && (previous === undefined || !mustBeGiven(previous))) {
      breaks.push({
        kind: 'input.required',
        input,
        path,
        change:
          previous === undefined
            ? `is a new required input (${declaration.type}) without a default`
            : `becomes required (${declaration.type})`,
        breaksUnseenCallers,
      });
    }
  }
  for (const input of Object.keys(declaredBefore)) {
    if (Object.hasOwn(declaredAfter, input)) continue;
    breaks.push({
      kind: 'input.removed',
      input,
      path: formatPath(['inputs', input]),
      change: 'is no longer declared',
      breaksUnseenCallers,
    });
  }
  for (const output of Object.keys(before.outputs ?? {})) {
    if (Object.hasOwn(after.outputs ?? {}, output)) continue;
    breaks.push({
      kind: 'output.removed',
      output,
      path: formatPath(['outputs', output]),
      change: 'is no longer an output',
      breaksUnseenCallers: true,
    });
  }
  return breaks;
}

/** A known caller of a workflow, as the breaks see it. */
export interface InterfaceCaller {
  /** The inputs it gives each run, as written (strings may hold `$[ ... ]`). */
  inputs: Record<string, unknown> | undefined;
  /** Whether it reads the runs' outputs (a subworkflow task does, a trigger does not). */
  readsOutputs: boolean;
}

/**
 * How `caller` fails on `change`, as a predicate (`does not give it`), or null when it does not.
 * A value that is one `$[ ... ]` expression has a type known only when it runs, so it counts as
 * failing an input whose type changes.
 */
export function howCallerBreaks(change: InterfaceBreak, caller: InterfaceCaller): string | null {
  if (change.kind === 'output.removed') {
    return caller.readsOutputs ? 'takes the run’s outputs as its output' : null;
  }
  const given = caller.inputs ?? {};
  const gives = Object.hasOwn(given, change.input);
  switch (change.kind) {
    case 'input.required':
      return gives ? null : 'does not give it';
    case 'input.removed':
      return gives ? 'gives it' : null;
    case 'input.type': {
      if (!gives) return null;
      const value = given[change.input];
      if (isExpression(value)) return 'gives it an expression whose type is known only at run time';
      return isOfJsonType(change.type, value) ? null : `gives it ${shorten(JSON.stringify(value))}`;
    }
  }
}

/** Whether a value is exactly one `$[ ... ]` expression (a template with text around is a string). */
function isExpression(value: unknown): boolean {
  if (typeof value !== 'string' || !value.includes('$[')) return false;
  try {
    return soleExpression(splitTemplate(value)) !== null;
  } catch {
    return false;
  }
}
