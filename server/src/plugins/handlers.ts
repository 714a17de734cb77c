import * as pluginRepository from '#store/plugin-repository.js';
import type { InstalledPlugin } from '#store/plugin-repository.js';
import { isUuid } from '#store/ids.js';
import { NotFound } from '#definition/errors.js';
import { installPlugin, uninstallPlugin, updatePlugin } from '#plugin-host/installation.js';
import type { HandlerMap } from '../handler.js';
import { confirmation } from '../handler.js';
import { listReply, pageInMemory } from '../lists.js';

function toListItem(plugin: InstalledPlugin) {
  return {
    id: plugin.id,
    type: plugin.type,
    version: plugin.version,
    description: plugin.description,
    effects: plugin.effects,
  };
}

function toDetail(plugin: InstalledPlugin) {
  return {
    ...toListItem(plugin),
    specifications: plugin.specifications,
    parameters: plugin.parametersSchema,
    output: plugin.outputSchema,
  };
}

/** `/plugins`: installed plugins, and installing, updating and uninstalling them from the catalog. */
export const pluginHandlers = {
  listPlugins: async ({ deps, query }) =>
    listReply(pageInMemory(await pluginRepository.list(deps.db), query), query, toListItem),

  /** A UUID means the detail; otherwise a group (`Storage`) or an exact type (`Net%2FHttp`). */
  getPluginOrListByType: async ({ deps, params, query }) => {
    const key = params.pluginIdOrType;
    if (isUuid(key)) {
      const plugin = await pluginRepository.findById(deps.db, key);
      if (!plugin) throw new NotFound(`Plugin "${key}" was not found.`);
      return { data: toDetail(plugin) };
    }
    const filter = key.includes('/') ? { type: key } : { group: key };
    const plugins = await pluginRepository.list(deps.db, filter);
    return listReply(pageInMemory(plugins, query), query, toDetail);
  },

  listPluginsByType: async ({ deps, params, query }) => {
    const plugins = await pluginRepository.list(deps.db, {
      type: `${params.group}/${params.name}`,
    });
    return listReply(pageInMemory(plugins, query), query, toDetail);
  },

  installPlugin: async ({ deps, body }) => {
    const plugin = await installPlugin(deps.db, deps.catalog, {
      type: body.Type,
      version: body.Version,
    });
    deps.installedPlugins.changed();
    return confirmation(`Plugin "${plugin.type}" ${plugin.version} was installed.`);
  },

  updatePlugin: async ({ deps, body }) => {
    const { plugin, changed } = await updatePlugin(deps.db, deps.catalog, {
      type: body.Type,
      version: body.Version,
    });
    deps.installedPlugins.changed();
    return confirmation(
      changed
        ? `Plugin "${plugin.type}" was updated to ${plugin.version}.`
        : `Plugin "${plugin.type}" is already at version ${plugin.version}; nothing changed.`,
    );
  },

  uninstallPlugin: async ({ deps, body }) => {
    await uninstallPlugin(deps.db, { type: body.Type, version: body.Version });
    deps.installedPlugins.changed();
    return confirmation(`Plugin "${body.Type}" ${body.Version} was uninstalled.`);
  },
} satisfies Partial<HandlerMap>;
