import type { PluginEffects } from '@trellis/plugin-kit';

/**
 * What a plugin's tasks do (`effects` in its manifest), narrowest first. The plugin kit's
 * `PluginEffects` says what each means.
 */
export const PLUGIN_EFFECTS = [
  'pure',
  'reads',
  'writes',
  'calls',
] as const satisfies readonly PluginEffects[];

/** A manifest that does not say is taken at its widest: nothing is known of what it does. */
export const UNDECLARED_EFFECTS: PluginEffects = 'calls';

/**
 * Whether a task of a plugin with these effects may run for real in a dry run: only a pure one,
 * since it reaches nothing outside the run. Every other task's output is mocked.
 */
export function runsForRealInDryRun(effects: PluginEffects): boolean {
  return effects === 'pure';
}
