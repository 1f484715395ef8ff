// MCP approvals (docs/mcp.md): a risky tool called over MCP waits for its user's approval. These two
// REST operations show a request to its owner and approve it once; the browser page
// `/oauth/mcp/approvals/{id}` does the same for a signed-in browser.
import { approve, requireApproval } from '../../domain/mcp/approvals.js';
import { defineOperation } from '../operation.js';
import { publicBase } from './base.js';
import { ApprovalBody, ApprovalView, toApprovalView } from './schemas.js';

const tag = 'mcp';

export const inspectApprovalOp = defineOperation({
  method: 'POST',
  path: '/api/mcp/approvals/inspect',
  ids: { body: { approval_id: 'approval' } },
  summary: 'Show an MCP approval request (the tool, the client, the exact arguments, the expiry) to its owner',
  tag,
  auth: 'user',
  body: ApprovalBody,
  responses: { 200: ApprovalView },
  errors: { 400: ['invalid_body', 'invalid_user'], 404: ['not_found'] },
  handler: async ({ em, actor, body, ctx }) =>
    toApprovalView(await requireApproval(em, actor, body.approval_id), publicBase(ctx)),
});

export const approveApprovalOp = defineOperation({
  method: 'POST',
  path: '/api/mcp/approvals/approve',
  ids: { body: { approval_id: 'approval' } },
  summary:
    'Approve a pending MCP approval request once: the waiting call then runs exactly once; the MCP client gets its result on a retry',
  tag,
  auth: 'user',
  body: ApprovalBody,
  responses: { 200: ApprovalView },
  errors: {
    400: ['invalid_body', 'invalid_user'],
    403: ['demo_read_only', 'not_assigned'],
    404: ['not_found'],
    409: ['approval_not_pending'],
  },
  handler: async ({ em, actor, body, ctx, services }) =>
    toApprovalView(await approve(em, services.jobs, actor, body.approval_id), publicBase(ctx)),
});
