// One approval request of a risky tool called over MCP (`mcp-approval:<approvalId>`, docs/mcp.md):
// waits for the `approve` signal (sent by the approve route once the row says approved) or for the
// request's expiry on a durable timer, then one activity settles it: the approved call runs exactly
// once, or the request expires. The row is the truth: a lost signal still runs an approved call when
// the timer fires.
import { condition, defineQuery, defineSignal, proxyActivities, setHandler } from '@temporalio/workflow';
import { defineJob } from './job.js';
import { mcpWorkflowIds } from '../lib/workflow-ids.js';
import type { McpActivities } from '../activities/mcp.js';

const { settleMcpApproval } = proxyActivities<McpActivities>({
  startToCloseTimeout: '5 minutes',
  retry: { maximumAttempts: 3, initialInterval: '1 second' },
});

export const approveMcpSignal = defineSignal('approve');
export const mcpApprovalStateQuery = defineQuery<{ approved: boolean; status: string | null }>('state');

export interface McpApprovalInput {
  approvalId: string;
  /** ISO time the request expires (the timer's deadline). */
  expiresAt: string;
}

export async function mcpApproval(input: McpApprovalInput): Promise<string> {
  let approved = false;
  let status: string | null = null;
  setHandler(approveMcpSignal, () => {
    approved = true;
  });
  setHandler(mcpApprovalStateQuery, () => ({ approved, status }));
  const waitMs = Math.max(1, Date.parse(input.expiresAt) - Date.now());
  await condition(() => approved, waitMs);
  status = await settleMcpApproval({ approvalId: input.approvalId });
  return status;
}

export const mcpApprovalJob = defineJob('mcp-approval', {
  workflow: mcpApproval,
  id: (k) => mcpWorkflowIds.approval(k.approvalId),
  args: (s) => [{ approvalId: s.approvalId, expiresAt: s.expiresAt }],
  scope: (s) => ({ workspaceId: s.workspaceId }),
  memo: (s) => ({ approval_id: s.approvalId }),
  repeat: 'never-again',
  signals: { approve: approveMcpSignal },
});
