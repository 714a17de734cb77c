/**
 * @trellis/sdk/mcp: the Model Context Protocol server of Trellis, its tools built on the SDK
 * (needs the optional peer dependency @modelcontextprotocol/sdk), and the lookups they share with
 * the `trellis` command.
 */
export { trellisMcpServer, type TrellisMcpOptions } from './server.js';
export { ToolError, toolFailure, type ToolFailure } from './tool-error.js';
export { definitionInterface, definitionOutline, readableDefinition } from './definition-text.js';
export type { InputDeclaration } from './definition-text.js';
export { approvalsOfExecution, tasksOfExecution } from './execution-lists.js';
export { readLogs, type NamedLogEntry } from './execution-logs.js';
export { approvalIdOf, isId, taskOf, workflowIdOf } from './resolve.js';
