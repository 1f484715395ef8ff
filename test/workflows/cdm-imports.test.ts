// Company decision-maker imports on the real dev server with the local corpus: the search workflow
// batch by batch (found, duplicate, company_not_found), batch-preview's cursor, approvals per person
// and per company, the idempotent events batch, confirm adding exactly the approved people once with
// one credit per lead created (twice: nothing doubled), 402 before anything is added, retry of the
// failed companies only (a worker of its own over Unipile's search failing some companies), every
// documented code, cross-workspace 404s, the Operator tools and replay tests.
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { CdmImportCompany } from '../../db/entities/CdmImportCompany.js';
import { CreditLedgerEntry } from '../../db/entities/CreditLedgerEntry.js';
import { Lead } from '../../db/entities/Lead.js';
import { DEMO_ROWS, DEMO_USER_ID } from '../../domain/demo/seed.js';
import { createCdmImport } from '../../domain/cdm-imports/cdm-imports.js';
import { requireCdmImport } from '../../domain/cdm-imports/job.js';
import { creditBalance, debitCredits } from '../../domain/billing/credits.js';
import { addContactToList } from '../../domain/lists/lists.js';
import { findTool } from '../../domain/tools/index.js';
import { runTool } from '../../domain/tools/registry.js';
import { resolveActor } from '../../domain/workspaces.js';
import { temporalJobs } from '../../jobs/temporal.js';
import { loadConfig } from '../../lib/config.js';
import { getCorpus } from '../../lib/sources/local-corpus.js';
import { SENIORITY_RANK, type Seniority } from '../../lib/sources/types.js';
import { spawnTsx, stopChild, waitFor } from '../../scripts/children.js';
import { cdmImportWorkflowIds } from '../../lib/workflow-ids.js';
import { api, call, closeApi, createTestApp, createUser, listen, type TestUser } from '../helpers/api.js';
import { createOwner, em, workspaceIdOf } from '../helpers/billing.js';
import { replayFixture, replayLive } from '../helpers/replay.js';
import { registerAccounts } from '../helpers/unipile/accounts.js';
import { generateSearchFixture, registerSearch, type FixtureCompany } from '../helpers/unipile/search.js';
import { startStandIn, unipileError } from '../helpers/unipile/stand-in.js';
import { addMemberViaInvite } from '../helpers/team.js';
test.after.always(closeApi);

const BASE = '/api/company-decision-maker-imports';
const corpusOpts = loadConfig().sources.corpus;
const corpus = getCorpus(corpusOpts);
const ALL: Seniority[] = ['founder', 'cxo', 'vp', 'director', 'manager', 'senior', 'entry'];
const auth = (u: TestUser, headers: Record<string, string> = {}) => ({ token: u.accessToken, headers });

interface Setup {
  u: TestUser;
  appId: string;
  listId: string;
  workspaceId: string;
}

async function setup(owner?: TestUser): Promise<Setup> {
  const u = owner ?? (await createOwner());
  const app = await createTestApp(u);
  const list = await call('POST', `/api/apps/${app.id}/lists`, { ...auth(u), body: { name: 'Decision-makers' } });
  if (list.status !== 201) throw new Error(list.text);
  return { u, appId: app.id, listId: list.body.id, workspaceId: await workspaceIdOf(u.id) };
}

// Corpus companies handed out in turn (each with at least `min` current employees), so tests use different ones.
let nextCompany = 0;
function company(min = 3) {
  for (;;) {
    const i = nextCompany++;
    const employees = corpus.index.employees[i].map((p) => corpus.people[p]);
    if (employees.length >= min) return { ...corpus.companies[i], employees };
  }
}

const UNKNOWN = 'Nonexistent Widgets Incorporated';

async function preview(s: Setup, body: Record<string, unknown>) {
  return call('POST', `${BASE}/preview`, {
    ...auth(s.u),
    body: { app_id: s.appId, list_id: s.listId, roles: { seniorities: ALL }, ...body },
  });
}

async function progress(s: Setup, id: string) {
  const r = await call('GET', `${BASE}/${id}/progress`, auth(s.u));
  if (r.status !== 200) throw new Error(r.text);
  return r.body;
}

async function until(s: Setup, id: string, state: string, timeoutMs = 60_000) {
  await waitFor(`import ${id} to be ${state}`, async () => (await progress(s, id)).state === state, timeoutMs);
  return progress(s, id);
}

async function outcomes(s: Setup, id: string) {
  const r = await call('GET', `${BASE}/${id}/company-outcomes?limit=200`, auth(s.u));
  if (r.status !== 200) throw new Error(r.text);
  return r.body.items as any[];
}

async function rows(s: Setup, id: string, query = '') {
  const r = await call('GET', `${BASE}/${id}/rows?limit=200${query}`, auth(s.u));
  if (r.status !== 200) throw new Error(r.text);
  return r.body.items as any[];
}

/** A job searched to ready_for_review over the given companies. */
async function ready(s: Setup, companies: Record<string, unknown>[], extra: Record<string, unknown> = {}) {
  const r = await preview(s, { companies, ...extra });
  if (r.status !== 201) throw new Error(r.text);
  await until(s, r.body.job.id, 'ready_for_review');
  return r.body.job.id as string;
}

const workflowOf = (id: string) =>
  (async () => (await api()).services.temporal.workflow.getHandle(cdmImportWorkflowIds.job(id)))();

test('preview creates the job and shows its first batch; the search goes batch by batch; outcomes, rows, progress and metrics read it', async (t) => {
  const s = await setup();
  const [a, b, c, d] = [company(), company(), company(), company()];
  const r = await preview(s, {
    companies: [
      { domain: a.domain.toUpperCase() },
      { name: b.name },
      { name: UNKNOWN },
      { name: a.name },
      { domain: c.domain, name: 'Whatever' },
      { domain: `www.${a.domain}` },
      { domain: d.domain },
    ],
    roles: { seniorities: ['founder', 'cxo', 'vp', 'director', 'manager', 'senior', 'entry'] },
    max_per_company: 3,
    batch_size: 2,
  });
  t.is(r.status, 201, r.text);
  const job = r.body.job;
  t.like(job, {
    app_id: s.appId,
    list_id: s.listId,
    run: 1,
    max_per_company: 3,
    batch_size: 2,
    company_count: 6,
    duplicates_removed: 1,
    batch_count: 3,
    credits_per_member: 1,
  });
  t.is(job.workflow_id, `cdm-import:${job.id}`);
  t.deepEqual(job.roles, { titles: [], seniorities: ALL });
  // The first batch (a by domain, b by name), searched before the answer; on a machine too loaded
  // to search two companies within the preview's wait (PREVIEW_WAIT_MS) it comes back not ready,
  // the review cursor stays on it, and the next batch-preview shows it once searched.
  let firstBatch = r.body.batch;
  t.like(firstBatch, { batch: 0, batches_total: 3 });
  if (!firstBatch.ready) {
    t.true(firstBatch.companies.some((x: any) => x.status === 'pending'));
    await until(s, job.id, 'ready_for_review');
    const shown = await call('POST', `${BASE}/${job.id}/batch-preview`, { ...auth(s.u), body: {} });
    firstBatch = shown.body.batch;
  }
  t.like(firstBatch, { batch: 0, batches_total: 3, ready: true });
  const [first, second] = firstBatch.companies;
  t.like(first, {
    position: 0,
    status: 'done',
    input: { name: null, domain: a.domain },
    resolved: { name: a.name, domain: a.domain },
    members_found: 3,
  });
  t.like(second, {
    position: 1,
    status: 'done',
    input: { name: b.name, domain: null },
    resolved: { name: b.name, domain: b.domain },
  });
  t.is(first.people.length, 3);
  const ranks = first.people.map((p: any) => SENIORITY_RANK[p.seniority as Seniority]);
  t.deepEqual(
    ranks,
    [...ranks].sort((x, y) => x - y),
    'most senior first',
  );
  const expectedTop = a.employees
    .filter((p) => p.current)
    .sort(
      (x, y) =>
        SENIORITY_RANK[x.seniority] - SENIORITY_RANK[y.seniority] || Number(x.id.slice(3)) - Number(y.id.slice(3)),
    )[0];
  t.like(first.people[0], {
    status: 'pending',
    source_id: expectedTop.id,
    full_name: expectedTop.fullName,
    title: expectedTop.title,
    profile_url: expectedTop.profileUrl,
    company: { name: a.name, domain: a.domain },
  });

  const done = await until(s, job.id, 'ready_for_review');
  t.like(done, {
    state: 'ready_for_review',
    percent: 100,
    companies: { total: 6, pending: 0, done: 4, failed: 1, duplicate: 1 },
    batches: { total: 3, searched: 3, next_to_preview: 1 },
  });
  t.is(done.members.found, done.members.pending);

  // batch-preview walks on from batch 1, then says there is nothing more; a batch can be shown again.
  const b1 = await call('POST', `${BASE}/${job.id}/batch-preview`, { ...auth(s.u), body: {} });
  t.is(b1.status, 200, b1.text);
  t.like(b1.body.batch, { batch: 1, ready: true });
  t.like(b1.body.batch.companies[0], {
    position: 2,
    status: 'failed',
    reason: 'company_not_found',
    members_found: 0,
    resolved: null,
    attempts: 1,
  });
  t.like(b1.body.batch.companies[1], {
    position: 3,
    status: 'duplicate',
    duplicate_of: first.id,
    members_found: 0,
    resolved: { name: a.name },
  });
  t.deepEqual(b1.body.batch.companies[1].people, []);
  const b2 = await call('POST', `${BASE}/${job.id}/batch-preview`, auth(s.u));
  t.like(b2.body.batch, { batch: 2 });
  t.like(b2.body.batch.companies[0], {
    status: 'done',
    input: { name: 'Whatever', domain: c.domain },
    resolved: { name: c.name },
  });
  const end = await call('POST', `${BASE}/${job.id}/batch-preview`, { ...auth(s.u), body: {} });
  t.is(end.status, 200);
  t.is(end.body.batch, null);
  t.is(end.body.job.progress.batches.next_to_preview, null);
  const again = await call('POST', `${BASE}/${job.id}/batch-preview`, { ...auth(s.u), body: { batch: 0 } });
  t.deepEqual(
    again.body.batch.companies.map((x: any) => x.id),
    r.body.batch.companies.map((x: any) => x.id),
  );
  const out = await call('POST', `${BASE}/${job.id}/batch-preview`, { ...auth(s.u), body: { batch: 3 } });
  t.is(out.status, 422, out.text);
  t.is(out.body.error.code, 'batch_out_of_range');

  // Company outcomes in the order given, filterable, paged by position.
  const all = await outcomes(s, job.id);
  t.deepEqual(
    all.map((x) => x.status),
    ['done', 'done', 'failed', 'duplicate', 'done', 'done'],
  );
  const failed = await call('GET', `${BASE}/${job.id}/company-outcomes?status=failed`, auth(s.u));
  t.deepEqual(
    failed.body.items.map((x: any) => x.input.name),
    [UNKNOWN],
  );
  const p1 = await call('GET', `${BASE}/${job.id}/company-outcomes?limit=4`, auth(s.u));
  t.is(p1.body.items.length, 4);
  const p2 = await call('GET', `${BASE}/${job.id}/company-outcomes?limit=4&cursor=${p1.body.next_cursor}`, auth(s.u));
  t.deepEqual(
    p2.body.items.map((x: any) => x.position),
    [4, 5],
  );
  t.is(p2.body.next_cursor, null);
  t.is((await call('GET', `${BASE}/${job.id}/company-outcomes?batch=1`, auth(s.u))).body.items.length, 2);

  // Rows: every person found, in review order; by company, batch, status; paged.
  const people = await rows(s, job.id);
  t.is(people.length, done.members.found);
  t.is(
    people.length,
    all.reduce((n, x) => n + x.members_found, 0),
  );
  t.true(people.every((p) => p.status === 'pending' && p.job_id === job.id));
  t.is((await rows(s, job.id, `&company_id=${first.id}`)).length, 3);
  t.is((await rows(s, job.id, '&batch=0')).length, first.members_found + second.members_found);
  t.is((await rows(s, job.id, '&status=approved')).length, 0);
  const page1 = await call('GET', `${BASE}/${job.id}/rows?limit=2`, auth(s.u));
  const page2 = await call('GET', `${BASE}/${job.id}/rows?limit=2&cursor=${page1.body.next_cursor}`, auth(s.u));
  t.deepEqual(
    [...page1.body.items, ...page2.body.items].map((p: any) => p.id),
    people.slice(0, 4).map((p) => p.id),
  );

  const m = await call('GET', `${BASE}/${job.id}/metrics`, auth(s.u));
  t.is(m.status, 200, m.text);
  t.like(m.body, {
    state: 'ready_for_review',
    companies: {
      total: 6,
      done: 4,
      failed: 1,
      duplicate: 1,
      source_searches: 6,
      retried: 0,
      failure_reasons: { company_not_found: 1, source_unavailable: 0, source_error: 0, search_failed: 0 },
    },
    members: { found: people.length, approval_rate: null },
    credits: { charged: 0, per_member: 1, pending_max: 0 },
  });
  t.is(
    Object.values(m.body.members.by_seniority as Record<string, number>).reduce((x, y) => x + y, 0),
    people.length,
  );
  t.true(m.body.timing.search_seconds >= 0);

  // The workflow carries the job's search attributes; its history replays.
  const handle = await workflowOf(job.id);
  const desc = await handle.describe();
  t.like(desc.memo, { job_id: job.id, run: 1, phase: 'search' });
  t.deepEqual(desc.searchAttributes.JobKind, ['cdm-import']);
  t.deepEqual(desc.searchAttributes.WorkspaceId, [s.workspaceId]);
  t.deepEqual(desc.searchAttributes.AppId, [s.appId]);
  const { services } = await api();
  await replayLive(services.temporal, cdmImportWorkflowIds.job(job.id));
  await replayFixture(services.temporal, 'cdmImport', cdmImportWorkflowIds.job(job.id));
});

test('approval per person and per company; decisions change until confirm; approved-members lists them', async (t) => {
  const s = await setup();
  const [a, b] = [company(4), company(4)];
  const id = await ready(s, [{ domain: a.domain }, { domain: b.domain }, { name: UNKNOWN }], { max_per_company: 4 });
  const [ca, cb, cu] = await outcomes(s, id);
  const pa = await rows(s, id, `&company_id=${ca.id}`);
  const pb = await rows(s, id, `&company_id=${cb.id}`);
  t.true(pa.length >= 2 && pb.length >= 2);

  // Per company: every person found there.
  const byCompany = await call('POST', `${BASE}/${id}/approval`, {
    ...auth(s.u),
    body: { decision: 'approve', company_ids: [ca.id] },
  });
  t.is(byCompany.status, 200, byCompany.text);
  t.deepEqual(byCompany.body.results, [
    { kind: 'company', id: ca.id, result: 'approved', members_changed: pa.length, members_unchanged: 0 },
  ]);
  t.is(byCompany.body.job.progress.members.approved, pa.length);

  // Per person, mixed with a company: one result per item, in order; unknown ids are not_found.
  const other = randomUUID();
  const mixed = await call('POST', `${BASE}/${id}/approval`, {
    ...auth(s.u),
    body: { decision: 'reject', member_ids: [pa[0].id, pb[0].id, other, pa[0].id], company_ids: [cu.id] },
  });
  t.is(mixed.status, 200, mixed.text);
  t.deepEqual(
    mixed.body.results.map((r: any) => [r.kind, r.id, r.result, r.members_changed]),
    [
      ['member', pa[0].id, 'rejected', 1],
      ['member', pb[0].id, 'rejected', 1],
      ['member', other, 'not_found', 0],
      ['company', cu.id, 'unchanged', 0],
    ],
  );
  // Approving again what is approved: unchanged.
  const same = await call('POST', `${BASE}/${id}/approval`, {
    ...auth(s.u),
    body: { decision: 'approve', member_ids: [pa[1].id] },
  });
  t.like(same.body.results[0], { result: 'unchanged', members_changed: 0, members_unchanged: 1 });
  // A person of another import is not found here.
  const s2 = await setup(s.u);
  const otherJob = await ready(s2, [{ domain: company().domain }]);
  const foreign = (await rows(s2, otherJob))[0];
  const cross = await call('POST', `${BASE}/${id}/approval`, {
    ...auth(s.u),
    body: { decision: 'approve', member_ids: [foreign.id], company_ids: [(await outcomes(s2, otherJob))[0].id] },
  });
  t.deepEqual(
    cross.body.results.map((r: any) => r.result),
    ['not_found', 'not_found'],
  );
  t.is((await rows(s2, otherJob, '&status=approved')).length, 0);

  // Decisions can be changed: the rejected person of company a approved again by company.
  const back = await call('POST', `${BASE}/${id}/approval`, {
    ...auth(s.u),
    body: { decision: 'approve', company_ids: [ca.id] },
  });
  t.like(back.body.results[0], { result: 'approved', members_changed: 1, members_unchanged: pa.length - 1 });

  const approved = await call('GET', `${BASE}/${id}/approved-members`, auth(s.u));
  t.is(approved.status, 200, approved.text);
  t.deepEqual(approved.body.counts, { approved: pa.length, added: 0 });
  t.deepEqual(
    approved.body.items.map((m: any) => m.id),
    pa.map((p) => p.id),
  );
  t.true(approved.body.items.every((m: any) => m.status === 'approved' && m.decided_by === s.u.id && m.decided_at));
  const paged = await call('GET', `${BASE}/${id}/approved-members?limit=1`, auth(s.u));
  const next = await call('GET', `${BASE}/${id}/approved-members?limit=1&cursor=${paged.body.next_cursor}`, auth(s.u));
  t.deepEqual(
    [paged.body.items[0].id, next.body.items[0].id],
    pa.slice(0, 2).map((p) => p.id),
  );
  const rejected = await rows(s, id, '&status=rejected');
  t.deepEqual(
    rejected.map((p) => p.id),
    [pb[0].id],
  );
  const m = await call('GET', `${BASE}/${id}/metrics`, auth(s.u));
  t.is(m.body.members.approval_rate, Math.round((pa.length / (pa.length + 1)) * 1000) / 1000);

  // 400s: nothing named, a malformed id, an unknown decision.
  for (const body of [
    { decision: 'approve' },
    { decision: 'approve', member_ids: [] },
    { decision: 'approve', member_ids: ['x'] },
    { decision: 'maybe', member_ids: [pa[0].id] },
  ]) {
    const bad = await call('POST', `${BASE}/${id}/approval`, { ...auth(s.u), body });
    t.is(bad.status, 400, JSON.stringify(body));
    t.is(bad.body.error.code, 'invalid_body');
  }
});

test('confirm adds exactly the approved people once, one credit per lead created; a second confirm doubles nothing', async (t) => {
  const s = await setup();
  const [a, b] = [company(3), company(3)];
  const id = await ready(s, [{ domain: a.domain }, { domain: b.domain }], { max_per_company: 3 });
  const [ca, cb] = await outcomes(s, id);
  const pa = await rows(s, id, `&company_id=${ca.id}`);
  const pb = await rows(s, id, `&company_id=${cb.id}`);

  // Already known to the workspace: pa[0] is in the list (nothing to add, nothing to pay); pa[1] is a contact of another list (reused).
  const e = await em();
  const actor = await resolveActor(e as never, { userId: s.u.id, kind: 'session' }, undefined);
  await addContactToList(e as never, actor, s.listId, {
    profileUrl: pa[0].profile_url.replace('https://', 'https://www.') + '/',
    fullName: pa[0].full_name,
  });
  const otherList = await call('POST', `/api/apps/${s.appId}/lists`, { ...auth(s.u), body: { name: 'Elsewhere' } });
  const known = await addContactToList(e as never, actor, otherList.body.id, {
    profileUrl: pa[1].profile_url,
    title: 'Edited title',
  });

  await call('POST', `${BASE}/${id}/approval`, {
    ...auth(s.u),
    body: { decision: 'approve', company_ids: [ca.id], member_ids: [pb[0].id] },
  });
  await call('POST', `${BASE}/${id}/approval`, { ...auth(s.u), body: { decision: 'reject', member_ids: [pb[1].id] } });
  const approvedIds = [...pa.map((p) => p.id), pb[0].id];
  const before = await creditBalance(await em(), s.workspaceId);
  const leadsBefore = await (await em()).count(Lead, { list: s.listId });

  const r = await call('POST', `${BASE}/${id}/confirm`, auth(s.u));
  t.is(r.status, 202, r.text);
  t.like(r.body, { state: 'confirming', run: 2 });
  const done = await until(s, id, 'completed');
  t.like(done, {
    members: { approved: 0, added: approvedIds.length, rejected: 1 },
    credits_charged: approvedIds.length - 1,
  });

  // Exactly the approved people, once; pa[0] was already a lead, pa[1]'s contact was reused (its fields kept).
  t.is(await (await em()).count(Lead, { list: s.listId }), leadsBefore + approvedIds.length - 1);
  t.is(await creditBalance(await em(), s.workspaceId), before - (approvedIds.length - 1));
  const ledger = await (
    await em()
  ).find(CreditLedgerEntry, { workspace: s.workspaceId, idempotencyKey: { $like: `cdm:${id}:%` } });
  t.deepEqual(
    ledger.map((l) => l.idempotencyKey).sort(),
    approvedIds
      .filter((x) => x !== pa[0].id)
      .map((x) => `cdm:${id}:${x}`)
      .sort(),
  );
  t.true(ledger.every((l) => l.amount === -1 && l.kind === 'debit'));
  const results = await call('GET', `${BASE}/${id}/results`, auth(s.u));
  t.is(results.status, 200, results.text);
  t.like(results.body, {
    job_id: id,
    state: 'completed',
    list_id: s.listId,
    summary: {
      added: 4,
      leads_created: 3,
      already_in_list: 1,
      contacts_created: 2,
      contacts_reused: 2,
      credits_charged: 3,
      awaiting_confirm: 0,
    },
  });
  t.truthy(results.body.completed_at);
  const items = new Map(results.body.items.map((i: any) => [i.id, i]));
  t.deepEqual([...items.keys()].sort(), [...approvedIds].sort());
  t.like(items.get(pa[0].id), { status: 'added', lead_created: false, contact_created: false, credits_charged: 0 });
  t.like(items.get(pa[1].id), {
    lead_created: true,
    contact_created: false,
    credits_charged: 1,
    contact_id: known.lead.contact.id,
  });
  t.like(items.get(pb[0].id), { lead_created: true, contact_created: true, credits_charged: 1 });
  const leads = await call('GET', `/api/lists/${s.listId}/leads?limit=200`, auth(s.u));
  for (const i of results.body.items)
    t.true(leads.body.items.some((l: any) => l.id === i.lead_id && l.contact_id === i.contact_id));
  const kept = leads.body.items.find((l: any) => l.contact_id === known.lead.contact.id);
  t.is(kept.title, 'Edited title', 'an existing contact’s fields are never overwritten');
  t.is(leads.body.items.find((l: any) => l.id === (items.get(pb[0].id) as any).lead_id).source, 'import');

  // Confirm again: 200, nothing added, nothing charged.
  const twice = await Promise.all([
    call('POST', `${BASE}/${id}/confirm`, auth(s.u)),
    call('POST', `${BASE}/${id}/confirm`, auth(s.u)),
  ]);
  t.deepEqual(
    twice.map((x) => x.status),
    [200, 200],
  );
  t.like(twice[0].body, { state: 'completed', run: 2 });
  t.is(await (await em()).count(Lead, { list: s.listId }), leadsBefore + approvedIds.length - 1);
  t.is(await creditBalance(await em(), s.workspaceId), before - (approvedIds.length - 1));
  t.is(
    await (await em()).count(CreditLedgerEntry, { workspace: s.workspaceId, idempotencyKey: { $like: `cdm:${id}:%` } }),
    approvedIds.length - 1,
  );

  // A completed import takes no more decisions, retries or confirms of anything new.
  const late = await call('POST', `${BASE}/${id}/approval`, {
    ...auth(s.u),
    body: { decision: 'approve', member_ids: [pb[1].id] },
  });
  t.is(late.status, 409, late.text);
  t.is(late.body.error.code, 'invalid_transition');
  const retry = await call('POST', `${BASE}/${id}/retry`, auth(s.u));
  t.is(retry.status, 409);
  t.is(retry.body.error.code, 'invalid_transition');
  const approved = await call('GET', `${BASE}/${id}/approved-members`, auth(s.u));
  t.deepEqual(approved.body.counts, { approved: 0, added: 4 });
  const m = await call('GET', `${BASE}/${id}/metrics`, auth(s.u));
  t.like(m.body, {
    leads: { created: 3, already_in_list: 1, contacts_created: 2 },
    credits: { charged: 3, pending_max: 0 },
  });
  t.true(m.body.timing.confirm_seconds >= 0);

  const { services } = await api();
  const desc = await (await workflowOf(id)).describe();
  t.like(desc.memo, { run: 2, phase: 'confirm' });
  await replayLive(services.temporal, cdmImportWorkflowIds.job(id));
  await replayFixture(services.temporal, 'cdmImport-confirm', cdmImportWorkflowIds.job(id));
});

test('402 insufficient_credits before anything is added; with enough credits the same confirm goes through', async (t) => {
  const s = await setup(await createUser());
  const e = await em();
  const balance = await creditBalance(e, s.workspaceId);
  if (balance > 0) await debitCredits(e, s.workspaceId, balance, { reason: 'drain for test' });
  const id = await ready(s, [{ domain: company(2).domain }], { max_per_company: 2 });
  await call('POST', `${BASE}/${id}/approval`, {
    ...auth(s.u),
    body: { decision: 'approve', company_ids: [(await outcomes(s, id))[0].id] },
  });
  const r = await call('POST', `${BASE}/${id}/confirm`, auth(s.u));
  t.is(r.status, 402, r.text);
  t.is(r.body.error.code, 'insufficient_credits');
  t.like(r.body.error.details, { balance: 0, required: 2 });
  t.like(await progress(s, id), {
    state: 'ready_for_review',
    run: 1,
    members: { approved: 2, added: 0 },
    credits_charged: 0,
  });
  t.is(await (await em()).count(Lead, { list: s.listId }), 0);

  // One credit short: still nothing.
  const { grantCredits } = await import('../../domain/billing/credits.js');
  await grantCredits(await em(), s.workspaceId, 1, { reason: 'test', source: 'admin' });
  t.is((await call('POST', `${BASE}/${id}/confirm`, auth(s.u))).status, 402);
  t.is(await (await em()).count(Lead, { list: s.listId }), 0);
  await grantCredits(await em(), s.workspaceId, 1, { reason: 'test', source: 'admin' });
  t.is((await call('POST', `${BASE}/${id}/confirm`, auth(s.u))).status, 202);
  await until(s, id, 'completed');
  t.is(await (await em()).count(Lead, { list: s.listId }), 2);
  t.is(await creditBalance(await em(), s.workspaceId), 0);
});

test('credits spent while confirming: the chunk is rolled back whole and the import goes back to ready_for_review with the error', async (t) => {
  const s = await setup();
  const id = await ready(s, [{ domain: company(2).domain }], { max_per_company: 2 });
  await call('POST', `${BASE}/${id}/approval`, {
    ...auth(s.u),
    body: { decision: 'approve', company_ids: [(await outcomes(s, id))[0].id] },
  });
  // The run is started on a queue nobody polls, so the balance can change between the check and the work.
  const { services } = await api();
  const actor = await resolveActor((await em()) as never, { userId: s.u.id, kind: 'session' }, undefined);
  const { confirmCdmImport } = await import('../../domain/cdm-imports/cdm-imports.js');
  const { confirmCdmChunk } = await import('../../domain/cdm-imports/confirm-run.js');
  const parked = `cdm-parked-${randomUUID()}`;
  await confirmCdmImport((await em()) as never, actor, temporalJobs(services.temporal, parked), id);
  t.teardown(() => (async () => (await workflowOf(id)).terminate().catch(() => {}))());
  const e = await em();
  await debitCredits(e, s.workspaceId, (await creditBalance(e, s.workspaceId)) - 1, { reason: 'spent elsewhere' });
  t.deepEqual(await confirmCdmChunk((await em()) as never, { jobId: id, run: 2 }), { done: true, added: 0 });
  t.like(await progress(s, id), {
    state: 'ready_for_review',
    members: { approved: 2, added: 0 },
    error: { code: 'insufficient_credits' },
  });
  t.is(await (await em()).count(Lead, { list: s.listId }), 0);
  t.is(await creditBalance(await em(), s.workspaceId), 1);
});

test('events: an idempotent batch of the reviewer’s decisions; a repeated client id is ignored; one result per event', async (t) => {
  const s = await setup();
  const [a, b] = [company(3), company(3)];
  const id = await ready(s, [{ domain: a.domain }, { domain: b.domain }], { max_per_company: 3 });
  const [ca, cb] = await outcomes(s, id);
  const pa = await rows(s, id, `&company_id=${ca.id}`);
  const pb = await rows(s, id, `&company_id=${cb.id}`);
  const ev = (n: string, type: string, target: string, job = id) => ({
    id: `${n}-${id}`,
    job_id: job,
    type,
    target_id: target,
    occurred_at: '2026-01-02T03:04:05Z',
  });

  const r = await call('POST', `${BASE}/events`, {
    ...auth(s.u),
    body: {
      events: [
        ev('e1', 'company.approved', ca.id),
        ev('e2', 'member.rejected', pa[0].id),
        ev('e3', 'member.approved', pb[0].id),
        ev('e2', 'member.approved', pa[0].id), // a repeat within the batch: ignored
        ev('e4', 'member.approved', randomUUID()),
        ev('e5', 'member.approved', pb[1].id, randomUUID()),
      ],
    },
  });
  t.is(r.status, 200, r.text);
  t.deepEqual(
    r.body.results.map((x: any) => [x.id.split('-')[0], x.duplicate, x.result, x.members_changed]),
    [
      ['e1', false, 'approved', 3],
      ['e2', false, 'rejected', 1],
      ['e3', false, 'approved', 1],
      ['e2', true, 'unchanged', 0],
      ['e4', false, 'not_found', 0],
      ['e5', false, 'not_found', 0],
    ],
  );
  t.like(r.body.results[3].first, { result: 'rejected', members_changed: 1 });
  const state = async () => new Map((await rows(s, id)).map((p) => [p.id, p.status]));
  let now = await state();
  t.is(now.get(pa[0].id), 'rejected', 'the repeat did not approve it');
  t.is(now.get(pa[1].id), 'approved');
  t.is(now.get(pb[0].id), 'approved');

  // The same batch sent again (a client retry): every event ignored, answered with what it did first.
  const again = await call('POST', `${BASE}/events`, {
    ...auth(s.u),
    body: {
      events: [
        ev('e1', 'company.rejected', ca.id),
        ev('e3', 'member.rejected', pb[0].id),
        ev('e6', 'member.rejected', pb[2].id),
      ],
    },
  });
  t.deepEqual(
    again.body.results.map((x: any) => [x.duplicate, x.result, x.first?.result ?? null]),
    [
      [true, 'unchanged', 'approved'],
      [true, 'unchanged', 'approved'],
      [false, 'rejected', null],
    ],
  );
  t.truthy(again.body.results[0].first.recorded_at);
  now = await state();
  t.is(now.get(pa[1].id), 'approved');
  t.is(now.get(pb[0].id), 'approved');
  t.is(now.get(pb[2].id), 'rejected');

  // Racing copies of one event: applied once.
  const racing = await Promise.all(
    Array.from({ length: 4 }, () =>
      call('POST', `${BASE}/events`, { ...auth(s.u), body: { events: [ev('e7', 'member.approved', pa[0].id)] } }),
    ),
  );
  t.true(racing.every((x) => x.status === 200));
  t.is(racing.filter((x) => !x.body.results[0].duplicate).length, 1);
  t.true(
    racing.every(
      (x) => (x.body.results[0].duplicate ? x.body.results[0].first.result : x.body.results[0].result) === 'approved',
    ),
  );

  // Another workspace's import is not found (and its id space is its own).
  const stranger = await setup();
  const foreign = await call('POST', `${BASE}/events`, {
    ...auth(stranger.u),
    body: { events: [ev('e1', 'member.rejected', pa[1].id)] },
  });
  t.like(foreign.body.results[0], { duplicate: false, result: 'not_found' });
  t.is((await state()).get(pa[1].id), 'approved');

  // After confirm: invalid_transition per event.
  await call('POST', `${BASE}/${id}/confirm`, auth(s.u));
  await until(s, id, 'completed');
  const late = await call('POST', `${BASE}/events`, {
    ...auth(s.u),
    body: { events: [ev('e8', 'member.rejected', pa[1].id), ev('e9', 'company.approved', cb.id)] },
  });
  t.deepEqual(
    late.body.results.map((x: any) => x.result),
    ['invalid_transition', 'invalid_transition'],
  );

  // occurred_at is kept as the client sent it, whatever its offset or year.
  const odd = await call('POST', `${BASE}/events`, {
    ...auth(s.u),
    body: { events: [{ ...ev('e10', 'member.approved', pa[0].id), occurred_at: '0622-08-06T03:14:29.966776-16:42' }] },
  });
  t.is(odd.status, 200, odd.text);
  t.is(odd.body.results[0].result, 'invalid_transition');

  // 400: empty, too many, a bad id, an unknown type.
  for (const body of [
    { events: [] },
    { events: Array.from({ length: 501 }, (_, i) => ev(`x${i}`, 'member.approved', pa[0].id)) },
    { events: [{ ...ev('e1', 'member.approved', pa[0].id), id: 'has space' }] },
    { events: [ev('e1', 'member.maybe', pa[0].id)] },
    { events: [{ ...ev('e1', 'member.approved', pa[0].id), extra: 1 }] },
  ]) {
    const bad = await call('POST', `${BASE}/events`, { ...auth(s.u), body });
    t.is(bad.status, 400);
    t.is(bad.body.error.code, 'invalid_body');
  }
});

test('event ids are the workspace’s own: an event refused as not_found takes nothing, so its id stays free for the owner’s own event', async (t) => {
  const s = await setup();
  const co = company(3);
  const id = await ready(s, [{ domain: co.domain }], { max_per_company: 3 });
  const people = await rows(s, id);
  const status = async (memberId: string) => (await rows(s, id)).find((p) => p.id === memberId)?.status;
  const send = (u: TestUser, events: Record<string, unknown>[], headers: Record<string, string> = {}) =>
    call('POST', `${BASE}/events`, { ...auth(u, headers), body: { events } });
  const ev = (eventId: string, type: string, target: string, job = id) => ({
    id: eventId,
    job_id: job,
    type,
    target_id: target,
  });

  // Another workspace sends X to this import: not found there, and nothing is taken here.
  const x = `x-${randomUUID()}`;
  const stranger = await setup();
  const foreign = await send(stranger.u, [ev(x, 'member.rejected', people[0].id)]);
  t.is(foreign.status, 200, foreign.text);
  t.like(foreign.body.results[0], { duplicate: false, result: 'not_found' });
  const own = await send(s.u, [ev(x, 'member.rejected', people[0].id)]);
  t.like(own.body.results[0], { duplicate: false, result: 'rejected', members_changed: 1 });
  t.is(await status(people[0].id), 'rejected');
  // …and the stranger's refused X did not take the id in its own workspace either: its own import accepts X.
  const theirs = await ready(stranger, [{ domain: company(3).domain }], { max_per_company: 3 });
  const theirPeople = await call('GET', `${BASE}/${theirs}/rows?limit=200`, auth(stranger.u));
  const later = await send(stranger.u, [ev(x, 'member.rejected', theirPeople.body.items[0].id, theirs)]);
  t.like(later.body.results[0], { duplicate: false, result: 'rejected' });

  // A member of this workspace without access to the import's product: not found, and the id stays free.
  const otherApp = await createTestApp(s.u, 'Other product');
  const { user: member } = await addMemberViaInvite(s.u, { all_apps: false, app_ids: [otherApp.id] });
  const y = `y-${randomUUID()}`;
  const hidden = await send(member, [ev(y, 'member.rejected', people[1].id)], { 'x-acting-as': s.u.id });
  t.like(hidden.body.results[0], { duplicate: false, result: 'not_found' });
  t.is(await status(people[1].id), 'pending');
  const mine = await send(s.u, [ev(y, 'member.rejected', people[1].id)]);
  t.like(mine.body.results[0], { duplicate: false, result: 'rejected', members_changed: 1 });

  // The owner's own event sent to a wrong import first, then to the right one: applied the second time.
  const z = `z-${randomUUID()}`;
  const wrong = await send(s.u, [ev(z, 'member.rejected', people[2].id, randomUUID())]);
  t.like(wrong.body.results[0], { duplicate: false, result: 'not_found' });
  const right = await send(s.u, [ev(z, 'member.rejected', people[2].id)]);
  t.like(right.body.results[0], { duplicate: false, result: 'rejected', members_changed: 1 });
  // An applied id is kept: sent again, it is a duplicate answered with what it did.
  const repeat = await send(s.u, [ev(z, 'member.approved', people[2].id)]);
  t.like(repeat.body.results[0], { duplicate: true, result: 'unchanged', first: { result: 'rejected' } });
  t.is(await status(people[2].id), 'rejected');
  // Nothing was recorded for the refused events.
  const stored: { client_id: string; result: string }[] = await (
    await em()
  ).execute(`select client_id, result from cdm_import_events where client_id = any(?::text[])`, [
    `{${[x, y, z].join(',')}}`,
  ]);
  t.deepEqual(stored.map((r) => `${r.client_id.slice(0, 1)}:${r.result}`).sort(), [
    'x:rejected',
    'x:rejected',
    'y:rejected',
    'z:rejected',
  ]);
});

test('impossible transitions are 409: confirm or retry while searching, nothing approved, nothing to retry, list deleted; a batch still searching is not ready', async (t) => {
  const s = await setup();
  const { services } = await api();
  const actor = await resolveActor((await em()) as never, { userId: s.u.id, kind: 'session' }, undefined);
  // A search parked on a queue nobody polls: the job stays `searching`.
  const parked = await createCdmImport(
    (await em()) as never,
    actor,
    temporalJobs(services.temporal, `cdm-parked-${randomUUID()}`),
    {
      appId: s.appId,
      listId: s.listId,
      companies: [{ domain: company().domain }],
      seniorities: ['vp'],
    },
  );
  t.teardown(() => (async () => (await workflowOf(parked.id)).terminate().catch(() => {}))());
  for (const op of ['confirm', 'retry']) {
    const r = await call('POST', `${BASE}/${parked.id}/${op}`, auth(s.u));
    t.is(r.status, 409, `${op}: ${r.text}`);
    t.is(r.body.error.code, 'invalid_transition');
  }
  // Decisions are taken while searching; a batch not searched yet is shown as not ready and the cursor stays.
  const waited = Date.now();
  const notYet = await call('POST', `${BASE}/${parked.id}/batch-preview`, { ...auth(s.u), body: {} });
  t.is(notYet.status, 200, notYet.text);
  t.true(Date.now() - waited >= 4500, 'waited for the batch');
  t.like(notYet.body.batch, { batch: 0, ready: false });
  t.like(notYet.body.batch.companies[0], { status: 'pending', people: [] });
  t.is(notYet.body.job.progress.batches.next_to_preview, 0);
  const during = await call('POST', `${BASE}/${parked.id}/approval`, {
    ...auth(s.u),
    body: { decision: 'approve', company_ids: [notYet.body.batch.companies[0].id] },
  });
  t.is(during.status, 200, during.text);
  t.like(during.body.results[0], { result: 'unchanged', members_changed: 0 });

  // ready_for_review with nothing approved, nothing failed.
  const id = await ready(s, [{ domain: company(2).domain }]);
  const none = await call('POST', `${BASE}/${id}/confirm`, auth(s.u));
  t.is(none.status, 409);
  t.is(none.body.error.code, 'nothing_approved');
  const noRetry = await call('POST', `${BASE}/${id}/retry`, auth(s.u));
  t.is(noRetry.status, 409);
  t.is(noRetry.body.error.code, 'nothing_to_retry');

  // The list deleted after the import was made: confirm is refused, nothing changes.
  await call('POST', `${BASE}/${id}/approval`, {
    ...auth(s.u),
    body: { decision: 'approve', company_ids: [(await outcomes(s, id))[0].id] },
  });
  t.is((await call('DELETE', `/api/lists/${s.listId}`, auth(s.u))).status, 200);
  const gone = await call('POST', `${BASE}/${id}/confirm`, auth(s.u));
  t.is(gone.status, 409, gone.text);
  t.is(gone.body.error.code, 'list_deleted');
  t.like(await progress(s, id), { state: 'ready_for_review' });
  t.is((await call('GET', `${BASE}/${id}/results`, auth(s.u))).body.list_id, null);
});

test('import_busy: a run of the job still open under another number makes retry answer 409, and the job is left retryable', async (t) => {
  const s = await setup();
  const id = await ready(s, [{ name: UNKNOWN }, { domain: company(1).domain }]);
  const { services } = await api();
  await (await workflowOf(id)).result(); // the search run has closed
  // Someone else's run of this workflow id, open on a queue nobody polls.
  await services.temporal.workflow.start('cdmImport', {
    taskQueue: `cdm-parked-${randomUUID()}`,
    workflowId: cdmImportWorkflowIds.job(id),
    args: [{ jobId: id, run: 99, phase: 'search' }],
    memo: { job_id: id, run: 99, phase: 'search' },
  });
  t.teardown(() => (async () => (await workflowOf(id)).terminate().catch(() => {}))());
  const r = await call('POST', `${BASE}/${id}/retry`, auth(s.u));
  t.is(r.status, 409, r.text);
  t.is(r.body.error.code, 'import_busy');
  const p = await progress(s, id);
  t.like(p, { state: 'ready_for_review', run: 2, companies: { failed: 1, pending: 0 } });
  t.like((await outcomes(s, id))[0], { status: 'failed', reason: 'search_failed' });
  // The same for confirm: refused, and the import is back to ready_for_review with the reason.
  await call('POST', `${BASE}/${id}/approval`, {
    ...auth(s.u),
    body: { decision: 'approve', company_ids: [(await outcomes(s, id))[1].id] },
  });
  const c = await call('POST', `${BASE}/${id}/confirm`, auth(s.u));
  t.is(c.status, 409, c.text);
  t.is(c.body.error.code, 'import_busy');
  t.like(await progress(s, id), {
    state: 'ready_for_review',
    run: 3,
    error: { code: 'start_failed' },
    members: { added: 0 },
  });
});

test('400, 403 and 404: bad bodies, a list of another product, another workspace’s product, bad ids and queries, a member without the product, the Demo workspace', async (t) => {
  const s = await setup();
  const co = company();
  const good = {
    app_id: s.appId,
    list_id: s.listId,
    companies: [{ domain: co.domain }],
    roles: { seniorities: ['vp'] },
  };
  const bodies: Record<string, unknown>[] = [
    { ...good, roles: {} },
    { ...good, roles: { titles: [] } },
    { ...good, companies: [] },
    { ...good, companies: [{}] },
    { ...good, companies: [{ domain: 'not a domain' }] },
    { ...good, companies: [{ domain: 'https://acme.com' }] },
    { ...good, companies: [{ name: '   ' }] },
    { ...good, companies: Array.from({ length: 1001 }, (_, i) => ({ name: `Company ${i}` })) },
    { ...good, max_per_company: 26 },
    { ...good, batch_size: 0 },
    { ...good, extra: true },
    { ...good, app_id: 'nope' },
  ];
  for (const body of bodies) {
    const r = await call('POST', `${BASE}/preview`, { ...auth(s.u), body });
    t.is(r.status, 400, JSON.stringify(body).slice(0, 200));
    t.is(r.body.error.code, 'invalid_body');
  }
  const otherApp = await createTestApp(s.u, 'Other product');
  const wrongList = await call('POST', `${BASE}/preview`, { ...auth(s.u), body: { ...good, app_id: otherApp.id } });
  t.is(wrongList.status, 400);
  t.is(wrongList.body.error.code, 'invalid_list_id');
  const stranger = await setup();
  const foreignApp = await call('POST', `${BASE}/preview`, {
    ...auth(s.u),
    body: { ...good, app_id: stranger.appId, list_id: stranger.listId },
  });
  t.is(foreignApp.status, 404);
  t.is(foreignApp.body.error.code, 'not_found');
  const foreignList = await call('POST', `${BASE}/preview`, {
    ...auth(s.u),
    body: { ...good, list_id: stranger.listId },
  });
  t.is(foreignList.body.error.code, 'invalid_list_id');

  const id = await ready(s, [{ domain: co.domain }]);
  t.is((await call('GET', `${BASE}/not-a-uuid/progress`, auth(s.u))).body.error.code, 'invalid_id');
  for (const q of [
    'limit=0',
    'limit=201',
    'cursor=xyz',
    'status=maybe',
    'batch=-1',
    'batch=1000',
    'nope=1',
    'company_id=x',
  ]) {
    const r = await call('GET', `${BASE}/${id}/rows?${q}`, auth(s.u));
    t.is(r.status, 400, q);
    t.is(r.body.error.code, 'invalid_query');
  }
  t.is((await call('GET', `${BASE}/${id}/company-outcomes?status=added`, auth(s.u))).body.error.code, 'invalid_query');
  const badBatch = await call('POST', `${BASE}/${id}/batch-preview`, { ...auth(s.u), body: { batch: -1 } });
  t.is(badBatch.body.error.code, 'invalid_body');
  t.is((await call('GET', `${BASE}/${id}/progress`)).status, 401);

  // A member given only the other product: 403 not_assigned on this import.
  const { user: member } = await addMemberViaInvite(s.u, { all_apps: false, app_ids: [otherApp.id] });
  const asMember = auth(member, { 'x-acting-as': s.u.id });
  const denied = await call('GET', `${BASE}/${id}/progress`, asMember);
  t.is(denied.status, 403, denied.text);
  t.is(denied.body.error.code, 'not_assigned');
  t.is((await call('POST', `${BASE}/preview`, { ...asMember, body: good })).body.error.code, 'not_assigned');
  // Their events on it are not found (no leak).
  const ev = await call('POST', `${BASE}/events`, {
    ...asMember,
    body: {
      events: [{ id: `m-${id}`, job_id: id, type: 'company.approved', target_id: (await outcomes(s, id))[0].id }],
    },
  });
  t.is(ev.body.results[0].result, 'not_found');

  // The Demo workspace is read-only.
  const viewer = await createUser();
  await call('POST', '/api/me/workspaces/demo/join', { token: viewer.accessToken });
  const demoApp = DEMO_ROWS.find((x) => x.table === 'apps')!.rows[0].id as string;
  const demo = { ...auth(viewer, { 'x-acting-as': DEMO_USER_ID }) };
  for (const [path, body] of [
    [`${BASE}/preview`, { ...good, app_id: demoApp }],
    [`${BASE}/events`, { events: [{ id: 'd1', job_id: id, type: 'company.approved', target_id: id }] }],
    [`${BASE}/${id}/confirm`, undefined],
  ] as const) {
    const r = await call('POST', path, { ...demo, body });
    t.is(r.status, 403, path);
    t.is(r.body.error.code, 'demo_read_only');
  }
});

test('another workspace’s import is 404 on every route that takes its id', async (t) => {
  const s = await setup();
  const id = await ready(s, [{ domain: company().domain }]);
  const stranger = await createOwner();
  const routes: [string, string, unknown?][] = [
    ['POST', 'batch-preview', {}],
    ['POST', 'approval', { decision: 'approve', member_ids: [randomUUID()] }],
    ['GET', 'approved-members'],
    ['POST', 'confirm'],
    ['GET', 'progress'],
    ['GET', 'metrics'],
    ['GET', 'results'],
    ['GET', 'rows'],
    ['GET', 'company-outcomes'],
    ['POST', 'retry'],
  ];
  for (const [method, path, body] of routes) {
    const r = await call(method, `${BASE}/${id}/${path}`, { ...auth(stranger), body });
    t.is(r.status, 404, `${method} ${path}: ${r.text}`);
    t.is(r.body.error.code, 'not_found');
    const unknown = await call(method, `${BASE}/${randomUUID()}/${path}`, { ...auth(s.u), body });
    t.is(unknown.status, 404, `unknown id: ${method} ${path}`);
    // The generic codes of every route: a malformed id, a malformed X-Acting-As, no credential.
    t.is(
      (await call(method, `${BASE}/not-a-uuid/${path}`, { ...auth(s.u), body })).body.error.code,
      'invalid_id',
      path,
    );
    t.is(
      (await call(method, `${BASE}/${id}/${path}`, { ...auth(s.u, { 'x-acting-as': 'nope' }), body })).body.error.code,
      'invalid_user',
      path,
    );
    t.is((await call(method, `${BASE}/${id}/${path}`, { body })).status, 401, path);
    if (method === 'GET' && !['progress', 'metrics'].includes(path)) {
      const r = await call('GET', `${BASE}/${id}/${path}?limit=0`, auth(s.u));
      t.is(r.body.error.code, 'invalid_query', path);
    }
  }
  for (const path of ['preview', 'events']) {
    t.is(
      (await call('POST', `${BASE}/${path}`, { ...auth(s.u, { 'x-acting-as': 'nope' }), body: {} })).body.error.code,
      'invalid_user',
      path,
    );
    t.is((await call('POST', `${BASE}/${path}`, { body: {} })).status, 401, path);
  }
  t.like(await progress(s, id), { state: 'ready_for_review', run: 1 });
});

test('Operator tools: start_company_import (a change) and get_company_import_progress (a read)', async (t) => {
  const s = await setup();
  const start = findTool('start_company_import')!;
  const read = findTool('get_company_import_progress')!;
  t.is(start.risk, 'change');
  t.is(read.risk, 'read');
  const e = await em();
  const actor = await resolveActor(e as never, { userId: s.u.id, kind: 'session' }, undefined);
  const { services } = await api();
  const co = company();
  const out = (await runTool(
    start,
    { em: e as never, actor, jobs: services.jobs, config: services.config, providers: services },
    {
      app_id: s.appId,
      list_id: s.listId,
      companies: [co.domain, co.name, UNKNOWN],
      seniorities: ['founder', 'cxo', 'vp', 'director', 'manager', 'senior', 'entry'],
      max_per_company: 2,
    },
  )) as { import_id: string; state: string; workflow_id: string };
  t.is(out.workflow_id, `cdm-import:${out.import_id}`);
  await until(s, out.import_id, 'ready_for_review');
  const p = (await runTool(
    read,
    { em: (await em()) as never, actor, jobs: services.jobs, config: services.config, providers: services },
    { import_id: out.import_id },
  )) as any;
  t.like(p, {
    import_id: out.import_id,
    state: 'ready_for_review',
    companies: { total: 3, done: 1, duplicate: 1, failed: 1 },
    people: { pending: 2 },
  });
  const job = await requireCdmImport((await em()) as never, actor, out.import_id);
  t.is(job.createdBy?.id, s.u.id);
  // Another workspace's import is not found through the tool either; the input is validated.
  const other = await resolveActor(
    (await em()) as never,
    { userId: (await createOwner()).id, kind: 'session' },
    undefined,
  );
  await t.throwsAsync(
    runTool(
      read,
      { em: (await em()) as never, actor: other, jobs: services.jobs, config: services.config, providers: services },
      { import_id: out.import_id },
    ),
    { message: /not found/ },
  );
  await t.throwsAsync(
    runTool(
      start,
      { em: (await em()) as never, actor, jobs: services.jobs, config: services.config, providers: services },
      { app_id: s.appId, list_id: s.listId, companies: ['x.com'] },
    ),
  );
});

test('retry searches the failed companies only: transient source errors retried then source_unavailable, a permanent one source_error, an unknown company company_not_found', async (t) => {
  const s = await setup();
  // A worker of its own, over Unipile's LinkedIn search (the stand-in, test/helpers/unipile), which
  // fails two of the companies: one with 503 (transient), one with 400 (permanent).
  const fixture = generateSearchFixture({ seed: 45, people: 600, companies: 20 });
  const withEmployees = fixture.companies
    .slice(2) // the first two share a name
    .filter((co) => fixture.people.filter((p) => p.positions.some((x) => x.company === co)).length >= 3);
  const [ok1, flaky, broken, ok2] = withEmployees;
  const standIn = await startStandIn();
  t.teardown(() => standIn.close());
  const unipile = registerAccounts(standIn);
  t.teardown(() => unipile.settled());
  const searchAccount = unipile.addAccount({ name: 'search' });
  let failing = true;
  // The search route as registered, behind the failures of `flaky` and `broken` while `failing`.
  const route = standIn.route;
  standIn.route = (method, pattern, handler) =>
    route(method, pattern, async (req) => {
      if (failing && method === 'POST' && pattern.source === '^\\/linkedin\\/search$') {
        const ids = (req.json as { company?: unknown } | undefined)?.company;
        if (Array.isArray(ids) && ids.includes(flaky.id)) return unipileError(503, 'service_unavailable');
        if (Array.isArray(ids) && ids.includes(broken.id)) return unipileError(400, 'invalid_parameters');
      }
      return handler(req);
    });
  registerSearch(standIn, fixture);
  /** Searches of a company: each starts with the same first request (its most senior level, no cursor). */
  const searches = (co: FixtureCompany) => {
    const bodies = standIn.requests
      .filter((r) => r.method === 'POST' && r.path === '/linkedin/search')
      .map((r) => r.json as { company?: unknown })
      .filter((b) => Array.isArray(b?.company) && b.company.includes(co.id))
      .map((b) => JSON.stringify(b));
    return bodies.filter((b) => b === bodies[0]).length;
  };

  const taskQueue = `cdm-retry-${randomUUID()}`;
  const worker = spawnTsx(
    'workers/worker.ts',
    {
      TEMPORAL_TASK_QUEUE: taskQueue,
      TEMPORAL_SCHEDULES: 'off',
      WEBHOOK_DISPATCHER: 'off',
      MAILBOX_SESSIONS: 'off',
      CONNECTOR_PROVIDER: 'unipile',
      UNIPILE_BASE_URL: standIn.url,
      UNIPILE_API_KEY: standIn.apiKey,
      UNIPILE_WEBHOOK_SECRET: 'whsec-cdm-retry-unipile',
      UNIPILE_SEARCH_ACCOUNT_ID: searchAccount.id,
      UNIPILE_SEARCH_API: 'classic',
    },
    { quiet: true },
  );
  t.teardown(() => stopChild(worker));
  const { services } = await api();
  const actor = await resolveActor((await em()) as never, { userId: s.u.id, kind: 'session' }, undefined);
  const job = await createCdmImport((await em()) as never, actor, temporalJobs(services.temporal, taskQueue), {
    appId: s.appId,
    listId: s.listId,
    companies: [
      { domain: ok1.domain },
      { domain: flaky.domain },
      { name: UNKNOWN },
      { domain: broken.domain },
      { domain: ok2.domain },
    ],
    seniorities: ALL,
    maxPerCompany: 2,
    batchSize: 2,
  });
  const first = await until(s, job.id, 'ready_for_review', 120_000);
  t.like(first, { companies: { done: 2, failed: 3, pending: 0 } });
  const before = await outcomes(s, job.id);
  t.deepEqual(
    before.map((c) => [c.status, c.reason, c.attempts]),
    [
      ['done', null, 1],
      ['failed', 'source_unavailable', 3],
      ['failed', 'company_not_found', 1],
      ['failed', 'source_error', 1],
      ['done', null, 1],
    ],
  );
  t.is(searches(flaky), 3, 'the transient error was retried by the activity, twice');
  t.is(searches(broken), 1, 'a permanent error is not retried');
  t.is(searches(ok1), 1, 'the company found in the same batch was not searched again');
  t.regex(before[1].message, /unavailable/);
  // The failing history (activity failures, failCdmBatch) replays.
  await replayLive(services.temporal, cdmImportWorkflowIds.job(job.id));
  await replayFixture(services.temporal, 'cdmImport-failures', cdmImportWorkflowIds.job(job.id));

  // Review what was found, then retry through the API: the run goes to the same worker, where the two
  // companies answer now; the unknown one fails again.
  failing = false;
  const { base } = await listen({ ...services, jobs: temporalJobs(services.temporal, taskQueue) });
  await call('POST', `${BASE}/${job.id}/approval`, {
    ...auth(s.u),
    body: { decision: 'approve', company_ids: [before[0].id] },
  });
  await call('POST', `${BASE}/${job.id}/batch-preview`, { ...auth(s.u), body: {} });
  t.is((await progress(s, job.id)).batches.next_to_preview, 1);
  const r = await call('POST', `${BASE}/${job.id}/retry`, { ...auth(s.u), base });
  t.is(r.status, 202, r.text);
  t.like(r.body, { retried: 3, job: { state: 'searching', run: 2, progress: { batches: { next_to_preview: 0 } } } });
  await until(s, job.id, 'ready_for_review');
  const after = await outcomes(s, job.id);
  t.deepEqual(
    after.map((c) => [c.status, c.reason, c.attempts]),
    [
      ['done', null, 1],
      ['done', null, 4],
      ['failed', 'company_not_found', 2],
      ['done', null, 2],
      ['done', null, 1],
    ],
  );
  // The companies found the first time were left as they were: same search time, same people, decisions kept.
  for (const i of [0, 4]) t.is(after[i].searched_at, before[i].searched_at);
  t.like(after[0].members, { approved: 2 });
  t.is(after[1].members_found, 2);
  t.is(after[1].resolved.name, flaky.name);
  const m = await call('GET', `${BASE}/${job.id}/metrics`, auth(s.u));
  t.like(m.body.companies, {
    retried: 3,
    source_searches: 10,
    failure_reasons: { company_not_found: 1, source_unavailable: 0, source_error: 0 },
  });
  // Retry again: only the unknown company.
  await call('POST', `${BASE}/${job.id}/batch-preview`, { ...auth(s.u), body: {} });
  await call('POST', `${BASE}/${job.id}/batch-preview`, { ...auth(s.u), body: {} });
  t.is((await progress(s, job.id)).batches.next_to_preview, 2);
  const again = await call('POST', `${BASE}/${job.id}/retry`, { ...auth(s.u), base });
  t.like(again.body, { retried: 1, job: { run: 3, progress: { batches: { next_to_preview: 1 } } } });
  await until(s, job.id, 'ready_for_review');
  t.deepEqual(
    (await outcomes(s, job.id)).map((c) => c.attempts),
    [1, 4, 3, 2, 1],
  );
  await replayFixture(services.temporal, 'cdmImport-retry', cdmImportWorkflowIds.job(job.id));
});

test('debitCreditsBatch: one row per new key, a repeated key skipped, all or nothing when the balance is short', async (t) => {
  const { debitCreditsBatch, grantCredits } = await import('../../domain/billing/credits.js');
  const u = await createUser();
  const ws = await workspaceIdOf(u.id);
  const e = await em();
  const start = await creditBalance(e, ws);
  if (start > 0) await debitCredits(e, ws, start, { reason: 'drain for test' });
  await grantCredits(e, ws, 3, { reason: 'test', source: 'admin' });
  const k = randomUUID();
  const first = await debitCreditsBatch(
    await em(),
    ws,
    [
      { key: `${k}:a`, amount: 1 },
      { key: `${k}:b`, amount: 1 },
      { key: `${k}:a`, amount: 1 },
    ],
    'test',
  );
  t.deepEqual(first, { created: [`${k}:a`, `${k}:b`], charged: 2, balance: 1 });
  const again = await debitCreditsBatch(
    await em(),
    ws,
    [
      { key: `${k}:a`, amount: 1 },
      { key: `${k}:c`, amount: 1 },
    ],
    'test',
  );
  t.deepEqual(again, { created: [`${k}:c`], charged: 1, balance: 0 });
  const short = await t.throwsAsync(
    debitCreditsBatch(
      await em(),
      ws,
      [
        { key: `${k}:d`, amount: 1 },
        { key: `${k}:a`, amount: 1 },
      ],
      'test',
    ),
  );
  t.like(short, { status: 402, code: 'insufficient_credits' });
  t.is(await (await em()).count(CreditLedgerEntry, { workspace: ws, idempotencyKey: { $like: `${k}:%` } }), 3);
  t.deepEqual(await debitCreditsBatch(await em(), ws, [], 'test'), { created: [], charged: 0, balance: 0 });
});
