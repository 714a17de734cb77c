/**
 * A workflow definition after parsing: keys normalised to the camelCase names below
 * (the JSON text is read case-insensitively), defaults not yet applied.
 * This module is pure and is imported by Temporal workflow code: no Node, no I/O.
 */

export type ErrorStrategy = 'Abort' | 'Retry' | 'Skip' | 'TriggerTask';
export type BackoffStrategy = 'Fixed' | 'Linear' | 'Exponential' | 'Jitter';

export interface RetryPolicy {
  maxRetries?: number;
  backoffStrategy?: BackoffStrategy;
  initialDelayMilliseconds?: number;
  maxDelayMilliseconds?: number;
  backoffCoefficient?: number;
}

export interface ErrorHandling {
  strategy: ErrorStrategy;
  retryPolicy?: RetryPolicy;
  /** With `TriggerTask`: the task to run when this one fails. */
  triggerTask?: string;
}

/** A plugin named by type (`<group>/<name>`), version (latest installed if absent) and inline settings. */
export interface PluginReference {
  plugin: string;
  version?: string;
  specifications?: Record<string, unknown>;
}

/** `type` as a string names a plugin configuration; as an object, a plugin (and version). */
export type TaskType = string | PluginReference;

/** Bare (`a == 1`) or wrapped (`$[a == 1]`); see expressions.ts. */
export interface ExecutionCondition {
  expression: string;
}

export interface ManualApproval {
  enabled: boolean;
  comment?: string;
}

export interface TaskDefinition {
  name: string;
  description?: string;
  type: TaskType;
  dependencies?: string[];
  runOnFailureOf?: string[];
  parameters?: Record<string, unknown>;
  executionCondition?: ExecutionCondition;
  errorHandling?: ErrorHandling;
  timeoutMilliseconds?: number;
  manualApproval?: ManualApproval;
}

export interface WorkflowConfiguration {
  degreeOfParallelism?: number;
  timeoutMilliseconds?: number;
  errorHandling?: ErrorHandling;
}

export interface WorkflowDefinition {
  name: string;
  description?: string;
  variables?: Record<string, unknown>;
  configuration?: WorkflowConfiguration;
  tasks: TaskDefinition[];
}
