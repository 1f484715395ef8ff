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
import { z } from 'zod';
import { AppError } from './errors.js';
import type { Actor } from './identity.js';

export const notAssigned = (what: string) =>
  new AppError(403, 'not_assigned', `you were not given the product of this ${what}`);

/** Workspace-level resources (sender accounts, integrations, booking providers) are managed by owners and admins only. */
export function requireManager(actor: Actor, what: string): void {
  if (actor.role === 'member') throw new AppError(403, 'not_assigned', `only owners and admins manage ${what}`);
}

/** The products a member was given; null: every product. */
export const productScope = (actor: Actor): readonly string[] | null => (actor.allApps ? null : actor.appIds);

/**
 * The rule: a member with every product may open a resource; else one of its products must be theirs
 * (a resource of no product although its kind has products is for members with every product only).
 */
export const mayOpen = (
  member: { allApps: boolean; appIds: readonly string[] },
  products: readonly (string | null | undefined)[],
): boolean => member.allApps || products.some((p) => !!p && member.appIds.includes(p));

/** The rule as a check: 403 `not_assigned` when the member may not open it. */
export function checkProducts(actor: Actor, what: string, products: readonly (string | null | undefined)[]): void {
  if (!mayOpen(actor, products)) throw notAssigned(what);
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

const leadApps = (col: string) =>
  `(select array_agg(ll.app_id::text) from leads l join lead_lists ll on ll.id = l.list_id where l.id = ${col})`;
const campaignApps = (col: string) => `(select array[m.app_id::text] from campaigns m where m.id = ${col})`;

/**
 * Per kind: what it is called in errors, and the SQL that finds one row by id (`= any(?)`) in the
 * workspace (`?`), with its products as `apps` (text[]; null when the kind has none by nature), and
 * whose a row is (`scope`).
 */
/** A workspace-level kind: its rows have no product. */
const workspaceRow = (what: string, table: string): Resolver => ({
  what,
  scope: 'workspace',
  sql: `select x.id, null as apps from ${table} x where x.id = any(?::uuid[]) and x.workspace_id = ?`,
});
/** A kind that is the caller's own in the workspace: another user's is not found. */
const ownRow = (what: string, table: string): Resolver => ({
  what,
  scope: 'own',
  sql: `select x.id, null as apps from ${table} x where x.id = any(?::uuid[]) and x.workspace_id = ? and x.user_id = ?`,
});

const RESOLVE = {
  app: {
    what: 'product',
    sql: `select a.id, array[a.id::text] as apps from apps a where a.id = any(?::uuid[]) and a.workspace_id = ?`,
  },
  agent: {
    what: 'agent',
    sql: `select a.id, array[a.app_id::text] as apps from discovery_agents a where a.id = any(?::uuid[]) and a.workspace_id = ?`,
  },
  list: {
    what: 'list',
    sql: `select l.id, array[l.app_id::text] as apps from lead_lists l where l.id = any(?::uuid[]) and l.workspace_id = ?`,
  },
  lead: {
    what: 'lead',
    sql: `select l.id, array[ll.app_id::text] as apps from leads l join lead_lists ll on ll.id = l.list_id where l.id = any(?::uuid[]) and l.workspace_id = ?`,
  },
  contact: {
    what: 'contact',
    sql: `select k.id, array(select distinct ll.app_id::text from leads l join lead_lists ll on ll.id = l.list_id where l.contact_id = k.id) as apps from contacts k where k.id = any(?::uuid[]) and k.workspace_id = ?`,
  },
  discovered_lead: {
    what: 'discovered lead',
    sql: `select d.id, array[d.app_id::text] as apps from discovered_leads d where d.id = any(?::uuid[]) and d.workspace_id = ?`,
  },
  list_import: {
    what: 'import',
    sql: `select i.id, array[i.app_id::text] as apps from list_imports i where i.id = any(?::uuid[]) and i.workspace_id = ?`,
  },
  cdm_import: {
    what: 'import',
    sql: `select j.id, array[j.app_id::text] as apps from cdm_imports j where j.id = any(?::uuid[]) and j.workspace_id = ?`,
  },
  // A member with some products sees the exports they requested (within their products); one with
  // every product sees all.
  export: {
    what: 'export',
    scope: 'requester',
    sql: `select e.id, coalesce(array(select jsonb_array_elements_text(e.scope_app_ids)), '{}') as apps from contact_exports e
           where e.id = any(?::uuid[]) and e.workspace_id = ? and (e.requested_by = ? or ?)`,
  },
  campaign: {
    what: 'campaign',
    sql: `select m.id, array[m.app_id::text] as apps from campaigns m where m.id = any(?::uuid[]) and m.workspace_id = ?`,
  },
  enrollment: {
    what: 'enrollment',
    sql: `select e.id, ${campaignApps('e.campaign_id')} as apps from enrollments e where e.id = any(?::uuid[]) and e.workspace_id = ?`,
  },
  action: {
    what: 'scheduled action',
    sql: `select s.id, ${campaignApps('s.campaign_id')} as apps from scheduled_actions s where s.id = any(?::uuid[]) and s.workspace_id = ?`,
  },
  conversation: {
    what: 'conversation',
    sql: `select c.id, array_remove(array[(select m.app_id::text from campaigns m where m.id = c.campaign_id),
                 (select ll.app_id::text from leads l join lead_lists ll on ll.id = l.list_id where l.id = c.lead_id)], null) as apps
            from conversations c where c.id = any(?::uuid[]) and c.workspace_id = ?`,
  },
  meeting: {
    what: 'meeting',
    sql: `select g.id, coalesce(${leadApps('g.lead_id')}, '{}') as apps from meetings g where g.id = any(?::uuid[]) and g.workspace_id = ?`,
  },
  reminder: {
    what: 'reminder',
    sql: `select r.id, coalesce(${leadApps('r.lead_id')}, '{}') as apps from follow_up_reminders r where r.id = any(?::uuid[]) and r.workspace_id = ?`,
  },
  insight: {
    what: 'insight',
    sql: `select i.id, case when i.app_id is null then null else array[i.app_id::text] end as apps from insights i where i.id = any(?::uuid[]) and i.workspace_id = ?`,
  },
  // Workspace-level: no product.
  account: {
    what: 'sender account',
    scope: 'workspace',
    sql: `select p.id, null as apps from platform_accounts p where p.id = any(?::uuid[]) and p.workspace_id = ?`,
  },
  integration: workspaceRow('integration', 'integrations'),
  partner_event: workspaceRow('partner event', 'partner_events'),
  webhook: workspaceRow('webhook subscription', 'webhook_subscriptions'),
  booking_provider: workspaceRow('booking provider', 'booking_providers'),
  booking_event: workspaceRow('booking event', 'booking_provider_events'),
  member: workspaceRow('member', 'team_members'),
  invitation: workspaceRow('invitation', 'team_invitations'),
  // The suppression list is the workspace's, whatever the product (docs/email.md "Suppression").
  suppression: workspaceRow('suppression', 'suppressions'),

  // The caller's own (in the workspace): another user's is not found.
  thread: ownRow('thread', 'agent_threads'),
  task: ownRow('task', 'operator_tasks'),
  memory: ownRow('memory', 'operator_memories'),
  approval: ownRow('approval', 'mcp_approvals'),
  attachment: ownRow('attachment', 'agent_attachments'),
} satisfies Record<string, Resolver>;

export type Kind = keyof typeof RESOLVE;
export const KINDS = Object.keys(RESOLVE) as Kind[];
/** Kinds that are the caller's own, at least for a member without every product (another user's is not found). */
export const OWN_KINDS = KINDS.filter((k) => ['own', 'requester'].includes((RESOLVE[k] as Resolver).scope ?? ''));
/** Kinds whose rows carry products: a member is refused one of a product they were not given (403). */
export const PRODUCT_KINDS = KINDS.filter((k) => !(RESOLVE[k] as Resolver).scope);

/** A child kind found by its parent's id in one column. */
const childRow = (what: string, table: string, parentColumn: string) => ({
  what,
  sql: `select x.id from ${table} x where x.id = any(?::uuid[]) and x.${parentColumn} = ?`,
});

/**
 * Children: rows looked up inside a parent that another declared id of the same request names (a step
 * within its campaign). The parent's check covers their product; here, one that is not that parent's
 * (another campaign's step, an unknown id) is not found. Per child kind: what it is called, and the SQL
 * that finds its rows by id (`= any(?)`) inside the parent (`?`).
 */
const CHILDREN = {
  step: childRow('step', 'campaign_steps', 'campaign_id'),
  enroll_operation: childRow('operation', 'enroll_operations', 'campaign_id'),
  review_item: childRow('draft', 'message_drafts', 'campaign_id'),
  example: childRow('example', 'message_examples', 'campaign_id'),
  // A campaign links signals of agents of its own product.
  campaign_signal: {
    what: 'signal',
    sql: `select s.id from agent_signals s join discovery_agents a on a.id = s.agent_id join campaigns m on m.app_id = a.app_id where s.id = any(?::uuid[]) and m.id = ?`,
  },
  // A campaign enrolls the lists of its own product.
  campaign_list: {
    what: 'list',
    sql: `select l.id from lead_lists l join campaigns m on m.app_id = l.app_id where l.id = any(?::uuid[]) and m.id = ?`,
  },
  signal: childRow('signal', 'agent_signals', 'agent_id'),
  rejected_profile: childRow('rejected profile', 'rejected_profiles', 'agent_id'),
  list_import: childRow('import', 'list_imports', 'app_id'),
  // A lead is a contact's membership of one list (DELETE /api/lists/{id}/leads/{leadId}).
  list_lead: childRow('lead', 'leads', 'list_id'),
  specialist_run: childRow('run', 'specialist_runs', 'app_id'),
  attachment: childRow('attachment', 'agent_attachments', 'thread_id'),
  cdm_member: childRow('member', 'cdm_import_members', 'job_id'),
  cdm_company: childRow('company', 'cdm_import_companies', 'job_id'),
  campaign_action: childRow('scheduled action', 'scheduled_actions', 'campaign_id'),
} satisfies Record<string, { what: string; sql: string }>;

export type ChildKind = keyof typeof CHILDREN;
export const CHILD_KINDS = Object.keys(CHILDREN) as ChildKind[];

/**
 * What an id names, as an operation or tool declares it:
 * - a `Kind`: resolved and checked here (404 / 403 `not_assigned`);
 * - `{ kind, missing }`: the same, with the spec's status and code for an id that is not found
 *   (e.g. a body's list id: 400 `invalid_list_id`);
 * - `{ within, child }`: a child inside its parent (another declared id of the same request, e.g. a
 *   step within `campaignId`): the parent's check covers its product; one not in that parent is 404
 *   (or `missing`), checked here like the rest;
 * - `{ each, why }`: a batch whose items are answered one by one in the result (leads to enroll):
 *   not refused as a whole; the ids the caller may not see (another workspace's, unknown, or of a
 *   product the member was not given) reach the handler as `refused`, to be answered exactly like an
 *   unknown id (`not_found`), revealing nothing of their state; `{ each: child, within, why }`: the
 *   same for children of a declared parent (actions of the campaign), refused when not inside it;
 * - `{ own }`: the caller's own record outside any workspace (an API token, a session, a
 *   notification, an idea): the domain reads it by the user's id, so another user's is 404;
 * - `{ value }`: not a resource id (a token, a provider name, an idempotency key), with why.
 *
 * A field's name is its path in the part: `lead_ids`, or inside arrays `events[].job_id`, `[].app_id`.
 */
export type IdRule =
  | Kind
  | { kind: Kind; missing?: [number, string] }
  | { within: string; child: ChildKind; missing?: [number, string] }
  | { each: Kind; why: string }
  | { each: ChildKind; within: string; why: string }
  | { own: string }
  | { value: string };

/** The ids of a request by where they are, each with its rule. */
export interface IdDeclaration {
  path?: Record<string, IdRule>;
  query?: Record<string, IdRule>;
  body?: Record<string, IdRule>;
}

export const ruleKind = (rule: IdRule): Kind | null =>
  typeof rule === 'string' ? rule : 'kind' in rule ? rule.kind : null;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const uuidsOf = (raw: readonly string[]) => [
  ...new Set(raw.filter((id) => UUID.test(id)).map((id) => id.toLowerCase())),
];

const missingOf = (rule: IdRule): [number, string] | undefined =>
  typeof rule === 'object' && 'missing' in rule ? rule.missing : undefined;

function notFoundError(rule: IdRule, what: string, first: string, pathOf?: (id: string) => string): AppError {
  const missing = missingOf(rule);
  const details = pathOf ? [{ path: pathOf(first), message: `${what} not found` }] : undefined;
  return missing
    ? new AppError(missing[0], missing[1], `${what} not found`, details)
    : new AppError(404, 'not_found', `${what} not found`, details);
}

/** The rows of a kind among `ids` in the caller's workspace (and own scope), with their products. */
async function resolveRows(em: EntityManager, actor: Actor, kind: Kind, ids: string[]) {
  const r: Resolver = RESOLVE[kind];
  const params: unknown[] = [`{${ids.join(',')}}`, actor.workspaceId];
  if (r.scope === 'own') params.push(actor.userId);
  if (r.scope === 'requester') params.push(actor.userId, actor.allApps);
  return em.execute<{ id: string; apps: string[] | null }[]>(r.sql, params);
}

/**
 * The one check for ids: each must be of the caller's workspace (else 404, or the rule's `missing`)
 * and, for kinds with products, of a product the member was given (else 403 `not_assigned`). One
 * query for all the ids of a kind. Ids that are not UUIDs are left to validation (never found here).
 */
export async function authorizeIds(
  em: EntityManager,
  actor: Actor,
  rule: IdRule,
  raw: readonly string[],
  pathOf?: (id: string) => string,
): Promise<void> {
  const kind = ruleKind(rule);
  if (!kind) return;
  const ids = uuidsOf(raw);
  if (!ids.length) return;
  const r: Resolver = RESOLVE[kind];
  const rows = await resolveRows(em, actor, kind, ids);
  if (rows.length < ids.length) {
    const found = new Set(rows.map((row) => row.id.toLowerCase()));
    throw notFoundError(
      rule,
      r.what,
      ids.find((id) => !found.has(id))!,
      pathOf,
    );
  }
  for (const row of rows) if (row.apps !== null) checkProducts(actor, r.what, row.apps);
}

/** One id of a kind: 404 outside the workspace, 403 `not_assigned` outside the member's products. */
export const authorize = (em: EntityManager, actor: Actor, kind: Kind, id: string): Promise<void> =>
  authorizeIds(em, actor, kind, [id]);

/** Kinds whose rows a notification or any other message about them may name (not a person's own records). */
export type SharedKind = Exclude<Kind, 'thread' | 'task' | 'memory' | 'approval' | 'attachment' | 'export'>;

/**
 * The products of rows of a kind in a workspace, by id: null for a workspace-level kind, an empty
 * array for a row of no product (or one not found): who may be told about it is decided by `mayOpen`.
 */
export async function productsOf(
  em: EntityManager,
  workspaceId: string,
  kind: SharedKind,
  raw: readonly string[],
): Promise<Map<string, readonly string[] | null>> {
  const ids = uuidsOf(raw);
  const out = new Map<string, readonly string[] | null>();
  const r: Resolver = RESOLVE[kind];
  if (ids.length)
    for (const row of await em.execute<{ id: string; apps: string[] | null }[]>(r.sql, [
      `{${ids.join(',')}}`,
      workspaceId,
    ]))
      out.set(row.id.toLowerCase(), row.apps);
  for (const id of ids) if (!out.has(id)) out.set(id, r.scope === 'workspace' ? null : []);
  return out;
}

/** The ids of a batch the caller may not see: unknown, another workspace's, or of a product the member was not given. */
export async function hiddenIds(
  em: EntityManager,
  actor: Actor,
  kind: Kind,
  raw: readonly string[],
): Promise<string[]> {
  const ids = uuidsOf(raw);
  if (!ids.length) return [];
  const visible = new Set<string>();
  for (const row of await resolveRows(em, actor, kind, ids))
    if (row.apps === null || mayOpen(actor, row.apps)) visible.add(row.id.toLowerCase());
  return ids.filter((id) => !visible.has(id));
}

/** The ids of a batch of children that are not inside the parent. */
async function hiddenChildren(
  em: EntityManager,
  child: ChildKind,
  parent: string,
  raw: readonly string[],
): Promise<string[]> {
  const ids = uuidsOf(raw);
  if (!ids.length) return [];
  const rows = UUID.test(parent)
    ? await em.execute<{ id: string }[]>(CHILDREN[child].sql, [`{${ids.join(',')}}`, parent.toLowerCase()])
    : [];
  const found = new Set(rows.map((row) => row.id.toLowerCase()));
  return ids.filter((id) => !found.has(id));
}

/** Children of the parent: any not inside it is not found (404, or the rule's `missing`). */
async function authorizeChildren(
  em: EntityManager,
  rule: { within: string; child: ChildKind; missing?: [number, string] },
  parent: string,
  raw: readonly string[],
  pathOf: (id: string) => string,
) {
  // The same lookup as a batch's: the first child not inside the parent refuses the request.
  const [first] = await hiddenChildren(em, rule.child, parent, raw);
  if (first) throw notFoundError(rule, CHILDREN[rule.child].what, first, pathOf);
}

/** The string ids a raw value carries: a string (comma-separated in a query), or an array of strings. */
export function idsIn(value: unknown, commaSeparated = false): string[] {
  if (typeof value === 'string') return commaSeparated ? value.split(',').map((s) => s.trim()) : [value];
  if (Array.isArray(value)) return value.flatMap((v) => idsIn(v, commaSeparated));
  return [];
}

/**
 * The values at a field's path (`a`, `a.b`, `a[].b`, `[].b`) with the request path of each, for
 * error details (`events.2.job_id`).
 */
export function valuesAt(root: unknown, path: string): { value: unknown; at: string }[] {
  let here: { value: unknown; at: string }[] = [{ value: root, at: '' }];
  for (const seg of path.split('.')) {
    const many = seg.endsWith('[]');
    const key = many ? seg.slice(0, -2) : seg;
    const next: { value: unknown; at: string }[] = [];
    for (const h of here) {
      const v =
        key === ''
          ? h.value
          : h.value && typeof h.value === 'object' && !Array.isArray(h.value)
            ? (h.value as Record<string, unknown>)[key]
            : undefined;
      const at = key === '' ? h.at : h.at ? `${h.at}.${key}` : key;
      if (v === undefined || v === null) continue;
      if (many) {
        if (Array.isArray(v)) v.forEach((x, i) => next.push({ value: x, at: at ? `${at}.${i}` : String(i) }));
      } else next.push({ value: v, at });
    }
    here = next;
  }
  return here;
}

/** Field names that read as ids (`…_id`, `…_ids`, `…Id`, `…ID`, `id`, `ids`): each must be declared. */
export const looksLikeId = (name: string): boolean => /(_id|_ids|Id|ID)$/.test(name) || name === 'id' || name === 'ids';

type JsonSchema = {
  type?: unknown;
  format?: string;
  properties?: Record<string, JsonSchema>;
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  $ref?: string;
};

/**
 * The fields of a request part's schema that carry ids, by path (`a`, `a[].b`, `[].b` for a root
 * array): a uuid-formatted string (or array of them) whatever its name, and any field named like an
 * id. Read from the schema as documented (its JSON Schema), through unions, arrays and nesting: a
 * field no declaration names is found however the schema is built.
 */
export function idFields(schema: z.ZodType | undefined): string[] {
  if (!schema) return [];
  const root = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchema & {
    $defs?: Record<string, JsonSchema>;
  };
  const out = new Set<string>();
  const deref = (s: JsonSchema | undefined): JsonSchema | undefined =>
    s?.$ref ? root.$defs?.[s.$ref.split('/').pop()!] : s;
  const isUuid = (s: JsonSchema | undefined, depth = 0): boolean => {
    const d = deref(s);
    const inner = (x: JsonSchema) => depth < 4 && isUuid(x, depth + 1);
    return (
      !!d &&
      (d.format === 'uuid' ||
        !!d.anyOf?.some(inner) ||
        !!d.oneOf?.some(inner) ||
        (d.type === 'array' && !!d.items && inner(d.items)))
    );
  };
  const seen = new Set<JsonSchema>();
  const walk = (s: JsonSchema | undefined, path: string) => {
    const d = deref(s);
    if (!d || seen.has(d)) return;
    seen.add(d);
    for (const x of [...(d.anyOf ?? []), ...(d.oneOf ?? []), ...(d.allOf ?? [])]) walk(x, path);
    if (d.items && !isUuid(d.items)) walk(d.items, `${path}[]`);
    for (const [name, field] of Object.entries(d.properties ?? {})) {
      const at = path ? `${path}.${name}` : name;
      if (isUuid(field) || looksLikeId(name)) out.add(at);
      walk(field, at);
    }
    seen.delete(d);
  };
  walk(root, '');
  return [...out];
}

/** The parsed parts of a request so far: a `within` rule finds its parent's value in any of them. */
export type RequestParts = Partial<Record<'path' | 'query' | 'body', unknown>>;

/**
 * Checks every declared id one part of a request (or a tool's input) carries, as validated: kinds
 * first, then children (whose parents passed), then batches. Returns the ids of `each` batches the
 * caller may not see (`refused`), for the handler to answer as not found.
 */
export async function authorizeRequest(
  em: EntityManager,
  actor: Actor,
  decl: IdDeclaration,
  part: 'path' | 'query' | 'body',
  values: unknown,
  parts: RequestParts = { [part]: values },
): Promise<string[]> {
  const rules = decl[part];
  if (!rules || !values || typeof values !== 'object') return [];
  const refused: string[] = [];
  const entries = Object.entries(rules);
  const order = (rule: IdRule) =>
    typeof rule === 'object' && 'each' in rule ? 2 : typeof rule === 'object' && 'within' in rule ? 1 : 0;
  for (const [name, rule] of entries.sort((a, b) => order(a[1]) - order(b[1]))) {
    const found = valuesAt(values, name);
    const ids = found.flatMap((f) => idsIn(f.value, part === 'query'));
    if (!ids.length) continue;
    const pathOf = (id: string) => {
      for (const f of found) {
        if (typeof f.value === 'string' && idsIn(f.value, part === 'query').some((x) => x.toLowerCase() === id))
          return f.at;
        if (Array.isArray(f.value)) {
          const i = f.value.findIndex((v) => typeof v === 'string' && v.toLowerCase() === id);
          if (i >= 0) return `${f.at}.${i}`;
        }
      }
      return name;
    };
    if (typeof rule === 'object' && 'each' in rule) {
      if ('within' in rule) {
        const parent = parentValue(decl, parts, rule.within);
        refused.push(...(parent === undefined ? uuidsOf(ids) : await hiddenChildren(em, rule.each, parent, ids)));
      } else refused.push(...(await hiddenIds(em, actor, rule.each, ids)));
    } else if (typeof rule === 'object' && 'within' in rule) {
      const parent = parentValue(decl, parts, rule.within);
      // No parent named: the child cannot be inside it; the domain's own validation answers.
      if (parent !== undefined) await authorizeChildren(em, rule, parent, ids, pathOf);
    } else await authorizeIds(em, actor, rule, ids, pathOf);
  }
  return refused;
}

/** The value of the declared parent id `name`, from whichever part declares it. */
function parentValue(decl: IdDeclaration, parts: RequestParts, name: string): string | undefined {
  for (const p of ['path', 'query', 'body'] as const) {
    if (!decl[p]?.[name]) continue;
    const v = valuesAt(parts[p], name)[0]?.value;
    if (typeof v === 'string') return v;
  }
  return undefined;
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
