/** A plugin's declared effects (what its tasks do beyond computing their output), in words. */
import type { components } from '@trellis/sdk';

type PluginEffects = components['schemas']['PluginEffects'];

/** Each effect in words, narrowest first. */
export const effectWords: Record<PluginEffects, string> = {
  pure: 'Computes from its parameters and settings only',
  reads: 'Reads state outside the run, changes none',
  writes: 'Changes state outside the run (files, rows)',
  calls: 'Calls another system or program',
};

export const isEffect = (text: string): text is PluginEffects => Object.hasOwn(effectWords, text);

export function EffectBadge({ effects }: { effects: PluginEffects }) {
  return (
    <span class={`badge effect-${effects}`} title={effectWords[effects]}>
      {effects}
    </span>
  );
}
