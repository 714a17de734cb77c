/** The tables of installed plugins and their named configurations. */
import type { ColumnType, Insertable, Selectable, Updateable } from 'kysely';
import type { PluginEffects, PluginSpecification } from '@trellis/plugin-kit';
import type { Timestamp, CreatedAt, Json } from './columns.js';
import type { ProjectIdColumn } from './projects.js';

/** A setting a plugin takes, as its manifest declares it (the plugin contract's type). */
export type PluginSpecificationDescriptor = PluginSpecification;
export interface PluginTable {
  id: string;
  type: string;
  version: string;
  description: string;
  /** The manifest's settings, as an array of descriptors. */
  specifications: Json<PluginSpecificationDescriptor[]>;
  /** JSON Schema of the task `parameters` the plugin takes. */
  parametersSchema: Json<Record<string, unknown>>;
  /** JSON Schema of what the plugin returns (`{}`, the column default, when its manifest does not say). */
  outputSchema: ColumnType<Record<string, unknown>, string | undefined, string>;
  /** What the plugin's tasks do, as its manifest declares (`calls`, the default, when it does not). */
  effects: ColumnType<PluginEffects, PluginEffects | undefined, PluginEffects>;
  /**
   * The manifest says the plugin is quick (its attempts run as local activities); null for a
   * plugin installed before this was kept (not known without its package).
   */
  quick: ColumnType<boolean | null, boolean | undefined, boolean | null>;
  /** `builtin` or `registry`. */
  source: string;
  /** sha256 (hex) of `package`, the content address of the unpacked cache. */
  sha256: string;
  /** The package tarball (gzip'd tar of the plugin folder). */
  package: Buffer;
  installedAt: CreatedAt;
}
export interface PluginConfigurationTable {
  id: string;
  projectId: ProjectIdColumn;
  /** Unique within its project. */
  name: string;
  type: string;
  version: string;
  /** Settings; values the manifest marks `secret` are stored encrypted. */
  specifications: Json<Record<string, unknown>>;
  createdAt: CreatedAt;
  modifiedTime: Timestamp | null;
}

export type PluginRow = Selectable<PluginTable>;
export type NewPlugin = Insertable<PluginTable>;
export type PluginConfigurationRow = Selectable<PluginConfigurationTable>;
export type NewPluginConfiguration = Insertable<PluginConfigurationTable>;
export type PluginConfigurationUpdate = Updateable<PluginConfigurationTable>;
