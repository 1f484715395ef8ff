// A workspace with two products (each with a list and a lead), a sender account, and a member given
// only the second product: the fixture for product-scope tests (domain/access.ts).
import { createOwner, workspaceIdOf } from './billing.js';
import { campaignOwner, fastAccount } from './campaigns.js';
import { addMemberViaInvite } from './team.js';

export async function createOwnerWithProducts() {
  const owner = await createOwner();
  const workspaceId = await workspaceIdOf(owner.id);
  const o1 = await campaignOwner(owner);
  const o2 = await campaignOwner(owner);
  const [l1] = await o1.leads(1);
  const [l2] = await o2.leads(1);
  const account = await fastAccount(owner, 'email');
  const { user: member } = await addMemberViaInvite(owner, { role: 'member', all_apps: false, app_ids: [o2.app.id] });
  return {
    owner,
    member,
    workspaceId,
    account,
    p1: { appId: o1.app.id, listId: o1.listId, lead: l1 },
    p2: { appId: o2.app.id, listId: o2.listId, lead: l2 },
  };
}
