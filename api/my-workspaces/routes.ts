// The caller's workspaces (own, team memberships, the shared Demo one). Identity routes: X-Acting-As
// does not apply.
import { z } from 'zod';
import { defineOperation, reply } from '../operation.js';
import { joinDemo } from '../../domain/demo/demo.js';
import { leaveWorkspace, listMyWorkspaces, type MyWorkspace } from '../../domain/team/memberships.js';

const tag = 'workspaces';

export const MyWorkspaceView = z.object({
  id: z.uuid(),
  name: z.string(),
  owner_id: z.uuid(),
  role: z.enum(['owner', 'admin', 'member']),
  member_id: z.uuid().nullable(),
  is_demo: z.boolean(),
});
const toView = (w: MyWorkspace): z.infer<typeof MyWorkspaceView> => ({
  id: w.id,
  name: w.name,
  owner_id: w.ownerId,
  role: w.role,
  member_id: w.memberId,
  is_demo: w.isDemo,
});

export const listMyWorkspacesOp = defineOperation({
  method: 'GET',
  path: '/api/me/workspaces',
  summary: 'Workspaces the caller can work in: their own first, then team memberships (the Demo one included)',
  tag,
  auth: 'user',
  responses: { 200: z.array(MyWorkspaceView) },
  errors: { 401: ['unauthorized'] },
  handler: async ({ em, auth }) => (await listMyWorkspaces(em, auth.userId)).map(toView),
});

export const joinDemoOp = defineOperation({
  method: 'POST',
  path: '/api/me/workspaces/demo/join',
  operationId: 'joinDemoWorkspace',
  idempotency: {
    exempt: 'idempotent by itself: joining again answers 200 with the same membership, and it acts as the caller only',
  },
  summary:
    'Join the shared read-only Demo workspace as a member (idempotent: 201 when joined now, 200 when already a member)',
  tag,
  auth: 'user',
  actingAs: false,
  responses: { 201: MyWorkspaceView, 200: MyWorkspaceView },
  errors: { 401: ['unauthorized'] },
  handler: async ({ em, auth }) => {
    const { member, created } = await joinDemo(em, auth.userId);
    const ws = member.workspace.getEntity();
    const view = toView({
      id: ws.id,
      name: ws.name,
      ownerId: ws.owner.id,
      role: member.role,
      memberId: member.id,
      isDemo: ws.isDemo,
    });
    return reply(created ? 201 : 200, view);
  },
});

export const leaveWorkspaceOp = defineOperation({
  method: 'DELETE',
  path: '/api/me/workspaces/{member_id}',
  operationId: 'leaveWorkspace',
  ids: { path: { member_id: { own: 'the caller’s own membership' } } },
  summary: 'Leave a workspace the caller is a member of (not their own)',
  tag,
  auth: 'user',
  actingAs: false,
  params: z.object({ member_id: z.uuid() }),
  responses: { 204: null },
  errors: { 400: ['invalid_id'], 401: ['unauthorized'], 403: ['owner_cannot_leave'], 404: ['not_found'] },
  handler: async ({ em, auth, params }) => {
    await leaveWorkspace(em, auth.userId, params.member_id);
  },
});
