/**
 * A problem as data: a stable code that programs may branch on, where it is, and what is wrong
 * there. Checks make problems where they find them; the edges (the HTTP envelope, the task log)
 * render each once, as `path: message`. Pure: no Node, no Ajv.
 */

/**
 * The codes of validation problems (README, "Error codes"): a required field or input is
 * missing; a field or input that is not known; a value that is not one of the allowed ones; any
 * other problem (wrong type, format, range, graph, expression).
 */
export type ValidationCode =
  'validation.required' | 'validation.unknown' | 'validation.enum' | 'validation.invalid';

export interface Problem {
  /** Stable: `validation.required`, `workflow.not_found`. */
  code: string;
  /** Where the problem is, as messages name places (`body.inputs.who`, `tasks[0].name`). */
  path?: string;
  /** What is wrong there (`is required (string)`), or the whole sentence when it has no place. */
  message: string;
  /** For a name that matches nothing known: the known names it may have meant, closest first. */
  suggestions?: string[];
}

/** A validation problem: at `path` when given, `validation.invalid` unless said otherwise. */
export function problemAt(
  path: string | undefined,
  message: string,
  code: ValidationCode = 'validation.invalid',
): Problem {
  return path === undefined ? { code, message } : { code, path, message };
}

/** The problem with the names it may have meant (as it was when there are none). */
export function withSuggestions(problem: Problem, suggestions: readonly string[]): Problem {
  return suggestions.length === 0 ? problem : { ...problem, suggestions: [...suggestions] };
}

/** The problem as a user reads it: `body.inputs.who: is required (string)`. */
export function renderProblem(problem: Problem): string {
  return problem.path === undefined ? problem.message : `${problem.path}: ${problem.message}`;
}

/**
 * The problems of a part told at the part's place in the whole, their codes kept:
 * `tasks[0].name: is required` in a request's definition is `body.definition: tasks[0].name: ...`.
 */
export function problemsWithin(path: string, problems: readonly Problem[]): Problem[] {
  return problems.map((problem) =>
    withSuggestions(
      { code: problem.code, path, message: renderProblem(problem) },
      problem.suggestions ?? [],
    ),
  );
}

/** The problems without repeats (two that read the same are one). */
export function distinctProblems(problems: readonly Problem[]): Problem[] {
  const seen = new Map<string, Problem>();
  for (const problem of problems) {
    const text = renderProblem(problem);
    if (!seen.has(text)) seen.set(text, problem);
  }
  return [...seen.values()];
}

/**
 * The problems of something named in words rather than by a place a program could use
 * (`trigger 42`, `workflow "Nightly" definition`): each told after the name, as a problem of the
 * whole, `validation.invalid`.
 */
export function problemsOf(subject: string, problems: readonly Problem[]): Problem[] {
  return problems.map((problem) => problemAt(undefined, `${subject}: ${renderProblem(problem)}`));
}
