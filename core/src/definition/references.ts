/**
 * Checks that what a definition's tasks run exists: plugin configurations named by a string
 * `type`, installed plugins (and versions) named by an object `type`. The lookups come from the
 * caller (the repositories), so this module has no database code of its own.
 */
import { formatPath } from './location.js';
import { didYouMean, suggestionsFor } from './suggestions.js';
import { problemAt, withSuggestions, type Problem } from './validation/problem.js';
import type { WorkflowDefinition } from './types.js';

export interface ReferenceLookup {
  /** Whether the plugin type is installed (in that version, when one is given). */
  plugin(type: string, version?: string): Promise<boolean>;
  /** Whether a plugin configuration of that name exists. */
  configuration(name: string): Promise<boolean>;
  /** The installed plugin types, to suggest from when a task names an unknown one. */
  pluginTypes(): Promise<string[]>;
  /** The plugin configurations' names, to suggest from when a task names an unknown one. */
  configurationNames(): Promise<string[]>;
}

/**
 * One message per task whose plugin or configuration is unknown, with the known names it may
 * have meant; each distinct name is looked up once.
 */
export async function checkReferences(
  definition: WorkflowDefinition,
  lookup: ReferenceLookup,
): Promise<Problem[]> {
  const answers = new Map<string, Promise<boolean>>();
  const once = (key: string, ask: () => Promise<boolean>) => {
    let answer = answers.get(key);
    if (answer === undefined) {
      answer = ask();
      answers.set(key, answer);
    }
    return answer;
  };

  let types: Promise<string[]> | undefined;
  let configurations: Promise<string[]> | undefined;
  const pluginTypes = () => (types ??= lookup.pluginTypes());
  const configurationNames = () => (configurations ??= lookup.configurationNames());

  const problems = await Promise.all(
    definition.tasks.map(async (task, index) => {
      const at = formatPath(['tasks', index, 'type']);
      const { type } = task;
      if (type === undefined) return null; // a subworkflow (subworkflow-references.ts)
      if (typeof type === 'string') {
        const exists = await once(`configuration\u0000${type}`, () => lookup.configuration(type));
        if (exists) return null;
        const near = suggestionsFor(type, await configurationNames());
        return withSuggestions(
          problemAt(
            at,
            `task '${task.name}' uses unknown plugin configuration '${type}'${didYouMean(near)}`,
          ),
          near,
        );
      }
      const { plugin, version } = type;
      const exists = await once(`plugin\u0000${plugin}\u0000${version ?? ''}`, () =>
        version === undefined ? lookup.plugin(plugin) : lookup.plugin(plugin, version),
      );
      if (exists) return null;
      const named = version === undefined ? `'${plugin}'` : `'${plugin}' version ${version}`;
      const message = `task '${task.name}' uses plugin ${named}, which is not installed`;
      // A version that is not installed of a type that is: the type needs no suggestion.
      const near = version === undefined ? suggestionsFor(plugin, await pluginTypes()) : [];
      return withSuggestions(problemAt(at, `${message}${didYouMean(near)}`), near);
    }),
  );
  return problems.filter((problem) => problem !== null);
}
