/**
 * The plugin contract: what a plugin package provides and what the engine gives it. Its one
 * source is the plugin author kit (`plugin-kit/`, published as `@trellis/plugin-kit`), so the
 * types a third-party plugin is written against are exactly the ones the engine uses.
 *
 * A package is a folder (or a gzip'd tarball of one) holding `plugin.json` (the manifest)
 * and the ES module named by `manifest.main` (default `index.js`) exporting `execute`.
 */
export type {
  JsonSchema,
  LogLevel,
  PluginContext,
  PluginExecute,
  PluginHostSettings,
  PluginLogger,
  PluginManifest,
  PluginModule,
  PluginNetworkFence,
  PluginSpecification,
  PluginTask,
  PluginTraceContext,
  TrellisDatabaseAddress,
} from '@trellis/plugin-kit';
