import type { Kysely } from 'kysely';
import type { Listen } from '#store/notifications.js';
import * as pluginRepository from '#store/plugin-repository.js';
import type { InstalledPlugin } from '#store/plugin-repository.js';
import type { Database } from '#store/tables.js';
import { compareTypeAndVersion } from '#definition/plugin-versions.js';
import type { Logger } from '#platform/logging.js';

/**
 * The installed plugins as this API process looks them up to check a definition (which plugin
 * a task names, its parameter schema). Adding a workflow would otherwise query them on every
 * request: that query was a third of the request's cost. They change rarely, so the process
 * keeps a snapshot of them, never authoritative:
 *
 * - PostgreSQL notifies every change (`pluginChangesChannel`, a trigger on the table) and this
 *   process's own installs and uninstalls say so at once (`changed`): the snapshot is dropped;
 * - a snapshot is reloaded after `maxAgeMs` anyway, so a notification lost with its connection
 *   keeps a stale snapshot that long at most;
 * - a plugin the snapshot lacks is looked up in the database before it is called missing (it may
 *   have been installed a moment ago, its notification on the way).
 *
 * What is left is the race any check-then-write has: a plugin uninstalled while a workflow
 * naming it is being added. The uninstall refuses plugins stored workflows use, and an
 * execution checks its definition again, failing with a clear message.
 */
export interface InstalledPlugins {
  /** That version of a type (matched case-insensitively), or its latest installed version. */
  find(type: string, version?: string): Promise<InstalledPlugin | undefined>;
  /** The plugins changed: what is known is forgotten. */
  changed(): void;
  /** Stops listening for changes. */
  close(): Promise<void>;
}

interface Snapshot {
  /** Each type's installed versions (lower-case type), oldest first. */
  byType: Map<string, InstalledPlugin[]>;
  loadedAt: number;
}

export function createInstalledPlugins(
  db: Kysely<Database>,
  listen: Listen,
  logger: Logger,
  options: { maxAgeMs?: number } = {},
): InstalledPlugins {
  const maxAgeMs = options.maxAgeMs ?? 2000;
  let snapshot: Snapshot | undefined;
  let loading: Promise<Snapshot> | undefined;
  // Bumped by every change, so a load that began before one is not kept.
  let generation = 0;
  let listening: Promise<() => Promise<void>> | undefined;

  const changed = () => {
    generation++;
    snapshot = undefined;
    loading = undefined;
  };
  const startListening = () => {
    listening ??= listen(pluginRepository.pluginChangesChannel, {
      onNotify: changed,
      // Notifications may have been missed while there was no connection.
      onGap: changed,
    });
    return listening;
  };

  const load = (): Promise<Snapshot> => {
    const began = generation;
    const loadedAt = Date.now();
    const pending = pluginRepository.list(db).then((plugins) => {
      const byType = new Map<string, InstalledPlugin[]>();
      for (const plugin of plugins) {
        const key = plugin.type.toLowerCase();
        byType.set(key, [...(byType.get(key) ?? []), plugin]);
      }
      for (const versions of byType.values()) versions.sort(compareTypeAndVersion);
      const loaded = { byType, loadedAt };
      if (generation === began) snapshot = loaded;
      return loaded;
    });
    loading = pending;
    void pending.then(
      () => (loading === pending ? (loading = undefined) : undefined),
      () => (loading === pending ? (loading = undefined) : undefined),
    );
    return pending;
  };
  const current = (): Promise<Snapshot> => {
    if (snapshot && Date.now() - snapshot.loadedAt < maxAgeMs) return Promise.resolve(snapshot);
    return loading ?? load();
  };

  return {
    async find(type, version) {
      void startListening().catch((error: unknown) =>
        logger.warn({ err: error }, 'cannot listen for plugin changes; lookups reload'),
      );
      const versions = (await current()).byType.get(type.toLowerCase()) ?? [];
      const known =
        version === undefined ? versions.at(-1) : versions.find((p) => p.version === version);
      if (known) return known;
      const fresh =
        version === undefined
          ? await pluginRepository.latestByType(db, type)
          : await pluginRepository.findByTypeVersion(db, type, version);
      if (fresh) changed();
      return fresh;
    },
    changed,
    async close() {
      const stop = await listening?.catch(() => undefined);
      listening = undefined;
      await stop?.();
    },
  };
}
