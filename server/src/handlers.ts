import { accountHandlers } from './account/handlers.js';
import { approvalHandlers } from './approvals/handlers.js';
import { auditHandlers } from './audit/handlers.js';
import { approvalLinkHandlers } from './approvals/links.js';
import { configurationHandlers } from './configurations/handlers.js';
import { executionHandlers } from './executions/handlers.js';
import { projectExecutionHandlers } from './executions/project-handlers.js';
import { apiKeyHandlers } from './keys/handlers.js';
import type { HandlerMap } from './handler.js';
import { notificationHandlers } from './notifications/handlers.js';
import { pluginHandlers } from './plugins/handlers.js';
import { projectHandlers } from './projects/handlers.js';
import { systemHandlers } from './system/handlers.js';
import { triggerHandlers } from './triggers/handlers.js';
import { workflowHandlers } from './workflows/handlers.js';
import { workflowSummaryHandlers } from './workflows/summaries.js';
import { workflowTestHandlers } from './workflows/tests.js';

/** Every operation of the spec, one handler each; a missing or unknown one fails type-checking. */
export const handlers = {
  ...configurationHandlers,
  ...pluginHandlers,
  ...workflowHandlers,
  ...workflowSummaryHandlers,
  ...workflowTestHandlers,
  ...triggerHandlers,
  ...executionHandlers,
  ...projectExecutionHandlers,
  ...approvalHandlers,
  ...approvalLinkHandlers,
  ...notificationHandlers,
  ...systemHandlers,
  ...accountHandlers,
  ...auditHandlers,
  ...projectHandlers,
  ...apiKeyHandlers,
} satisfies HandlerMap;
