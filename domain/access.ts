// Product scope inside a workspace (docs/team.md, "Product scope"): the one place that says whether
// a caller may touch a resource. Every REST operation and every Operator/MCP tool declares what each
// id it takes names (`IdRule`); the router and the tool runner resolve those ids here, before the
// handler runs, so domain code receives only ids that passed:
// - another workspace's id (or one that does not exist) is 404 `not_found` (whose it is stays unknown);
// - a resource of a product the member was not given is 403 `not_assigned`.
// A resource's products come from what it belongs to: a lead from its list, a contact from the lists
// it is in, a conversation from its campaign and its lead. One that belongs to no product although
// its kind has products (an unmatched conversation, a contact in no list) is for members with every
// product only: deny by default. Workspace-level kinds (sender accounts, integrations, webhooks, team)
// have no product and are the workspace's; `own` kinds are the caller's alone (another user's is 404).
import type { EntityManager } from '@mikro-orm/postgresql';
import { AppError } from './errors.js';
import type { Actor } from './identity.js';

export const notAssigned = (what: string) => new AppError(403, 'not_assigned', `you were not given the product of this ${what}`);

/** Workspace-level resources (sender accounts, integrations, booking providers) are managed by owners and admins only. */
export function requireManager(actor: Actor, what: string): void {
  if (actor.role === 'member') throw new AppError(403, 'not_assigned', `only owners and admins manage ${what}`);
}

/** The products a member was given; null: every product. */
export const productScope = (actor: Actor): readonly string[] | null => (actor.allApps ? null : actor.appIds);

/** The rule: a member with every product passes; else one of the resource's products must be theirs. */
export function checkProducts(actor: Actor, what: string, products: readonly (string | null | undefined)[]): void {
  if (actor.allApps) return;
  if (!products.some((p) => !!p && actor.appIds.includes(p))) throw notAssigned(what);
}

interface Resolver {
  what: string;
  sql: string;
  /**
   * Whose a row is: a product's (default; its SQL gives the products), the workspace's (no product),
   * the caller's `own` (the SQL also takes the user id), or its `requester`'s unless the caller has
   * every product (the SQL also takes the user id and `allApps`).
   */
  scope?: 'workspace' | 'own' | 'requester';
}

const leadApps = (col: string) => `(select array_agg(ll.app_id::text) from leads l join lead_lists ll on ll.id = l.list_id where l.id = ${col})`;
const campaignApps = (col: string) => `(select array[m.app_id::text] from campaigns m where m.id = ${col})`;

/**
 * Per kind: what it is called in errors, and the SQL that finds one row by id (`= any(?)`) in the
 * workspace (`?`), with its products as `apps` (text[]; null when the kind has none by nature), and
 * whose a row is (`scope`).
 */
const RESOLVE = {
  app: { what: 'product', sql: `select a.id, array[a.id::text] as apps from apps a where a.id = any(?::uuid[]) and a.workspace_id = ?` },
  agent: { what: 'agent', sql: `select a.id, array[a.app_id::text] as apps from discovery_agents a where a.id = any(?::uuid[]) and a.workspace_id = ?` },
  list: { what: 'list', sql: `select l.id, array[l.app_id::text] as apps from lead_lists l where l.id = any(?::uuid[]) and l.workspace_id = ?` },
  lead: { what: 'lead', sql: `select l.id, array[ll.app_id::text] as apps from leads l join lead_lists ll on ll.id = l.list_id where l.id = any(?::uuid[]) and l.workspace_id = ?` },
  contact: {
    what: 'contact',
    sql: `select k.id, array(select distinct ll.app_id::text from leads l join lead_lists ll on ll.id = l.list_id where l.contact_id = k.id) as apps from contacts k where k.id = any(?::uuid[]) and k.workspace_id = ?`,
  },
  discovered_lead: { what: 'discovered lead', sql: `select d.id, array[d.app_id::text] as apps from discovered_leads d where d.id = any(?::uuid[]) and d.workspace_id = ?` },
  list_import: { what: 'import', sql: `select i.id, array[i.app_id::text] as apps from list_imports i where i.id = any(?::uuid[]) and i.workspace_id = ?` },
  cdm_import: { what: 'import', sql: `select j.id, array[j.app_id::text] as apps from cdm_imports j where j.id = any(?::uuid[]) and j.workspace_id = ?` },
  // A member with some products sees the exports they requested (within their products); one with
  // every product sees all.
  export: {
    what: 'export',
    scope: 'requester',
    sql: `select e.id, coalesce(array(select jsonb_array_elements_text(e.scope_app_ids)), '{}') as apps from contact_exports e
           where e.id = any(?::uuid[]) and e.workspace_id = ? and (e.requested_by = ? or ?)`,
  },
  campaign: { what: 'campaign', sql: `select m.id, array[m.app_id::text] as apps from campaigns m where m.id = any(?::uuid[]) and m.workspace_id = ?` },
  enrollment: { what: 'enrollment', sql: `select e.id, ${campaignApps('e.campaign_id')} as apps from enrollments e where e.id = any(?::uuid[]) and e.workspace_id = ?` },
  action: { what: 'scheduled action', sql: `select s.id, ${campaignApps('s.campaign_id')} as apps from scheduled_actions s where s.id = any(?::uuid[]) and s.workspace_id = ?` },
  conversation: {
    what: 'conversation',
    sql: `select c.id, array_remove(array[(select m.app_id::text from campaigns m where m.id = c.campaign_id),
                 (select ll.app_id::text from leads l join lead_lists ll on ll.id = l.list_id where l.id = c.lead_id)], null) as apps
            from conversations c where c.id = any(?::uuid[]) and c.workspace_id = ?`,
  },
  meeting: { what: 'meeting', sql: `select g.id, coalesce(${leadApps('g.lead_id')}, '{}') as apps from meetings g where g.id = any(?::uuid[]) and g.workspace_id = ?` },
  reminder: { what: 'reminder', sql: `select r.id, coalesce(${leadApps('r.lead_id')}, '{}') as apps from follow_up_reminders r where r.id = any(?::uuid[]) and r.workspace_id = ?` },
  insight: {
    what: 'insight',
    sql: `select i.id, case when i.app_id is null then null else array[i.app_id::text] end as apps from insights i where i.id = any(?::uuid[]) and i.workspace_id = ?`,
  },
  // Workspace-level: no product.
  account: { what: 'sender account', scope: 'workspace', sql: `select p.id, null as apps from platform_accounts p where p.id = any(?::uuid[]) and p.workspace_id = ?` },
  integration: { what: 'integration', scope: 'workspace', sql: `select x.id, null as apps from integrations x where x.id = any(?::uuid[]) and x.workspace_id = ?` },
  partner_event: { what: 'partner event', scope: 'workspace', sql: `select x.id, null as apps from partner_events x where x.id = any(?::uuid[]) and x.workspace_id = ?` },
  webhook: { what: 'webhook subscription', scope: 'workspace', sql: `select x.id, null as apps from webhook_subscriptions x where x.id = any(?::uuid[]) and x.workspace_id = ?` },
  booking_provider: { what: 'booking provider', scope: 'workspace', sql: `select x.id, null as apps from booking_providers x where x.id = any(?::uuid[]) and x.workspace_id = ?` },
  booking_event: { what: 'booking event', scope: 'workspace', sql: `select x.id, null as apps from booking_provider_events x where x.id = any(?::uuid[]) and x.workspace_id = ?` },
  member: { what: 'member', scope: 'workspace', sql: `select x.id, null as apps from team_members x where x.id = any(?::uuid[]) and x.workspace_id = ?` },
  invitation: { what: 'invitation', scope: 'workspace', sql: `select x.id, null as apps from team_invitations x where x.id = any(?::uuid[]) and x.workspace_id = ?` },
  // The suppression list is the workspace's, whatever the product (docs/email.md "Suppression").
  suppression: { what: 'suppression', scope: 'workspace', sql: `select x.id, null as apps from suppressions x where x.id = any(?::uuid[]) and x.workspace_id = ?` },

  // The caller's own (in the workspace): another user's is not found.
  thread: { what: 'thread', scope: 'own', sql: `select x.id, null as apps from agent_threads x where x.id = any(?::uuid[]) and x.workspace_id = ? and x.user_id = ?` },
  task: { what: 'task', scope: 'own', sql: `select x.id, null as apps from operator_tasks x where x.id = any(?::uuid[]) and x.workspace_id = ? and x.user_id = ?` },
  memory: { what: 'memory', scope: 'own', sql: `select x.id, null as apps from operator_memories x where x.id = any(?::uuid[]) and x.workspace_id = ? and x.user_id = ?` },
  approval: { what: 'approval', scope: 'own', sql: `select x.id, null as apps from mcp_approvals x where x.id = any(?::uuid[]) and x.workspace_id = ? and x.user_id = ?` },
  attachment: { what: 'attachment', scope: 'own', sql: `select x.id, null as apps from agent_attachments x where x.id = any(?::uuid[]) and x.workspace_id = ? and x.user_id = ?` },
} satisfies Record<string, Resolver>;

export type Kind = keyof typeof RESOLVE;
export const KINDS = Object.keys(RESOLVE) as Kind[];
/** Kinds that are the caller's own, at least for a member without every product (another user's is not found). */
export const OWN_KINDS = KINDS.filter((k) => ['own', 'requester'].includes((RESOLVE[k] as Resolver).scope ?? ''));
/** Kinds whose rows carry products: a member is refused one of a product they were not given (403). */
export const PRODUCT_KINDS = KINDS.filter((k) => !(RESOLVE[k] as Resolver).scope);

/**
 * What an id names, as an operation or tool declares it:
 * - a `Kind`: resolved and checked here (404 / 403 `not_assigned`);
 * - `{ kind, missing }`: the same, with the spec's status and code for an id that is not found
 *   (e.g. a body's list id: 400 `invalid_list_id`);
 * - `{ within }`: a child looked up by the domain inside its parent (another declared id of the same
 *   request, e.g. a step within `campaignId`): the parent's check covers it, a stranger is 404;
 * - `{ each }`: a batch whose items are answered one by one in the result (e.g. leads to enroll:
 *   `skipped: not_found`), not refused as a whole;
 * - `{ own }`: the caller's own record outside any workspace (an API token, a session, a
 *   notification, an idea): the domain reads it by the user's id, so another user's is 404;
 * - `{ value }`: not a resource id (a token, a provider name, an idempotency key), with why.
 */
export type IdRule = Kind | { kind: Kind; missing?: [number, string] } | { within: string } | { each: string } | { own: string } | { value: string };

/** The ids of a request by where they are, each with its rule. */
export interface IdDeclaration {
  path?: Record<string, IdRule>;
  query?: Record<string, IdRule>;
  body?: Record<string, IdRule>;
}

export const ruleKind = (rule: IdRule): Kind | null => (typeof rule === 'string' ? rule : 'kind' in rule ? rule.kind : null);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The one check for ids: each must be of the caller's workspace (else 404, or the rule's `missing`)
 * and, for kinds with products, of a product the member was given (else 403 `not_assigned`). One
 * query for all the ids of a kind. Ids that are not UUIDs are left to validation (never found here).
 */
export async function authorizeIds(em: EntityManager, actor: Actor, rule: IdRule, raw: readonly string[], pathOf?: (id: string) => string): Promise<void> {
  const kind = ruleKind(rule);
  if (!kind) return;
  const ids = [...new Set(raw.filter((id) => UUID.test(id)).map((id) => id.toLowerCase()))];
  if (!ids.length) return;
  const r: Resolver = RESOLVE[kind];
  const params: unknown[] = [`{${ids.join(',')}}`, actor.workspaceId];
  if (r.scope === 'own') params.push(actor.userId);
  if (r.scope === 'requester') params.push(actor.userId, actor.allApps);
  const rows = await em.execute<{ id: string; apps: string[] | null }[]>(r.sql, params);
  if (rows.length < ids.length) {
    const missing = typeof rule === 'object' && 'missing' in rule ? rule.missing : undefined;
    // The field (and index) of the first id not found, for a request's id.
    const found = new Set(rows.map((row) => row.id.toLowerCase()));
    const first = ids.find((id) => !found.has(id))!;
    const details = pathOf ? [{ path: pathOf(first), message: `${r.what} not found` }] : undefined;
    throw missing ? new AppError(missing[0], missing[1], `${r.what} not found`, details) : new AppError(404, 'not_found', `${r.what} not found`, details);
  }
  for (const row of rows) if (row.apps !== null) checkProducts(actor, r.what, row.apps);
}

/** One id of a kind: 404 outside the workspace, 403 `not_assigned` outside the member's products. */
export const authorize = (em: EntityManager, actor: Actor, kind: Kind, id: string): Promise<void> => authorizeIds(em, actor, kind, [id]);

/** The string ids a raw value carries: a string (comma-separated in a query), or an array of strings. */
export function idsIn(value: unknown, commaSeparated = false): string[] {
  if (typeof value === 'string') return commaSeparated ? value.split(',').map((s) => s.trim()) : [value];
  if (Array.isArray(value)) return value.flatMap((v) => idsIn(v, commaSeparated));
  return [];
}

/** Field names that read as ids (`…_id`, `…_ids`, `…Id`, `…ID`): each must be declared. */
export const looksLikeId = (name: string): boolean => /(_id|_ids|Id|ID)$/.test(name) || name === 'id';

/** Checks every declared id one part of a request (or a tool's input) carries, as validated. */
export async function authorizeRequest(
  em: EntityManager,
  actor: Actor,
  decl: IdDeclaration,
  part: 'path' | 'query' | 'body',
  values: Record<string, unknown> | undefined,
): Promise<void> {
  const rules = decl[part];
  if (!rules || !values || typeof values !== 'object') return;
  for (const [name, rule] of Object.entries(rules)) {
    const value = values[name];
    const ids = idsIn(value, part === 'query');
    const pathOf = (id: string) => (Array.isArray(value) ? `${name}.${value.findIndex((v) => typeof v === 'string' && v.toLowerCase() === id)}` : name);
    if (ids.length) await authorizeIds(em, actor, rule, ids, pathOf);
  }
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
