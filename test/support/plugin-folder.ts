import os from 'node:os';
import path from 'node:path';
import type { LogLevel } from '#store/tables.js';
import { pluginSchemaValidator } from '#definition/validation/ajv.js';
import { builtInPluginsDirectory } from '#plugin-host/catalog.js';
import type { PluginHostSettings, PluginLogger } from '#plugin-host/contract.js';
import { defaultDeniedCidrs } from '#plugin-host/reach.js';
import type { SecretKeys } from '#plugin-host/settings.js';
import {
  createPluginLogger,
  executePlugin,
  loadPluginFolder,
  type PluginRunRequest,
} from '#plugin-host/runner.js';
import { validationProblems } from '#definition/validation/plugin-wording.js';
import { createSandboxPool, type SandboxPool } from '#plugin-host/sandbox/pool.js';
import type { SandboxSettings } from '#plugin-host/sandbox/sandbox-settings.js';

/**
 * Running a plugin package folder exactly as the runner would, without a database: for the
 * built-ins' tests and for anyone writing a plugin.
 */

export interface LogEntry {
  level: LogLevel;
  message: string;
  exception?: string;
}

/** A plugin logger that keeps its entries, for assertions. */
export function createRecordingLogger(): PluginLogger & { entries: LogEntry[] } {
  const entries: LogEntry[] = [];
  const logger = createPluginLogger((level, message, exception) =>
    entries.push(exception === undefined ? { level, message } : { level, message, exception }),
  );
  return Object.assign(logger, { entries });
}

export interface FolderRunOptions extends Partial<
  Omit<PluginRunRequest, 'type' | 'version' | 'task'>
> {
  host?: Partial<PluginHostSettings>;
  maxOutputBytes?: number;
  encryptionKey?: SecretKeys;
  /** Sandbox limits (defaults: the configuration's defaults). */
  sandbox?: Partial<Pick<SandboxSettings, 'memoryMb' | 'timeoutMilliseconds'>>;
}

/**
 * Loads the package in `dir` and runs it once with `options` (sensible test defaults): a folder
 * under `plugins/` as a built-in, any other as a third-party plugin, each in the sandbox the
 * runner would give it (started for this run, stopped after). Unlike the engine, it also checks
 * the output against the manifest's `output` schema, so that a plugin's tests catch a schema that
 * does not say what the plugin returns.
 */
export async function runPluginFolder(
  dir: string,
  options: FolderRunOptions = {},
): Promise<unknown> {
  const builtIn = !path.relative(builtInPluginsDirectory(), path.resolve(dir)).startsWith('..');
  const plugin = await loadPluginFolder(dir, builtIn ? 'builtin' : 'third-party');
  const { host, maxOutputBytes, encryptionKey, sandbox: limits, ...request } = options;
  const hostSettings: PluginHostSettings = {
    storageRoot: path.join(os.tmpdir(), 'trellis-plugin-storage'),
    allowProcessExecution: false,
    // The fence of a default installation, with no Trellis ports and no database to keep out.
    network: {
      denyCidrs: [],
      trellisEndpoints: [],
      allowCidrs: [],
      defaultDenyCidrs: defaultDeniedCidrs,
    },
    trellisDatabase: null,
    ...host,
  };
  let sandbox: SandboxPool | undefined;
  let output: unknown;
  try {
    output = await executePlugin(
      plugin,
      {
        logger: createRecordingLogger(),
        task: { name: 'test', executionId: 'test', attempt: 1, idempotencyKey: 'test:test:1' },
        ...request,
      },
      {
        host: hostSettings,
        maxOutputBytes: maxOutputBytes ?? 2 * 1024 * 1024,
        encryptionKey: encryptionKey ? async () => encryptionKey : undefined,
        sandbox: () =>
          (sandbox ??= createSandboxPool({
            memoryMb: 256,
            timeoutMilliseconds: 300_000,
            maxProcesses: 1,
            maxOutputBytes: maxOutputBytes ?? 2 * 1024 * 1024,
            ...hostSettings,
            ...limits,
          })),
      },
    );
  } finally {
    await sandbox?.close();
  }
  const { type, version, output: schema = {} } = plugin.manifest;
  const problems = validationProblems(
    pluginSchemaValidator(schema),
    structuredClone(output),
    'output field',
  );
  if (problems.length > 0) {
    throw new Error(
      `Plugin "${type}" ${version} returned an output its manifest's output schema does not allow: ${problems.join('; ')}`,
    );
  }
  return output;
}
