import * as configurationRepository from '#store/configuration-repository.js';
import type { PluginConfigurationRow } from '#store/tables.js';
import { Conflict, NotFound } from '#definition/errors.js';
import type { AppDeps, HandlerMap } from '../handler.js';
import { confirmation } from '../handler.js';
import { listReply, requestedPage } from '../lists.js';
import type { RequestProject } from '../projects/request-project.js';
import {
  prepareConfiguration,
  redactedSpecifications,
  workflowsUsingConfiguration,
} from './settings.js';

const missing = (id: string) => new NotFound(`Configuration "${id}" was not found.`);

/** The configuration of the request's project; 404 when unknown or another project's alike. */
async function findConfiguration(
  deps: AppDeps,
  project: RequestProject,
  configId: string,
): Promise<PluginConfigurationRow> {
  const row = await configurationRepository.findById(deps.db, project.id, configId);
  if (!row) throw missing(configId);
  return row;
}

function toListItem(row: PluginConfigurationRow) {
  return {
    id: row.id,
    name: row.name,
    type: row.type,
    version: row.version,
    modifiedTime: row.modifiedTime ? row.modifiedTime.toISOString() : null,
  };
}

/**
 * `/config`: the plugin configurations of the request's project, their settings checked and their
 * secrets encrypted.
 */
export const configurationHandlers = {
  listConfigurations: async ({ deps, project, query }) =>
    listReply(
      await configurationRepository.list(deps.db, project.id, requestedPage(query)),
      query,
      toListItem,
    ),

  getConfiguration: async ({ deps, project, params }) => {
    const row = await findConfiguration(deps, project, params.configId);
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

  createConfiguration: async ({ deps, project, body }) => {
    const input = await prepareConfiguration(deps.db, deps.config, body);
    const row = await configurationRepository.insert(deps.db, project.id, input);
    return {
      data: { id: row.id, name: row.name },
      messages: [`Configuration "${row.name}" was created.`],
    };
  },

  updateConfiguration: async ({ deps, project, params, body }) => {
    const existing = await findConfiguration(deps, project, params.configId);
    const input = await prepareConfiguration(deps.db, deps.config, body, existing);
    const row = await configurationRepository.update(deps.db, params.configId, input);
    if (!row) throw missing(params.configId);
    return confirmation(`Configuration "${row.name}" was updated.`);
  },

  deleteConfiguration: async ({ deps, project, params }) => {
    const row = await findConfiguration(deps, project, params.configId);
    const users = await workflowsUsingConfiguration(deps.db, row);
    if (users.length > 0) {
      throw new Conflict(
        `Configuration "${row.name}" is used by workflows ${users.map((n) => `"${n}"`).join(', ')}; change or delete them first.`,
      );
    }
    if (!(await configurationRepository.remove(deps.db, row.id))) throw missing(params.configId);
    return confirmation(`Configuration "${row.name}" was deleted.`);
  },
} satisfies Partial<HandlerMap>;
