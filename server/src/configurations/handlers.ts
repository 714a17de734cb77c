import * as configurationRepository from '#store/configuration-repository.js';
import type { PluginConfigurationRow } from '#store/tables.js';
import { Conflict, NotFound } from '#definition/errors.js';
import type { HandlerMap } from '../handler.js';
import { confirmation } from '../handler.js';
import { listReply, requestedPage } from '../lists.js';
import {
  prepareConfiguration,
  redactedSpecifications,
  workflowsUsingConfiguration,
} from './settings.js';

const missing = (id: string) => new NotFound(`Configuration "${id}" was not found.`);

function toListItem(row: PluginConfigurationRow) {
  return {
    id: row.id,
    name: row.name,
    type: row.type,
    version: row.version,
    modifiedTime: row.modifiedTime ? row.modifiedTime.toISOString() : null,
  };
}

/** `/config`: plugin configurations, their settings checked and their secrets encrypted. */
export const configurationHandlers = {
  listConfigurations: async ({ deps, query }) =>
    listReply(await configurationRepository.list(deps.db, requestedPage(query)), query, toListItem),

  getConfiguration: async ({ deps, params }) => {
    const row = await configurationRepository.findById(deps.db, params.configId);
    if (!row) throw missing(params.configId);
    return {
      data: {
        id: row.id,
        name: row.name,
        type: row.type,
        version: row.version,
        specifications: await redactedSpecifications(deps.db, row),
      },
    };
  },

  createConfiguration: async ({ deps, body }) => {
    const input = await prepareConfiguration(deps.db, deps.config, body);
    const row = await configurationRepository.insert(deps.db, input);
    return {
      data: { id: row.id, name: row.name },
      messages: [`Configuration "${row.name}" was created.`],
    };
  },

  updateConfiguration: async ({ deps, params, body }) => {
    const existing = await configurationRepository.findById(deps.db, params.configId);
    if (!existing) throw missing(params.configId);
    const input = await prepareConfiguration(deps.db, deps.config, body, existing);
    const row = await configurationRepository.update(deps.db, params.configId, input);
    if (!row) throw missing(params.configId);
    return confirmation(`Configuration "${row.name}" was updated.`);
  },

  deleteConfiguration: async ({ deps, params }) => {
    const row = await configurationRepository.findById(deps.db, params.configId);
    if (!row) throw missing(params.configId);
    const users = await workflowsUsingConfiguration(deps.db, row.name);
    if (users.length > 0) {
      throw new Conflict(
        `Configuration "${row.name}" is used by workflows ${users.map((n) => `"${n}"`).join(', ')}; change or delete them first.`,
      );
    }
    if (!(await configurationRepository.remove(deps.db, row.id))) throw missing(params.configId);
    return confirmation(`Configuration "${row.name}" was deleted.`);
  },
} satisfies Partial<HandlerMap>;
