import path from 'node:path';
import type { TrellisConfig } from '#platform/config/types.js';

export type SandboxProfile = 'builtin' | 'third-party';

export interface SandboxSettings {
  memoryMb: number;
  /** Time limit of an attempt whose task sets none. */
  timeoutMilliseconds: number;
  maxProcesses: number;
  /** Processes the attempts of one run may hold at once; absent: `maxProcesses`. */
  maxProcessesPerRun?: number;
  maxOutputBytes: number;
  storageRoot: string;
  allowProcessExecution: boolean;
}

export function sandboxSettings(config: Pick<TrellisConfig, 'Plugins'>): SandboxSettings {
  const { Plugins } = config;
  return {
    memoryMb: Plugins.Sandbox.MemoryMb,
    timeoutMilliseconds: Plugins.Sandbox.TimeoutMilliseconds,
    maxProcesses: Plugins.Sandbox.MaxProcesses,
    maxProcessesPerRun:
      Plugins.Sandbox.MaxProcessesPerRun ??
      Math.max(1, Math.floor(Plugins.Sandbox.MaxProcesses / 2)),
    maxOutputBytes: Plugins.MaxOutputBytes,
    storageRoot: path.resolve(Plugins.StorageRoot),
    allowProcessExecution: Plugins.AllowProcessExecution,
  };
}
