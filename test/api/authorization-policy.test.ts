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
import { authorizeRequest, OWN_KINDS, PRODUCT_KINDS, ruleKind, type IdRule, type Kind } from '../../domain/access.js';
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
const missingOf = (rule: IdRule): [number, string] => (typeof rule === 'object' && 'missing' in rule && rule.missing ? rule.missing : [404, 'not_found']);
const shapeOf = (s: unknown): Record<string, z.ZodType> => (s instanceof z.ZodObject ? (s.shape as Record<string, z.ZodType>) : {});

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

const STRINGS = () => [randomUUID(), 'a@example.test', 'https://example.test/x', 'Sample text', '2026-01-01', '2026-01-01T00:00:00.000Z', 'Europe/Paris', '09:00', 'x'];

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
function validWith(schema: z.ZodType | undefined, name: string, id: string, others: Record<string, IdRule> = {}, p2?: Record<Kind, string>, asQuery = false): Record<string, unknown> | null {
  const base = (schema ? sample(schema) : {}) as Record<string, unknown>;
  for (const [other, rule] of Object.entries(others)) {
    const kind = ruleKind(rule);
    if (other === name || !kind || !(other in base)) continue;
    if (isOwnKind(kind) || !p2) return null;
    base[other] = Array.isArray(base[other]) ? [p2[kind]] : p2[kind];
  }
  for (const v of [id, [id]]) {
    const candidate: Record<string, unknown> = { ...base, [name]: v };
    const sent = asQuery ? Object.fromEntries(Object.entries(candidate).map(([k, x]) => [k, Array.isArray(x) ? x.join(',') : String(x)])) : candidate;
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
function requestFor(op: Operation, target: Target, f: Fixture): { path: string; body?: unknown; sent?: Record<string, unknown> } | null {
  const params = shapeOf(op.params);
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
    const [r] = await e.execute<{ d: string | null }[]>(`select md5(string_agg(t::text, '|' order by t::text)) as d from "${table_name}" t where t.workspace_id = ?`, [workspaceId]);
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
      const [r] = await (await em()).execute<{ n: string }[]>(`select count(*) as n from contact_exports where workspace_id = ? and status in ('queued', 'running')`, [f.workspaceId]);
      return Number(r.n) === 0;
    });
    return { owner: f.owner, limited: f.member, both: both.user, stranger, p1, p2, workspaceId: f.workspaceId };
  })());
}

const idOps = () => allOperations().filter((op) => op.auth === 'user' && targetsOf(op.ids).length > 0);

/** The outcome of a request: `<status> <code>`. */
async function httpOutcome(op: Operation, req: { path: string; body?: unknown }, user: TestUser, actingAs?: string): Promise<string> {
  const r = await call(op.method, req.path, { token: user.accessToken, headers: actingAs ? { 'x-acting-as': actingAs } : {}, ...(req.body === undefined ? {} : { body: req.body }) });
  return `${r.status} ${r.body?.error?.code ?? ''}`.trim();
}

/** The outcome of the policy itself for one id (when no valid request can be made for the case). */
async function policyOutcome(op: Operation, target: Target, id: string, user: TestUser, actingAs?: string): Promise<string> {
  const e = await em();
  const actor = await resolveActor(e as never, { userId: user.id, kind: 'session' }, actingAs);
  try {
    await authorizeRequest(e as never, actor, op.ids!, target.part, { [target.name]: id });
    return 'passes';
  } catch (err) {
    return err instanceof AppError ? `${err.status} ${err.code}` : String(err);
  }
}

test.serial('every id-taking operation: a member without the product is refused and nothing changes; another workspace gets 404', async (t) => {
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
      const outcome = (user: TestUser, actingAs?: string) => (req ? httpOutcome(op, req, user, actingAs) : policyOutcome(op, target, f.p1[target.kind], user, actingAs));
      // The member given only P2, in the owner's workspace.
      if (isProductKind(target.kind) || isOwnKind(target.kind)) {
        req ? http++ : policy++;
        const want = (isProductKind(target.kind) ? [403, 'not_assigned'] : missingOf(target.rule)).join(' ');
        const got = await outcome(f.limited, f.owner.id);
        if (got !== want) problems.push(`limited member: ${where}: ${got} (expected ${want})`);
      }
      // A user of another workspace: the first declared id the request names is not found.
      req ? http++ : policy++;
      const first = req ? (targetsOf(op.ids).find((x) => x.part === 'path' || (x.part === target.part && req.sent?.[x.name] !== undefined)) ?? target) : target;
      const want = missingOf(first.rule).join(' ');
      const got = await outcome(f.stranger);
      if (got !== want) problems.push(`other workspace: ${where}: ${got} (expected ${want})`);
    }
  }
  t.log(`${ops} operations: ${http} refusal cases through HTTP, ${policy} at the policy (no valid body could be generated)`);
  t.deepEqual(problems, []);
  const after = await digest(f.workspaceId);
  t.is(after, before, 'refused requests changed nothing');
});

test.serial('every tool with ids: the same policy through runTool (Operator and MCP)', async (t) => {
  const f = await setup();
  const { services } = await api();
  const ctxFor = async (user: TestUser, actingAs?: string) => {
    const e = services.orm.em.fork();
    return { em: e as never, actor: await resolveActor(e as never, { userId: user.id, kind: 'session' }, actingAs), jobs: services.jobs, config: services.config, providers: services };
  };
  // Through runTool with a valid input; when none can be generated, at the policy itself.
  const outcome = async (tool: Tool, ctx: Awaited<ReturnType<typeof ctxFor>>, input: Record<string, unknown> | null, fallback: Record<string, unknown>) => {
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
    const targets = Object.entries(tool.ids ?? {}).flatMap(([name, rule]) => (ruleKind(rule) ? [{ name, rule, kind: ruleKind(rule)! }] : []));
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
      const got = req ? await httpOutcome(op, req, f.both, f.owner.id) : await policyOutcome(op, target, f.p1[target.kind], f.both, f.owner.id);
      if (got === '403 not_assigned') problems.push(`${op.method} ${op.path} ${target.part}.${target.name}: refused`);
      if (/^5/.test(got)) problems.push(`${op.method} ${op.path} ${target.part}.${target.name}: ${got}`); // allowed means served, not crashed
    }
  }
  t.log(`${cases} allowed cases`);
  t.deepEqual(problems, []);
});

test('the router refuses to register an operation whose ids are not declared; defineTool refuses such a tool', async (t) => {
  const { services } = await api();
  const op = (over: Partial<Operation>) => ({ ...allOperations().find((o) => o.operationId === 'getCampaignsById')!, ...over }) as Operation;
  t.notThrows(() => buildRouter([op({})], services));
  t.throws(() => buildRouter([op({ ids: undefined })], services), { message: /getCampaignsById: declare what these ids name .*path\.id/ });
  t.throws(() => buildRouter([op({ ids: { path: { id: 'campaign' } }, query: z.object({ lead_id: z.uuid() }) })], services), { message: /query\.lead_id/ });
  t.throws(() => buildRouter([op({ ids: { path: { id: { within: 'campaignId' } } } })], services), { message: /within campaignId, undeclared/ });
  t.throws(() => defineTool({ name: 'x', domain: 'x', description: 'x', input: z.object({ campaign_id: z.uuid() }), risk: 'read', run: async () => null }), { message: /tool x: .*campaign_id/ });
  // Every registered operation and tool passed the same check (else the API would not have started).
  t.deepEqual(allOperations().flatMap((o) => undeclaredIds(o).map((m) => `${o.operationId}: ${m}`)), []);
});
