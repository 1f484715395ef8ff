// Product scope inside a workspace (docs/team.md, "Product scope"): the one place that says whether
// a member may touch a resource. Another workspace's id is 404 `not_found` (whose it is stays
// unknown); a resource of a product the member was not given is 403 `not_assigned`. A resource's
// products come from what it belongs to: a lead from its list, a contact from the lists it is in, a
// conversation from its campaign and its lead. A resource that belongs to no product (an unmatched
// conversation, a contact in no list) is for members with every product only: deny by default.
// Workspace-level resources (sender accounts, settings) have no product and are the workspace's.
import type { EntityManager } from '@mikro-orm/postgresql';
import { AppError, notFound } from './errors.js';
import type { Actor } from './identity.js';

export const notAssigned = (what: string) => new AppError(403, 'not_assigned', `you were not given the product of this ${what}`);

/** The products a member was given; null: every product. */
export const productScope = (actor: Actor): readonly string[] | null => (actor.allApps ? null : actor.appIds);

/** The rule: a member with every product passes; else one of the resource's products must be theirs. */
export function checkProducts(actor: Actor, what: string, products: readonly (string | null | undefined)[]): void {
  if (actor.allApps) return;
  if (!products.some((p) => !!p && actor.appIds.includes(p))) throw notAssigned(what);
}

type Kind = 'app' | 'lead' | 'contact' | 'conversation' | 'campaign' | 'account';

/** Per kind: the row in the workspace, with its products (`apps`, a text[]); null when product-less by nature. */
const RESOLVE: Record<Kind, { what: string; sql: string }> = {
  app: { what: 'product', sql: `select a.id, array[a.id::text] as apps from apps a where a.id = ? and a.workspace_id = ?` },
  lead: { what: 'lead', sql: `select l.id, array[ll.app_id::text] as apps from leads l join lead_lists ll on ll.id = l.list_id where l.id = ? and l.workspace_id = ?` },
  contact: {
    what: 'contact',
    sql: `select k.id, array(select distinct ll.app_id::text from leads l join lead_lists ll on ll.id = l.list_id where l.contact_id = k.id) as apps from contacts k where k.id = ? and k.workspace_id = ?`,
  },
  conversation: {
    what: 'conversation',
    sql: `select c.id, array_remove(array[(select m.app_id::text from campaigns m where m.id = c.campaign_id),
                 (select ll.app_id::text from leads l join lead_lists ll on ll.id = l.list_id where l.id = c.lead_id)], null) as apps
            from conversations c where c.id = ? and c.workspace_id = ?`,
  },
  campaign: { what: 'campaign', sql: `select m.id, array[m.app_id::text] as apps from campaigns m where m.id = ? and m.workspace_id = ?` },
  account: { what: 'sender account', sql: `select p.id, null as apps from platform_accounts p where p.id = ? and p.workspace_id = ?` },
};

/**
 * The one check for an id: 404 outside the workspace, 403 `not_assigned` outside the member's
 * products (for kinds that have products). Used for path ids and for ids given as filters alike.
 */
export async function authorize(em: EntityManager, actor: Actor, kind: Kind, id: string): Promise<void> {
  const r = RESOLVE[kind];
  const [row] = await em.execute<{ id: string; apps: string[] | null }[]>(r.sql, [id, actor.workspaceId]);
  if (!row) throw notFound(r.what);
  if (row.apps !== null) checkProducts(actor, r.what, row.apps);
}

/**
 * SQL that keeps conversations `c` a member may see (pushes its parameters): every one for a member
 * with every product; else those of a campaign or a lead of one of their products.
 */
export function conversationScopeSql(actor: Actor, params: unknown[]): string {
  const scope = productScope(actor);
  if (!scope) return 'true';
  if (!scope.length) return 'false';
  params.push(`{${scope.join(',')}}`, `{${scope.join(',')}}`);
  return `(exists (select 1 from campaigns m where m.id = c.campaign_id and m.app_id = any(?::uuid[]))
           or exists (select 1 from leads l join lead_lists ll on ll.id = l.list_id where l.id = c.lead_id and ll.app_id = any(?::uuid[])))`;
}

/** SQL that keeps rows whose lead (`<alias>.lead_id`) is in one of the member's products. */
export function leadScopeSql(actor: Actor, leadIdColumn: string, params: unknown[]): string {
  const scope = productScope(actor);
  if (!scope) return 'true';
  if (!scope.length) return 'false';
  params.push(`{${scope.join(',')}}`);
  return `exists (select 1 from leads sl join lead_lists sll on sll.id = sl.list_id where sl.id = ${leadIdColumn} and sll.app_id = any(?::uuid[]))`;
}
