// The authorization policy, proven from the registries (domain/access.ts): the cases below are derived
// from every operation's and every tool's `ids` declaration, not from a hand list, so a new operation
// or tool is covered without writing a test. With a row of every resource kind in product P1 (and in
// P2), for every declared id:
// - a member given only P2 is refused (403 `not_assigned` for a product kind, 404 for another user's
//   own record) and nothing in the workspace changes;
// - a user of another workspace gets 404 (or the operation's documented code for that id);
// - a member given P1 and P2 is not refused.
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { allOperations } from '../../api/operations.js';
import type { Operation } from '../../api/operation.js';
import {
  authorizeRequest,
  OWN_KINDS,
  PRODUCT_KINDS,
  ruleKind,
  type IdRule,
  type IdDeclaration,
  type Kind,
} from '../../domain/access.js';
import {
  NOTIFICATION_KINDS,
  notify,
  notifyReplies,
  type NotificationKind,
} from '../../domain/notifications/notifications.js';
import { readFileSync } from 'node:fs';
import { AppError } from '../../domain/errors.js';
import { resolveActor } from '../../domain/workspaces.js';
import { allTools } from '../../domain/tools/index.js';
import { defineTool, runTool, type Tool } from '../../domain/tools/registry.js';
import { buildRouter, undeclaredIds } from '../../api/router.js';
import { api, call, closeApi, type TestUser } from '../helpers/api.js';
import { createOwner, em } from '../helpers/billing.js';
import { createOwnerWithProducts } from '../helpers/scope.js';
import { seedEveryKind } from '../helpers/every-kind.js';
import { addMemberViaInvite } from '../helpers/team.js';
import { waitFor } from '../../scripts/children.js';
test.after.always(closeApi);

type Part = 'path' | 'query' | 'body';
interface Target {
  part: Part;
  name: string;
  rule: IdRule;
  kind: Kind;
}

const isProductKind = (k: Kind) => (PRODUCT_KINDS as string[]).includes(k);
const isOwnKind = (k: Kind) => OWN_KINDS.includes(k);
const missingOf = (rule: IdRule): [number, string] =>
  typeof rule === 'object' && 'missing' in rule && rule.missing ? rule.missing : [404, 'not_found'];
const shapeOf = (s: unknown): Record<string, z.ZodType> =>
  s instanceof z.ZodObject ? (s.shape as Record<string, z.ZodType>) : {};

/** Every declared id that names a resource kind (not a child, value or own record outside the workspace). */
function targetsOf(ids: Partial<Record<Part, Record<string, IdRule>>> | undefined): Target[] {
  const out: Target[] = [];
  for (const part of ['path', 'query', 'body'] as Part[])
    for (const [name, rule] of Object.entries(ids?.[part] ?? {})) {
      const kind = ruleKind(rule);
      if (kind) out.push({ part, name, rule, kind });
    }
  return out;
}

const STRINGS = () => [
  randomUUID(),
  'a@example.test',
  'https://example.test/x',
  'Sample text',
  '2026-01-01',
  '2026-01-01T00:00:00.000Z',
  'Europe/Paris',
  '09:00',
  'x',
];

/** A value the field's schema accepts: the first candidate that parses (enum: its first option). */
function valueFor(schema: z.ZodType | undefined, candidates: unknown[]): unknown {
  if (schema instanceof z.ZodEnum) return schema.options[0];
  for (const c of candidates) if (!schema || schema.safeParse(c).success) return c;
  return candidates[0];
}

/** A small valid value of a schema, when one can be made: required fields only, one element per array. */
function sample(schema: z.ZodType): unknown {
  const def = (schema as unknown as { _zod: { def: Record<string, any> } })._zod.def;
  switch (def.type) {
    case 'optional':
    case 'default':
      return undefined;
    case 'nullable':
      return sample(def.innerType);
    case 'pipe':
      return sample(def.in);
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(def.shape as Record<string, z.ZodType>)) {
        const x = sample(v);
        if (x !== undefined) out[k] = x;
      }
      return out;
    }
    case 'array':
      return [sample(def.element)];
    case 'union':
      for (const o of def.options as z.ZodType[]) {
        const x = sample(o);
        if (o.safeParse(x).success) return x;
      }
      return undefined;
    case 'enum':
      return Object.values(def.entries)[0];
    case 'literal':
      return def.values[0];
    case 'number':
    case 'int':
      return valueFor(schema, [1, 10, 0]);
    case 'boolean':
      return false;
    case 'record':
      return {};
    case 'string':
      return valueFor(schema, STRINGS());
    default:
      return 'x';
  }
}

/**
 * A valid object for `schema` with `name` set to `id` (or `[id]`), or null when none can be made.
 * Other declared ids it needs are P2's (`others`); one that would have to be the caller's own record
 * cannot be made here (null).
 */
function validWith(
  schema: z.ZodType | undefined,
  name: string,
  id: string,
  others: Record<string, IdRule> = {},
  p2?: Record<Kind, string>,
  asQuery = false,
): Record<string, unknown> | null {
  const base = (schema ? sample(schema) : {}) as Record<string, unknown>;
  for (const [other, rule] of Object.entries(others)) {
    const kind = ruleKind(rule);
    if (other === name || !kind || !(other in base)) continue;
    if (isOwnKind(kind) || !p2) return null;
    base[other] = Array.isArray(base[other]) ? [p2[kind]] : p2[kind];
  }
  for (const v of [id, [id]]) {
    const candidate: Record<string, unknown> = { ...base, [name]: v };
    const sent = asQuery
      ? Object.fromEntries(Object.entries(candidate).map(([k, x]) => [k, Array.isArray(x) ? x.join(',') : String(x)]))
      : candidate;
    if (!schema || schema.safeParse(sent).success) return sent;
  }
  return null;
}

interface Fixture {
  owner: TestUser;
  limited: TestUser;
  both: TestUser;
  stranger: TestUser;
  p1: Record<Kind, string>;
  p2: Record<Kind, string>;
  workspaceId: string;
}

/**
 * The request for one target: it holds P1's id; every other path id is P2's (the limited member's
 * own product) and the rest of the query and body is valid. Null when no valid query or body can be
 * made for it (then the case is checked at the policy itself, `authorizeRequest`).
 */
function requestFor(
  op: Operation,
  target: Target,
  f: Fixture,
): { path: string; body?: unknown; sent?: Record<string, unknown> } | null {
  const params = shapeOf(op.params);
  // A child in the path (an import within its product) cannot be made for another parent: the policy decides.
  if (
    target.part !== 'path' &&
    Object.values(op.ids?.path ?? {}).some((rule) => typeof rule === 'object' && 'within' in rule)
  )
    return null;
  let path = op.path;
  for (const [, name] of op.path.matchAll(/\{([^}]+)\}/g)) {
    const rule = op.ids?.path?.[name] as IdRule;
    const kind = ruleKind(rule);
    const v =
      target.part === 'path' && target.name === name
        ? f.p1[target.kind]
        : kind
          ? f.p2[kind]
          : valueFor(params[name], [name === 'chatId' ? f.p2.conversation : randomUUID(), 'x1']);
    path = path.replace(`{${name}}`, encodeURIComponent(String(v)));
  }
  if (target.part === 'query') {
    const query = validWith(op.query, target.name, f.p1[target.kind], op.ids?.query, f.p2, true);
    if (!query) return null;
    path += `?${new URLSearchParams(query as Record<string, string>).toString()}`;
    return { path, sent: query, ...(op.body ? { body: {} } : {}) };
  }
  if (target.part === 'body') {
    const body = validWith(op.body, target.name, f.p1[target.kind], op.ids?.body, f.p2);
    return body ? { path, body, sent: body } : null;
  }
  return { path, ...(op.body ? { body: {} } : {}) };
}

/**
 * A digest of every row of the workspace, table by table: equal digests, nothing changed. Tables the
 * background machinery writes on its own schedule (deliveries of the fixture's events, rollups) are
 * left out: a refused request could only reach them through a row the digest covers.
 */
async function digest(workspaceId: string): Promise<string> {
  const e = await em();
  const tables = await e.execute<{ table_name: string }[]>(
    `select table_name from information_schema.columns where table_schema = 'public' and column_name = 'workspace_id'
       and table_name not in ('webhook_deliveries', 'webhook_events') and table_name not like 'analytics_%' order by table_name`,
  );
  const parts: string[] = [];
  for (const { table_name } of tables) {
    const [r] = await e.execute<{ d: string | null }[]>(
      `select md5(string_agg(t::text, '|' order by t::text)) as d from "${table_name}" t where t.workspace_id = ?`,
      [workspaceId],
    );
    parts.push(`${table_name}:${r.d ?? '-'}`);
  }
  return parts.join('\n');
}

let fixture: Promise<Fixture> | undefined;
function setup(): Promise<Fixture> {
  return (fixture ??= (async () => {
    const f = await createOwnerWithProducts();
    const swapped = { ...f, p1: f.p2, p2: f.p1 };
    const [p1, p2, stranger, both] = await Promise.all([
      seedEveryKind(f),
      seedEveryKind(swapped),
      createOwner(),
      addMemberViaInvite(f.owner, { role: 'member', all_apps: false, app_ids: [f.p1.appId, f.p2.appId] }),
    ]);
    // The fixture's exports run as jobs: the digest is taken once they are done.
    await waitFor('the fixture’s exports to finish', async () => {
      const [r] = await (
        await em()
      ).execute<{ n: string }[]>(
        `select count(*) as n from contact_exports where workspace_id = ? and status in ('queued', 'running')`,
        [f.workspaceId],
      );
      return Number(r.n) === 0;
    });
    return { owner: f.owner, limited: f.member, both: both.user, stranger, p1, p2, workspaceId: f.workspaceId };
  })());
}

const idOps = () => allOperations().filter((op) => op.auth === 'user' && targetsOf(op.ids).length > 0);

/** The outcome of a request: `<status> <code>`. */
async function httpOutcome(
  op: Operation,
  req: { path: string; body?: unknown },
  user: TestUser,
  actingAs?: string,
): Promise<string> {
  const r = await call(op.method, req.path, {
    token: user.accessToken,
    headers: actingAs ? { 'x-acting-as': actingAs } : {},
    ...(req.body === undefined ? {} : { body: req.body }),
  });
  return `${r.status} ${r.body?.error?.code ?? ''}`.trim();
}

/** A part's value holding `id` at a declared field's path (`a`, `a[].b`, `[].b`). */
function nest(path: string, id: string): unknown {
  const [seg, ...rest] = path.split('.');
  const inner = rest.length ? nest(rest.join('.'), id) : id;
  const many = seg.endsWith('[]');
  const key = many ? seg.slice(0, -2) : seg;
  const value = many ? [inner] : inner;
  return key ? { [key]: value } : value;
}

/** The outcome of the policy itself for one id (when no valid request can be made for the case). */
async function policyOutcome(
  op: Operation,
  target: Target,
  id: string,
  user: TestUser,
  actingAs?: string,
): Promise<string> {
  const e = await em();
  const actor = await resolveActor(e as never, { userId: user.id, kind: 'session' }, actingAs);
  try {
    await authorizeRequest(e as never, actor, op.ids!, target.part, nest(target.name, id));
    return 'passes';
  } catch (err) {
    return err instanceof AppError ? `${err.status} ${err.code}` : String(err);
  }
}

test.serial(
  'every id-taking operation: a member without the product is refused and nothing changes; another workspace gets 404',
  async (t) => {
    const f = await setup();
    const before = await digest(f.workspaceId);
    const problems: string[] = [];
    let http = 0;
    let policy = 0;
    let ops = 0;
    for (const op of idOps()) {
      ops++;
      for (const target of targetsOf(op.ids)) {
        const req = requestFor(op, target, f);
        const where = `${op.method} ${op.path} ${target.part}.${target.name} (${target.kind})`;
        const outcome = (user: TestUser, actingAs?: string) =>
          req ? httpOutcome(op, req, user, actingAs) : policyOutcome(op, target, f.p1[target.kind], user, actingAs);
        // The member given only P2, in the owner's workspace.
        if (isProductKind(target.kind) || isOwnKind(target.kind)) {
          req ? http++ : policy++;
          const want = (isProductKind(target.kind) ? [403, 'not_assigned'] : missingOf(target.rule)).join(' ');
          const got = await outcome(f.limited, f.owner.id);
          if (got !== want) problems.push(`limited member: ${where}: ${got} (expected ${want})`);
        }
        // A user of another workspace: the first declared id the request names is not found.
        req ? http++ : policy++;
        const first = req
          ? (targetsOf(op.ids).find(
              (x) => x.part === 'path' || (x.part === target.part && req.sent?.[x.name] !== undefined),
            ) ?? target)
          : target;
        const want = missingOf(first.rule).join(' ');
        const got = await outcome(f.stranger);
        if (got !== want) problems.push(`other workspace: ${where}: ${got} (expected ${want})`);
      }
    }
    t.log(
      `${ops} operations: ${http} refusal cases through HTTP, ${policy} at the policy (no valid body could be generated)`,
    );
    t.deepEqual(problems, []);
    const after = await digest(f.workspaceId);
    t.is(after, before, 'refused requests changed nothing');
  },
);

test.serial('every tool with ids: the same policy through runTool (Operator and MCP)', async (t) => {
  const f = await setup();
  const { services } = await api();
  const ctxFor = async (user: TestUser, actingAs?: string) => {
    const e = services.orm.em.fork();
    return {
      em: e as never,
      actor: await resolveActor(e as never, { userId: user.id, kind: 'session' }, actingAs),
      jobs: services.jobs,
      config: services.config,
      providers: services,
    };
  };
  // Through runTool with a valid input; when none can be generated, at the policy itself.
  const outcome = async (
    tool: Tool,
    ctx: Awaited<ReturnType<typeof ctxFor>>,
    input: Record<string, unknown> | null,
    fallback: Record<string, unknown>,
  ) => {
    try {
      if (input) await runTool(tool, ctx, input);
      else await authorizeRequest(ctx.em, ctx.actor, { body: tool.ids }, 'body', fallback);
      return 'ran';
    } catch (err) {
      return err instanceof AppError ? `${err.status} ${err.code}` : 'invalid';
    }
  };
  const problems: string[] = [];
  let cases = 0;
  let tools = 0;
  for (const tool of allTools()) {
    const targets = Object.entries(tool.ids ?? {}).flatMap(([name, rule]) =>
      ruleKind(rule) ? [{ name, rule, kind: ruleKind(rule)! }] : [],
    );
    if (!targets.length) continue;
    tools++;
    for (const target of targets) {
      const input = validWith(tool.input, target.name, f.p1[target.kind], tool.ids, f.p2);
      const fallback = { [target.name]: f.p1[target.kind] };
      const where = `${tool.name}.${target.name} (${target.kind})`;
      if (isProductKind(target.kind) || isOwnKind(target.kind)) {
        cases++;
        const got = await outcome(tool, await ctxFor(f.limited, f.owner.id), input, fallback);
        const want = isProductKind(target.kind) ? '403 not_assigned' : missingOf(target.rule).join(' ');
        if (got !== want) problems.push(`limited member: ${where}: ${got} (expected ${want})`);
      }
      cases++;
      const got = await outcome(tool, await ctxFor(f.stranger), input, fallback);
      const want = missingOf(target.rule).join(' ');
      if (got !== want) problems.push(`other workspace: ${where}: ${got} (expected ${want})`);
      if (tool.risk === 'read' && isProductKind(target.kind)) {
        cases++;
        const allowed = await outcome(tool, await ctxFor(f.both, f.owner.id), input, fallback);
        if (allowed === '403 not_assigned') problems.push(`member with the product: ${where}: refused`);
      }
    }
  }
  t.log(`${tools} tools, ${cases} cases`);
  t.true(tools > 0);
  t.deepEqual(problems, []);
});

// Generated over every notification kind (domain/notifications/notifications.ts NOTIFICATION_KINDS):
// about P1's resource of the kind it names, a member given only P2 hears nothing (unless the resource
// is the workspace's), a member given P1 and the owner hear it; docs/notifications.md's table says the same.
test.serial(
  'every notification kind reaches only the members who may open what it names; the docs table matches',
  async (t) => {
    const f = await setup();
    const e = await em();
    const heard = async (userId: string, key: string) =>
      Number(
        (
          await e.execute<{ n: string }[]>(
            `select count(*) as n from notifications where user_id = ? and workspace_id = ? and dedupe_key = ?`,
            [userId, f.workspaceId, key],
          )
        )[0].n,
      );
    const docs = readFileSync(new URL('../../docs/notifications.md', import.meta.url), 'utf8').split('\n');
    const problems: string[] = [];
    for (const [kind, decl] of Object.entries(NOTIFICATION_KINDS) as [
      NotificationKind,
      (typeof NOTIFICATION_KINDS)[NotificationKind],
    ][]) {
      const key = `policy:${kind}:${randomUUID()}`;
      await notify(e as never, f.workspaceId, {
        kind,
        title: kind,
        body: kind,
        data: { [decl.field]: f.p1[decl.names] },
        key,
      });
      const workspaceLevel = !(PRODUCT_KINDS as string[]).includes(decl.names);
      const got = {
        limited: await heard(f.limited.id, key),
        both: await heard(f.both.id, key),
        owner: await heard(f.owner.id, key),
      };
      const want = { limited: workspaceLevel ? 1 : 0, both: 1, owner: 1 };
      if (JSON.stringify(got) !== JSON.stringify(want))
        problems.push(`${kind} (names ${decl.names}): ${JSON.stringify(got)} (expected ${JSON.stringify(want)})`);
      const row = docs.find((line) => line.startsWith(`| \`${kind}\``) || line.includes(`, \`${kind}\` |`));
      if (!row?.includes(`| \`${decl.names}\` (\`${decl.field}\`) |`))
        problems.push(`docs/notifications.md: no row for ${kind} naming \`${decl.names}\` (\`${decl.field}\`)`);
    }
    // The reply path itself (a batch of inbound messages): P1's conversation is not the P2 member's.
    const message = randomUUID();
    await notifyReplies(e as never, f.workspaceId, [
      {
        id: message,
        conversation_id: f.p1.conversation,
        lead_id: f.p1.lead,
        sender: 'x@example.test',
        body: 'Secret pricing question',
        sent_at: new Date().toISOString(),
      },
    ]);
    const replyKey = `reply:${message}`;
    t.is(await heard(f.limited.id, replyKey), 0, 'a member without the product is not told of the reply');
    t.is(await heard(f.both.id, replyKey), 1);
    t.deepEqual(problems, []);
  },
);

/** Every `within` and `each` rule of the registries, with the request part it is in. */
function childRules(decls: { where: string; ids: IdDeclaration | undefined }[]) {
  const out: {
    where: string;
    ids: IdDeclaration;
    part: Part;
    name: string;
    rule: Extract<IdRule, { within: string }>;
  }[] = [];
  for (const { where, ids } of decls)
    for (const part of ['path', 'query', 'body'] as Part[])
      for (const [name, rule] of Object.entries(ids?.[part] ?? {}))
        if (typeof rule === 'object' && 'within' in rule) out.push({ where, ids: ids!, part, name, rule });
  return out;
}

/** The part and value of a parent id: P1's resource of its declared kind. */
function parentOf(ids: IdDeclaration, name: string, f: Fixture): { part: Part; value: string } {
  for (const part of ['path', 'query', 'body'] as Part[]) {
    const rule = ids[part]?.[name];
    if (rule && ruleKind(rule)) return { part, value: f.p1[ruleKind(rule)!] };
  }
  throw new Error(`parent ${name} has no kind`);
}

// Generated over every `within` rule (children looked up inside a parent) and every `each` batch inside
// one: an id that is not a child of the named parent (an unknown one, another parent's) is refused by
// the policy, with the declared code, never passed to the domain to answer an empty 200.
test.serial('every child id (within / each within) not inside its parent is refused by the policy', async (t) => {
  const f = await setup();
  const e = await em();
  const actor = await resolveActor(e as never, { userId: f.owner.id, kind: 'session' }, undefined);
  const decls = [
    ...allOperations().map((op) => ({ where: `${op.method} ${op.path}`, ids: op.ids })),
    ...allTools().map((tool) => ({ where: `tool ${tool.name}`, ids: tool.ids ? { body: tool.ids } : undefined })),
  ];
  const problems: string[] = [];
  let cases = 0;
  for (const c of childRules(decls)) {
    const parent = parentOf(c.ids, c.rule.within, f);
    const stranger = randomUUID();
    const single = { [c.name]: stranger };
    const parts = {
      [parent.part]: { [c.rule.within]: parent.value },
      [c.part]: { ...(parent.part === c.part ? { [c.rule.within]: parent.value } : {}), ...single },
    };
    cases++;
    try {
      const refused = await authorizeRequest(e as never, actor, c.ids, c.part, parts[c.part], parts);
      if ('each' in c.rule) {
        if (!refused.includes(stranger))
          problems.push(`${c.where} ${c.part}.${c.name}: an id outside the parent was not refused`);
      } else problems.push(`${c.where} ${c.part}.${c.name}: an id outside the parent passed`);
    } catch (err) {
      const want = ('missing' in c.rule && c.rule.missing ? c.rule.missing : [404, 'not_found']).join(' ');
      const got = err instanceof AppError ? `${err.status} ${err.code}` : String(err);
      if (got !== want) problems.push(`${c.where} ${c.part}.${c.name}: ${got} (expected ${want})`);
    }
  }
  t.log(`${cases} child rules`);
  t.true(cases > 30);
  t.deepEqual(problems, []);
});

// The two filters the issue names: another campaign's step is 404, not an empty page.
test.serial('a step_id filter naming another campaign’s step is 404 (scheduled actions, message review)', async (t) => {
  const f = await setup();
  const [other] = await (
    await em()
  ).execute<{ id: string }[]>(`select id from campaign_steps where campaign_id = ? limit 1`, [f.p2.campaign]);
  const [own] = await (
    await em()
  ).execute<{ id: string }[]>(`select id from campaign_steps where campaign_id = ? limit 1`, [f.p1.campaign]);
  for (const route of ['scheduled-actions', 'message-review']) {
    const bad = await call('GET', `/api/campaigns/${f.p1.campaign}/${route}?step_id=${other.id}`, {
      token: f.owner.accessToken,
    });
    t.is(bad.status, 404, `${route}: ${bad.text}`);
    t.is(bad.body.error.code, 'not_found');
    const ok = await call('GET', `/api/campaigns/${f.p1.campaign}/${route}?step_id=${own.id}`, {
      token: f.owner.accessToken,
    });
    t.is(ok.status, 200, `${route}: ${ok.text}`);
  }
});

// Batches answered item by item: another product's item is answered exactly as an unknown id.
test.serial(
  'batch items of another product are answered not_found, revealing nothing (enroll, preview, discovered-lead batches)',
  async (t) => {
    const f = await setup();
    const e = await em();
    const as = (u: TestUser, body?: unknown) => ({
      token: u.accessToken,
      headers: { 'x-acting-as': f.owner.id },
      ...(body === undefined ? {} : { body }),
    });
    // P2's campaign, paused so that nothing is sent whatever is enrolled.
    await e.execute(`update campaigns set status = 'paused' where id = ?`, [f.p2.campaign]);
    const unknown = randomUUID();
    const enroll = await call(
      'POST',
      `/api/campaigns/${f.p2.campaign}/leads`,
      as(f.limited, { lead_ids: [f.p1.lead, unknown] }),
    );
    t.is(enroll.status, 200, enroll.text);
    t.deepEqual(
      enroll.body.items.map((i: { lead_id: string; status: string; reason: string }) => [
        i.lead_id,
        i.status,
        i.reason,
      ]),
      [
        [f.p1.lead, 'skipped', 'not_found'],
        [unknown, 'skipped', 'not_found'],
      ],
    );
    t.is(
      Number(
        (
          await e.execute<{ n: string }[]>(
            `select count(*) as n from enrollments where campaign_id = ? and lead_id = ?`,
            [f.p2.campaign, f.p1.lead],
          )
        )[0].n,
      ),
      0,
    );
    const preview = await call(
      'GET',
      `/api/campaigns/${f.p2.campaign}/enrollment-preview?lead_ids=${f.p1.lead},${unknown}`,
      as(f.limited),
    );
    t.is(preview.status, 200, preview.text);
    t.like(preview.body, { total: 2, would_enroll: 0, skipped_by_reason: { not_found: 2 } });
    // The member given P1 too sees the lead (whatever its answer, not not_found).
    const seen = await call(
      'GET',
      `/api/campaigns/${f.p2.campaign}/enrollment-preview?lead_ids=${f.p1.lead}`,
      as(f.both),
    );
    t.is(seen.body.skipped_by_reason.not_found, undefined, seen.text);
    for (const route of ['batch-approve', 'batch-reject']) {
      const r = await call(
        'POST',
        `/api/discovered-leads/${route}`,
        as(f.limited, { ids: [f.p1.discovered_lead, unknown], ...(route === 'batch-reject' ? { reason: 'x' } : {}) }),
      );
      t.is(r.status, 200, r.text);
      t.deepEqual(r.body.results, [
        { id: f.p1.discovered_lead, result: 'not_found' },
        { id: unknown, result: 'not_found' },
      ]);
    }
    t.is(
      (
        await e.execute<{ status: string }[]>(`select status from discovered_leads where id = ?`, [
          f.p1.discovered_lead,
        ])
      )[0].status,
      'new',
    );
    // A company import's client events: one naming P1's import is not found, and its client id stays free.
    const clientId = `policy-${randomUUID()}`;
    const ev = await call(
      'POST',
      '/api/company-decision-maker-imports/events',
      as(f.limited, {
        events: [{ id: clientId, job_id: f.p1.cdm_import, type: 'company.approved', target_id: randomUUID() }],
      }),
    );
    t.is(ev.status, 200, ev.text);
    t.is(ev.body.results[0].result, 'not_found', ev.text);
    t.is(
      Number(
        (
          await e.execute<{ n: string }[]>(
            `select count(*) as n from cdm_import_events where workspace_id = ? and client_id = ?`,
            [f.workspaceId, clientId],
          )
        )[0].n,
      ),
      0,
    );
  },
);

// Last: the allowed member really runs the operations (deletions included).
test.serial('every id-taking operation: a member given the product is not refused', async (t) => {
  const f = await setup();
  const problems: string[] = [];
  let cases = 0;
  // Reads first and deletions last, so that an earlier deletion does not hide a later refusal.
  const order = { GET: 0, POST: 1, PUT: 1, PATCH: 1, DELETE: 2 } as const;
  for (const op of idOps().sort((a, b) => order[a.method] - order[b.method])) {
    for (const target of targetsOf(op.ids)) {
      if (!isProductKind(target.kind)) continue; // workspace-level kinds: roles decide, in the domain
      cases++;
      const req = requestFor(op, target, f);
      const got = req
        ? await httpOutcome(op, req, f.both, f.owner.id)
        : await policyOutcome(op, target, f.p1[target.kind], f.both, f.owner.id);
      if (got === '403 not_assigned') problems.push(`${op.method} ${op.path} ${target.part}.${target.name}: refused`);
      if (/^5/.test(got)) problems.push(`${op.method} ${op.path} ${target.part}.${target.name}: ${got}`); // allowed means served, not crashed
    }
  }
  t.log(`${cases} allowed cases`);
  t.deepEqual(problems, []);
});

test('the router refuses to register an operation whose ids are not declared; defineTool refuses such a tool', async (t) => {
  const { services } = await api();
  const op = (over: Partial<Operation>) =>
    ({ ...allOperations().find((o) => o.operationId === 'getCampaign')!, ...over }) as Operation;
  t.notThrows(() => buildRouter([op({})], services));
  t.throws(() => buildRouter([op({ ids: undefined })], services), {
    message: /getCampaign: declare what these ids name .*path\.id/,
  });
  t.throws(
    () => buildRouter([op({ ids: { path: { id: 'campaign' } }, query: z.object({ lead_id: z.uuid() }) })], services),
    { message: /query\.lead_id/ },
  );
  t.throws(() => buildRouter([op({ ids: { path: { id: { within: 'campaignId', child: 'step' } } } })], services), {
    message: /within campaignId, undeclared/,
  });
  // Found by the schema, whatever the name or the nesting: a uuid field, `ids`, an id inside a batch's items, a union's branch.
  const post = (body: z.ZodType, ids?: Operation['ids']) =>
    op({ method: 'POST', body, ids: { path: { id: 'campaign' }, ...ids } });
  t.throws(() => buildRouter([post(z.object({ reassign_to: z.uuid() }))], services), { message: /body\.reassign_to/ });
  t.throws(() => buildRouter([post(z.object({ ids: z.array(z.string()) }))], services), { message: /body\.ids/ });
  t.throws(() => buildRouter([post(z.object({ events: z.array(z.object({ target: z.uuid() })) }))], services), {
    message: /body\.events\[\]\.target/,
  });
  t.throws(
    () => buildRouter([post(z.xor([z.object({ signal_id: z.uuid() }), z.object({ name: z.string() })]))], services),
    { message: /body\.signal_id/ },
  );
  t.throws(() => buildRouter([post(z.array(z.object({ app_id: z.uuid() })))], services), {
    message: /body\.\[\]\.app_id/,
  });
  t.notThrows(() =>
    buildRouter(
      [
        post(z.object({ events: z.array(z.object({ target: z.uuid() })) }), {
          body: { 'events[].target': { value: 'test' } },
        }),
      ],
      services,
    ),
  );
  t.throws(
    () =>
      defineTool({
        name: 'x',
        domain: 'x',
        description: 'x',
        input: z.object({ campaign_id: z.uuid() }),
        risk: 'read',
        run: async () => null,
      }),
    { message: /tool x: .*campaign_id/ },
  );
  // Every registered operation and tool passed the same check (else the API would not have started).
  t.deepEqual(
    allOperations().flatMap((o) => undeclaredIds(o).map((m) => `${o.operationId}: ${m}`)),
    [],
  );
});
