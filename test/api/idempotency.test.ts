// Idempotency-Key (api/idempotency.ts, docs/idempotency.md) over real PostgreSQL: for every operation
// the table declares idempotent, a valid request sent twice with one key runs once (its handler is
// counted) and the second answer is the first, marked `Idempotent-Replayed: true`; another request with
// the key is 422. Then the rule itself: concurrent duplicates (exactly one runs, the others 409 or the
// replay), expiry after 24 hours (rows backdated), keys per user and acting workspace, error answers
// not kept, malformed keys, an abandoned claim, sealed storage, and what the document says.
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { request } from 'node:http';
import { allOperations } from '../../api/operations.js';
import { buildOpenApi } from '../../api/openapi.js';
import { documentPath } from '../../api/path-params.js';
import type { Operation } from '../../api/operation.js';
import { requestFingerprintOf } from '../../api/idempotency.js';
import { IDEMPOTENCY_KEY_TTL_HOURS } from '../../domain/idempotency/idempotency.js';
import { uuidv7 } from '../../lib/ids.js';
import { waitFor } from '../../scripts/children.js';
import { api, call, closeApi, createUser, listen, uniqueEmail, type Res, type TestUser } from '../helpers/api.js';
import { createOwner, em, grant, workspaceIdOf } from '../helpers/billing.js';
import { campaignOwner, campaignWithAccount } from '../helpers/campaigns.js';
import { bookingEvent, connectScheduler, schedulerKey } from '../helpers/booking.js';
import { installPartner } from '../helpers/partner.js';
import { seedEveryKind } from '../helpers/every-kind.js';
import { preview } from '../helpers/imports.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { createOwnerWithProducts } from '../helpers/scope.js';
import { addTeamMember } from '../helpers/db.js';
test.after.always(closeApi);

const receivers: Receiver[] = [];
test.after.always(() => Promise.all(receivers.map((r) => r.close())));

// ---------------------------------------------------------------------------------------------
// An API of its own whose idempotent handlers are counted (and may be held at a gate), so "ran
// once" is observed directly, whatever the operation does.

/** Handler runs per operation and user (tests run at once; each counts its own user's). */
const runs = new Map<string, number>();
/** A gate per operation: the handler waits for what it returns (a test holds a request in flight). */
const gates = new Map<string, (input: { body: unknown }) => Promise<void> | undefined>();
const ran = (id: string, user: { id: string }) => runs.get(`${id} ${user.id}`) ?? 0;

const counted: Operation[] = allOperations().map((op) =>
  op.idempotent
    ? {
        ...op,
        handler: async (input) => {
          const user = { id: (input as { auth: { userId: string } }).auth.userId };
          runs.set(`${op.operationId} ${user.id}`, ran(op.operationId, user) + 1);
          await gates.get(op.operationId)?.(input as { body: unknown });
          return op.handler(input);
        },
      }
    : op,
);
const covered = counted.filter((op) => op.idempotent);

let base: Promise<string> | undefined;
const server = () => (base ??= (async () => (await listen((await api()).services, counted)).base)());

const KEY = 'Idempotency-Key';
async function send(
  method: string,
  path: string,
  opts: { token: string; body?: unknown; key?: string; headers?: Record<string, string> },
): Promise<Res> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.key !== undefined) headers[KEY] = opts.key;
  return call(method, path, { base: await server(), token: opts.token, body: opts.body, headers });
}

const sql = async <T = Record<string, unknown>>(query: string, params: unknown[] = []): Promise<T[]> =>
  (await em()).execute<T[]>(query, params);
const keyRow = async (
  userId: string,
  key: string,
): Promise<{ state: string; status: number | null; body: string | null; workspace_id: string } | undefined> =>
  (
    await sql<{ state: string; status: number | null; body: string | null; workspace_id: string }>(
      `select state, status, body, workspace_id from idempotency_keys where user_id = ? and key = ?`,
      [userId, key],
    )
  )[0];
const hours = (h: number) => new Date(Date.now() + h * 3_600_000).toISOString();
const memo = <T>(make: () => Promise<T>) => {
  let p: Promise<T> | undefined;
  return () => (p ??= make());
};
async function ok<T = any>(what: string, res: Promise<Res> | Res, ...statuses: number[]): Promise<T> {
  const r = await res;
  if (!statuses.includes(r.status))
    throw new Error(`${what}: expected ${statuses.join('/')}, got ${r.status} ${r.text}`);
  return r.body as T;
}

// ---------------------------------------------------------------------------------------------
// The worlds the requests run in: the every-kind workspace (one real row of every kind), and a
// few set-ups of their own where an operation needs more (an active campaign, AI-written steps).

const world = memo(async () => {
  const f = await createOwnerWithProducts();
  const ids = await seedEveryKind(f);
  await grant(f.owner.id, 1000);
  return { f, ids, owner: f.owner };
});
type World = Awaited<ReturnType<typeof world>>;
const as = (u: TestUser, body?: unknown) => ({ token: u.accessToken, ...(body === undefined ? {} : { body }) });

/** An active network campaign with one invitation step (template), and leads of its list. */
const templateCampaign = memo(async () => {
  const c = await campaignWithAccount('network', [{ type: 'invitation', config: { note: 'Hi {{first_name}}' } }]);
  return c;
});

/** An active network campaign with an AI-written invitation step, and credits for drafts. */
const aiCampaign = memo(async () => {
  const c = await campaignWithAccount('network', [
    { type: 'invitation', config: { note: 'Hi {{first_name}}, about outreach' }, messageMode: 'ai' },
  ]);
  await grant(c.u.id, 1000);
  return { ...c, stepId: c.campaign.stepIds[0] };
});

/** Two failed AI drafts (their phrases blocked), waiting in review: to retry and to revise. */
const failedDrafts = memo(async () => {
  const c = await campaignWithAccount('network', [
    { type: 'invitation', config: { note: 'Hi {{first_name}}' }, messageMode: 'ai' },
  ]);
  await grant(c.u.id, 1000);
  // The lead's company (Navy) is in every note the local model writes.
  await ok(
    'policy',
    call(
      'PUT',
      `/api/campaigns/${c.campaign.id}/message-review/policy`,
      as(c.u, { mode: 'none', blocked_phrases: ['navy'] }),
    ),
    200,
  );
  const leads = await c.o.leads(2);
  await ok(
    'enroll',
    call('POST', `/api/campaigns/${c.campaign.id}/leads`, as(c.u, { lead_ids: leads.map((l) => l.leadId) })),
    200,
  );
  let drafts: { id: string }[] = [];
  await waitFor(
    'two failed drafts',
    async () =>
      (drafts = await sql<{ id: string }>(
        `select id from message_drafts where campaign_id = ? and status = 'failed' order by created_at`,
        [c.campaign.id],
      )).length === 2,
    60_000,
  );
  return { ...c, drafts: drafts.map((d) => d.id) };
});

/** A discovery agent of the world's P1 with a signal and its sources enabled (as agents-discovery sets one up). */
const launchable = memo(async () => {
  const { owner, f } = await world();
  const agent = await ok<{ id: string }>(
    'agent',
    call('POST', `/api/apps/${f.p1.appId}/agents`, as(owner, { name: 'Launchable' })),
    201,
  );
  const signals = await ok<{ id: string }[]>(
    'signals',
    call(
      'PUT',
      `/api/agents/${agent.id}/signals`,
      as(owner, {
        signals: [
          { key: 'outbound-talk', kind: 'post_keywords', name: 'Talks about outbound', keywords: ['outbound'] },
        ],
      }),
    ),
    200,
  );
  for (const source of ['newsforum', 'pronet'])
    await ok('source', call('PUT', `/api/agents/${agent.id}/sources/${source}`, as(owner, { enabled: true })), 200);
  return { agentId: agent.id, signalId: signals[0].id };
});

/** Rejected profiles of the world's every-kind agent (as a discovery run stores them). */
async function rejected(w: World, n: number): Promise<string[]> {
  const [agent] = await sql<{ workspace_id: string; app_id: string }>(
    `select workspace_id, app_id from discovery_agents where id = ?`,
    [w.ids.agent],
  );
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const id = uuidv7();
    const handle = `idem-${randomUUID().slice(0, 12)}`;
    const candidate = {
      source: 'pronet',
      externalId: handle,
      profileUrl: `https://pronet.example/in/${handle}`,
      fullName: `Person ${i}`,
      firstName: 'Person',
      lastName: String(i),
      title: 'Office Manager',
      headline: null,
      seniority: 'entry',
      company: { name: 'Acme', domain: 'acme.example', size: '11-50', industry: 'Retail' },
      country: 'FR',
      email: null,
      currentEmployer: true,
      evidence: { kind: 'people_search', id: handle, text: 'profile', url: null, date: new Date().toISOString() },
      signalKey: handle.padEnd(32, '0').slice(0, 32),
    };
    await sql(
      `insert into rejected_profiles (id, workspace_id, app_id, agent_id, signal_key, dedupe_key, candidate, score, primary_reason, reasons, created_at)
       values (?, ?, ?, ?, 'outbound-talk', ?, ?::jsonb, 20, 'title', '["title: does not match the ICP"]'::jsonb, now())`,
      [
        id,
        agent.workspace_id,
        agent.app_id,
        w.ids.agent,
        `profile:pronet.example/in/${handle}`,
        JSON.stringify(candidate),
      ],
    );
    out.push(id);
  }
  return out;
}

/** Another discovered lead of the world's every-kind agent. */
async function discovered(w: World): Promise<string> {
  const id = uuidv7();
  const key = `idem-${id}`;
  await sql(
    `insert into discovered_leads (id, workspace_id, app_id, agent_id, signal_key, evidence_key, source, external_id, dedupe_key, full_name, company, evidence, score, reasons, status, created_at, updated_at)
     values (?, ?, ?, ?, 'hiring', ?, 'jobs', ?, ?, 'Found Person', 'Acme', '{}'::jsonb, 50, '[]'::jsonb, 'new', now(), now())`,
    [id, w.f.workspaceId, w.f.p1.appId, w.ids.agent, key, key, key],
  );
  return id;
}

/** Another open insight of the world (pausing the every-kind agent). */
async function insight(w: World): Promise<string> {
  await sql(`update discovery_agents set status = 'active' where id = ?`, [w.ids.agent]);
  const id = uuidv7();
  await sql(
    `insert into insights (id, workspace_id, app_id, kind, subject_id, dedupe_key, title, detail, action, status, refreshed_at, created_at, updated_at)
     values (?, ?, ?, 'agent_rejections', ?, ?, 'Most found leads are rejected', '{}'::jsonb, jsonb_build_object('type', 'pause_agent', 'agent_id', ?::text), 'open', now(), now(), now())`,
    [id, w.f.workspaceId, w.f.p1.appId, w.ids.agent, `idem:${id}`, w.ids.agent],
  );
  return id;
}

/** A company import of the world's P1 in the given state (with one failed company when ready for review). */
async function cdmImport(w: World, state: 'completed' | 'ready_for_review'): Promise<string> {
  const id = uuidv7();
  await sql(
    `insert into cdm_imports (id, workspace_id, app_id, list_id, created_by_id, state, run, titles, seniorities, max_per_company, batch_size,
       company_count, batch_count, duplicates_removed, review_cursor, credits_charged, completed_at, created_at, updated_at)
     values (?, ?, ?, ?, ?, ?, 1, '["CTO"]'::jsonb, '[]'::jsonb, 3, 10, 1, 1, 0, 0, 0, ?, now(), now())`,
    [id, w.f.workspaceId, w.f.p1.appId, w.f.p1.listId, w.owner.id, state, state === 'completed' ? new Date() : null],
  );
  if (state === 'ready_for_review')
    await sql(
      `insert into cdm_import_companies (id, job_id, position, batch, input_name, status, reason, attempts, created_at, updated_at)
       values (?, ?, 0, 0, 'Acme', 'failed', 'source_error', 1, now(), now())`,
      [uuidv7(), id],
    );
  return id;
}

// ---------------------------------------------------------------------------------------------
// One valid request per idempotent operation, and another one (another body, else another path)
// that the key must refuse. An operation added to the table without a fixture fails below.

interface Case {
  /** Whose request (default: the world's owner). */
  user?: TestUser;
  path: string;
  body?: unknown;
  /** Another request to the same operation: another body (same path) or another path. */
  other?: { path?: string; body?: unknown };
}

const FIXTURES: Record<string, () => Promise<Case>> = {
  createApp: async () => ({
    path: '/api/apps',
    body: { name: 'Idem product' },
    other: { body: { name: 'Idem other' } },
  }),
  createTeamInvitation: async () => ({
    path: '/api/team/invitations',
    body: { email: uniqueEmail('idem'), role: 'member' },
    other: { body: { email: uniqueEmail('idem-other'), role: 'member' } },
  }),
  createWebhook: async () => ({
    path: '/api/webhooks/outbound',
    body: { url: 'https://hooks.example.com/idem', events: ['lead.discovered'] },
    other: { body: { url: 'https://hooks.example.com/idem-other', events: ['lead.discovered'] } },
  }),
  addListLeads: async () => {
    const { f } = await world();
    return {
      path: `/api/lists/${f.p1.listId}/leads`,
      body: { people: [{ email: uniqueEmail('idem-json'), first_name: 'Ida' }] },
      other: { body: { people: [{ email: uniqueEmail('idem-json-other'), first_name: 'Ola' }] } },
    };
  },
  rotateWebhookSecret: async () => {
    const { owner } = await world();
    const hook = await ok<{ id: string }>(
      'subscription',
      call(
        'POST',
        '/api/webhooks/outbound',
        as(owner, { url: 'https://hooks.example.com/rotated', events: ['lead.discovered'] }),
      ),
      201,
    );
    return {
      path: `/api/webhooks/outbound/${hook.id}/rotate-secret`,
      body: { overlap_seconds: 3600 },
      other: { body: { overlap_seconds: 0 } },
    };
  },
  createAgent: async () => {
    const { f } = await world();
    return {
      path: `/api/apps/${f.p1.appId}/agents`,
      body: { name: 'Idem agent' },
      other: { body: { name: 'Idem agent 2' } },
    };
  },
  createList: async () => {
    const { f } = await world();
    return { path: `/api/apps/${f.p1.appId}/lists`, body: { name: 'Idem list' }, other: { body: { name: 'Idem 2' } } };
  },
  commitAppListImportDraft: async () => {
    const { owner, f } = await world();
    const draft = await ok<{ id: string }>(
      'preview',
      preview(owner, f.p1.appId, 'Email,First Name\nidem@acme.example,Ida\n', { filename: 'idem.csv' }),
      201,
    );
    return {
      path: `/api/apps/${f.p1.appId}/lists/import-drafts/${draft.id}/commit`,
      body: { list_id: f.p1.listId },
      other: { body: { list_name: 'Imported by idem' } },
    };
  },
  launchAgentSignal: async () => {
    const a = await launchable();
    return {
      path: `/api/agents/${a.agentId}/signals/${a.signalId}/launch`,
      body: {},
      other: { body: { launch_id: randomUUID() } },
    };
  },
  bulkPromoteAgentRejectedProfiles: async () => {
    const w = await world();
    const [one, two] = await rejected(w, 2);
    return {
      path: `/api/agents/${w.ids.agent}/rejected-profiles/bulk-promote`,
      body: { ids: [one] },
      other: { body: { ids: [two] } },
    };
  },
  promoteAgentRejectedProfile: async () => {
    const w = await world();
    const [one, two] = await rejected(w, 2);
    const path = (id: string) => `/api/agents/${w.ids.agent}/rejected-profiles/${id}/promote`;
    return { path: path(one), other: { path: path(two) } };
  },
  refreshDiscoveredLead: async () => {
    const w = await world();
    return {
      path: `/api/discovered-leads/${await discovered(w)}/refresh`,
      other: { path: `/api/discovered-leads/${await discovered(w)}/refresh` },
    };
  },
  enrichDiscoveredLead: async () => {
    const w = await world();
    return {
      path: `/api/enrichment/discovered-leads/${await discovered(w)}`,
      body: {},
      other: { body: { refresh: true } },
    };
  },
  enrichContact: async () => {
    const { f } = await world();
    return { path: `/api/enrichment/contacts/${f.p2.lead.contactId}`, body: {}, other: { body: { refresh: true } } };
  },
  createAgentThread: async () => {
    const { f } = await world();
    return {
      path: '/api/agent/threads',
      body: { app_id: f.p1.appId, title: 'Idem thread' },
      other: { body: { app_id: f.p1.appId, title: 'Idem other thread' } },
    };
  },
  retryOperatorTask: async () => {
    const w = await world();
    const id = uuidv7();
    await sql(
      `insert into operator_tasks (id, workspace_id, user_id, app_id, title, status, on_failure, action_count, run, event_count, created_at, updated_at, started_at, finished_at)
       values (?, ?, ?, ?, 'Idem task', 'failed', 'stop', 0, 1, 0, now(), now(), now(), now())`,
      [id, w.f.workspaceId, w.owner.id, w.f.p1.appId],
    );
    return { path: `/api/operator/tasks/${id}/retry`, other: { path: `/api/operator/tasks/${w.ids.task}/retry` } };
  },
  createContactExport: async () => {
    const { f } = await world();
    return { path: '/api/contacts/export', body: { app_id: f.p1.appId }, other: { body: { app_id: f.p2.appId } } };
  },
  confirmCompanyDecisionMakerImport: async () => {
    const w = await world();
    const path = (id: string) => `/api/company-decision-maker-imports/${id}/confirm`;
    return { path: path(await cdmImport(w, 'completed')), other: { path: path(w.ids.cdm_import) } };
  },
  retryCompanyDecisionMakerImport: async () => {
    const w = await world();
    const path = (id: string) => `/api/company-decision-maker-imports/${id}/retry`;
    return { path: path(await cdmImport(w, 'ready_for_review')), other: { path: path(w.ids.cdm_import) } };
  },
  previewCompanyDecisionMakerImports: async () => {
    const { f } = await world();
    const body = (name: string) => ({
      app_id: f.p1.appId,
      list_id: f.p1.listId,
      companies: [{ name }],
      roles: { titles: ['CTO'] },
    });
    return { path: '/api/company-decision-maker-imports/preview', body: body('Acme'), other: { body: body('Globex') } };
  },
  createPlatformAccount: async () => ({
    path: '/api/platform-accounts',
    body: { channel: 'email', display_name: 'Idem sender', time_zone: 'Europe/Paris' },
    other: { body: { channel: 'email', display_name: 'Idem other', time_zone: 'Europe/Paris' } },
  }),
  createCampaignStep: async () => {
    const { ids } = await world();
    const body = (subject: string) => ({ type: 'email', config: { subject, body: 'Hello {{first_name}}' } });
    return { path: `/api/campaigns/${ids.campaign}/steps`, body: body('Idem'), other: { body: body('Idem 2') } };
  },
  createCampaign: async () => {
    const { f } = await world();
    return {
      path: `/api/apps/${f.p1.appId}/campaigns`,
      body: { name: `Idem campaign ${randomUUID()}`, time_zone: 'Europe/Paris' },
      other: { body: { name: `Idem other ${randomUUID()}`, time_zone: 'Europe/Paris' } },
    };
  },
  duplicateCampaign: async () => {
    const { ids } = await world();
    return {
      path: `/api/campaigns/${ids.campaign}/duplicate`,
      body: { name: `Idem copy ${randomUUID()}` },
      other: { body: { name: `Idem copy ${randomUUID()}` } },
    };
  },
  addCampaignLeads: async () => {
    const c = await templateCampaign();
    const [one, two] = await c.o.leads(2);
    return {
      user: c.u,
      path: `/api/campaigns/${c.campaign.id}/leads`,
      body: { lead_ids: [one.leadId] },
      other: { body: { lead_ids: [two.leadId] } },
    };
  },
  enrollCampaignListContacts: async () => {
    const c = await templateCampaign();
    return {
      user: c.u,
      path: `/api/campaigns/${c.campaign.id}/enroll-list-contacts`,
      body: { list_id: c.o.listId, client_key: 'first run' },
      other: { body: { list_id: c.o.listId, client_key: 'another run' } },
    };
  },
  reenrollLead: async () => {
    const c = await templateCampaign();
    const [lead] = await c.o.leads(1);
    await ok(
      'enroll',
      call('POST', `/api/campaigns/${c.campaign.id}/leads`, as(c.u, { lead_ids: [lead.leadId] })),
      200,
    );
    await waitFor(
      'the enrollment completed',
      async () =>
        (
          await sql(`select 1 from enrollments where campaign_id = ? and lead_id = ? and status = 'completed'`, [
            c.campaign.id,
            lead.leadId,
          ])
        ).length > 0,
      60_000,
    );
    return {
      user: c.u,
      path: `/api/leads/${lead.leadId}/reenroll`,
      body: { campaign_id: c.campaign.id },
      other: { body: { campaign_id: c.campaign.id, step_id: c.campaign.stepIds[0] } },
    };
  },
  generateCampaignAllMessages: async () => {
    const c = await aiCampaign();
    return {
      user: c.u,
      path: `/api/campaigns/${c.campaign.id}/generate-all-messages`,
      body: { step_id: c.stepId, client_key: 'first run' },
      other: { body: { step_id: c.stepId, client_key: 'another run' } },
    };
  },
  generateCampaignMessageReviewDrafts: async () => {
    const c = await aiCampaign();
    return {
      user: c.u,
      path: `/api/campaigns/${c.campaign.id}/message-review/drafts/generate`,
      body: { scope: 'missing', step_id: c.stepId, client_key: 'first run' },
      other: { body: { scope: 'missing', step_id: c.stepId, client_key: 'another run' } },
    };
  },
  generateCampaignMessage: async () => {
    const c = await aiCampaign();
    const [one, two] = await c.o.leads(2);
    return {
      user: c.u,
      path: `/api/campaigns/${c.campaign.id}/generate-message`,
      body: { lead_id: one.leadId, step_id: c.stepId },
      other: { body: { lead_id: two.leadId, step_id: c.stepId } },
    };
  },
  generateCampaignMessageReviewExamples: async () => {
    const c = await aiCampaign();
    return {
      user: c.u,
      path: `/api/campaigns/${c.campaign.id}/message-review/examples/generate`,
      body: { step_id: c.stepId, count: 1 },
      other: { body: { step_id: c.stepId, count: 2 } },
    };
  },
  saveCampaignMessageReviewExamples: async () => {
    const c = await aiCampaign();
    const body = (text: string) => ({ step_id: c.stepId, items: [{ body: text, source: 'user' }] });
    return {
      user: c.u,
      path: `/api/campaigns/${c.campaign.id}/message-review/examples/save`,
      body: body('Hi {{first_name}}, a short note'),
      other: { body: body('Hello {{first_name}}') },
    };
  },
  retryCampaignMessageReviewDraft: async () => {
    const c = await failedDrafts();
    const path = (id: string) => `/api/campaigns/${c.campaign.id}/message-review/drafts/${id}/retry`;
    return { user: c.u, path: path(c.drafts[0]), other: { path: path(c.drafts[1]) } };
  },
  reviseCampaignMessageReviewDraft: async () => {
    const c = await failedDrafts();
    return {
      user: c.u,
      path: `/api/campaigns/${c.campaign.id}/message-review/drafts/${c.drafts[1]}/revise`,
      body: { instructions: 'Shorter, please' },
      other: { body: { instructions: 'Longer, please' } },
    };
  },
  createInboxConversationAiReply: async () => {
    const w = await world();
    // Something to answer: an inbound message in the every-kind conversation.
    await sql(
      `insert into inbox_messages (id, workspace_id, conversation_id, platform_account_id, connector_message_id, direction, kind, sender, body, sent_at, lead_id, created_at)
       values (?, ?, ?, ?, ?, 'in', 'reply', ?, ?, now(), ?, now())`,
      [
        uuidv7(),
        w.f.workspaceId,
        w.ids.conversation,
        w.f.account.id,
        `idem-${randomUUID()}`,
        w.f.p1.lead.email,
        'Can you send pricing?',
        w.f.p1.lead.leadId,
      ],
    );
    return {
      path: `/api/inbox/conversations/${w.ids.conversation}/ai-reply`,
      body: {},
      other: { body: { instructions: 'Be brief' } },
    };
  },
  replyInboxConversationLive: async () => {
    const { f } = await world();
    const body = (to: string) => ({ account_id: f.account.id, recipient: to, body: 'Hello there', subject: 'Hello' });
    return {
      path: '/api/inbox/conversations/new-chat/reply-live',
      body: body(uniqueEmail('idem-live')),
      other: { body: body(uniqueEmail('idem-live-other')) },
    };
  },
  replyInboxConversation: async () => {
    const { ids } = await world();
    return {
      path: `/api/inbox/conversations/${ids.conversation}/reply`,
      body: { body: 'Tuesday at 10?', subject: 'Re: Hello' },
      other: { body: { body: 'Wednesday at 10?', subject: 'Re: Hello' } },
    };
  },
  createFollowUpLeadNote: async () => {
    const { f } = await world();
    return {
      path: `/api/follow-ups/leads/${f.p1.lead.leadId}/notes`,
      body: { body: 'Called, call back Tuesday' },
      other: { body: { body: 'Called, call back Wednesday' } },
    };
  },
  createLeadMeeting: async () => {
    const { f } = await world();
    const body = (title: string) => ({ title, starts_at: hours(24), ends_at: hours(25) });
    return {
      path: `/api/leads/${f.p1.lead.leadId}/meetings`,
      body: body('Idem intro'),
      other: { body: body('Idem other') },
    };
  },
  attachBookingProviderEvent: async () => {
    const { f, ids } = await world();
    const id = uuidv7();
    const booking = bookingEvent('booking.created', {
      startsAt: hours(24),
      endsAt: hours(25),
      attendees: [{ email: 'stranger@example.test' }],
    }).data.booking;
    await sql(
      `insert into booking_provider_events (id, workspace_id, booking_provider_id, provider, event_id, source, type, booking_id, payload, title, starts_at, ends_at,
         booking_status, booking_updated_at, attendee_email, state, received_at, handled_at)
       values (?, ?, ?, 'scheduler', ?, 'webhook', 'booking.created', ?, ?::jsonb, 'Intro call', ?, ?, 'scheduled', now(), 'stranger@example.test', 'unmatched', now(), now())`,
      [id, f.workspaceId, ids.booking_provider, `evt_${id}`, booking.id, JSON.stringify(booking), hours(24), hours(25)],
    );
    return {
      path: `/api/booking-provider-events/${id}/attach`,
      body: { lead_id: f.p1.lead.leadId },
      other: { body: { lead_id: f.p2.lead.leadId } },
    };
  },
  backfillBookingProvider: async () => {
    const { ids } = await world();
    return {
      path: `/api/booking-providers/${ids.booking_provider}/backfill`,
      body: {},
      other: { body: { since: hours(-24 * 10) } },
    };
  },
  createBookingProviderSchedulerApiKey: async () => {
    const u = await createOwner('Idem scheduler');
    return {
      user: u,
      path: '/api/booking-providers/scheduler/api-key',
      body: { api_key: schedulerKey() },
      other: { body: { api_key: schedulerKey() } },
    };
  },
  registerBookingProviderWebhook: async () => {
    const u = await createOwner('Idem booking hooks');
    const a = await connectScheduler(u);
    // No body: another request is another provider's path (this one's in another workspace is 404, so
    // the refusal of the key is shown by the cross-operation check below).
    return { user: u, path: `/api/booking-providers/${a.id}/webhook/register` };
  },
  applyInsight: async () => {
    const w = await world();
    return {
      path: `/api/insights/${await insight(w)}/apply`,
      other: { path: `/api/insights/${await insight(w)}/apply` },
    };
  },
  confirmIntegrationPartnerEvent: async () => {
    // A partner CRM installed for real (its tokens are needed to push the record), and a conflict it raised.
    const u = await createOwner('Idem partner');
    const installed = await installPartner(u);
    const o = await campaignOwner(u);
    const [lead] = await o.leads(1);
    const id = uuidv7();
    await sql(
      `insert into partner_events (id, workspace_id, integration_id, kind, record_kind, record_id, state, details, created_at, updated_at)
       values (?, ?, ?, 'field_conflict', 'lead', ?, 'pending', ?::jsonb, now(), now())`,
      [
        id,
        o.workspaceId,
        installed.integration.id,
        lead.leadId,
        JSON.stringify({ partner_id: 'p-1', fields: [{ field: 'company', ours: 'Navy', theirs: 'US Navy' }] }),
      ],
    );
    return {
      user: u,
      path: `/api/integrations/partner/events/${id}/confirm`,
      body: { resolution: 'keep_ours' },
      other: { body: { resolution: 'keep_theirs' } },
    };
  },
  createIntegration: async () => {
    const r = await startReceiver();
    receivers.push(r);
    const body = (name: string) => ({ kind: 'json_webhook', name, url: r.url, secret: 'shh-secret-1234' });
    return { path: '/api/integrations', body: body('Idem hook'), other: { body: body('Idem other hook') } };
  },
  createIdea: async () => ({
    path: '/api/ideas',
    body: { title: 'Idem idea', body: 'Dark mode' },
    other: { body: { title: 'Idem idea', body: 'Light mode' } },
  }),
  createTableView: async () => {
    const body = (name: string) => ({
      table: 'contacts',
      name,
      layout: { columns: [], filters: [], sort: [], page_size: 50 },
    });
    return { path: '/api/table-views', body: body(`Idem ${randomUUID()}`), other: { body: body('Idem other') } };
  },
  createSuppression: async () => ({
    path: '/api/suppressions',
    body: { value: uniqueEmail('idem-suppressed') },
    other: { body: { value: uniqueEmail('idem-suppressed-other') } },
  }),
};

test('every idempotent operation has a request here, and every POST that answers 201 or 202 takes the key or says why not', (t) => {
  const missing = covered.map((op) => op.operationId).filter((id) => !FIXTURES[id]);
  t.deepEqual(missing, [], 'idempotent operations without a request in FIXTURES');
  t.deepEqual(
    Object.keys(FIXTURES).filter((id) => !covered.some((op) => op.operationId === id)),
    [],
    'requests for operations that are not idempotent',
  );
  for (const op of allOperations()) {
    const createsOrStarts = op.method === 'POST' && (201 in op.responses || 202 in op.responses);
    if (createsOrStarts)
      t.true(op.idempotent || !!op.idempotencyExempt?.trim(), `${op.operationId}: covered or exempt`);
    if (op.idempotent) {
      t.is(op.method, 'POST', op.operationId);
      t.is(op.auth, 'user', op.operationId);
      t.falsy(op.form ?? op.produces, op.operationId);
    }
  }
  t.log(`covered (${covered.length}): ${covered.map((op) => `${op.method} ${op.path}`).join(', ')}`);
  t.log(
    `exempt: ${allOperations()
      .filter((op) => op.idempotencyExempt)
      .map((op) => `${op.method} ${op.path} (${op.idempotencyExempt})`)
      .join('; ')}`,
  );
});

/** The key reused on another operation (POST /api/ideas, or table views for the ideas themselves). */
const elsewhere = (op: Operation): [string, unknown] =>
  op.operationId === 'createIdea'
    ? [
        '/api/table-views',
        { table: 'contacts', name: 'Elsewhere', layout: { columns: [], filters: [], sort: [], page_size: 50 } },
      ]
    : ['/api/ideas', { title: 'Elsewhere' }];

for (const op of covered) {
  test(`${op.method} ${op.path}: the same key and request run once and replay the answer; another request with the key is 422`, async (t) => {
    t.timeout(180_000);
    const fixture = FIXTURES[op.operationId];
    if (!fixture) return t.fail(`no request for ${op.operationId} in FIXTURES`);
    const c = await fixture();
    const user = c.user ?? (await world()).owner;
    const key = `generic ${op.operationId} ${randomUUID()}`;
    const before = ran(op.operationId, user);
    const first = await send(op.method, c.path, { token: user.accessToken, body: c.body, key });
    t.true(first.status >= 200 && first.status < 300 && first.status in op.responses, `${first.status} ${first.text}`);
    t.is(first.headers.get('idempotent-replayed'), null);
    t.is(ran(op.operationId, user), before + 1, 'the handler ran once');
    const row = await keyRow(user.id, key);
    t.like(row, { state: 'done', status: first.status });

    const again = await send(op.method, c.path, { token: user.accessToken, body: c.body, key });
    t.is(again.status, first.status);
    t.deepEqual(again.body, first.body, 'the same answer');
    t.is(again.headers.get('idempotent-replayed'), 'true');
    t.is(ran(op.operationId, user), before + 1, 'the replay ran nothing');

    if (c.other) {
      const other = await send(op.method, c.other.path ?? c.path, {
        token: user.accessToken,
        body: c.other.body ?? c.body,
        key,
      });
      t.is(other.status, 422, other.text);
      t.is(other.body.error.code, 'idempotency_key_mismatch');
    }
    const [path, body] = elsewhere(op);
    const cross = await send('POST', path, { token: user.accessToken, body, key });
    t.is(cross.status, 422, cross.text);
    t.is(cross.body.error.code, 'idempotency_key_mismatch');
    t.is(ran(op.operationId, user), before + 1, 'refused requests ran nothing');
    // …and the key still answers its own request.
    const third = await send(op.method, c.path, { token: user.accessToken, body: c.body, key });
    t.is(third.status, first.status);
    t.deepEqual(third.body, first.body);
  });
}

// ---------------------------------------------------------------------------------------------
// The rule itself, on simple operations.

const idea = (title: string) => ({ title, body: 'Something' });

test('concurrent duplicates: exactly one runs; the others are 409 idempotency_key_in_flight or the replay', async (t) => {
  const u = await createUser('Idem racer');
  const key = `race-${randomUUID()}`;
  const before = ran('createIdea', u);
  const title = `Race ${randomUUID()}`;
  const all = await Promise.all(
    Array.from({ length: 8 }, () => send('POST', '/api/ideas', { token: u.accessToken, body: idea(title), key })),
  );
  t.is(ran('createIdea', u), before + 1, 'one handler ran');
  const made = all.filter((r) => r.status === 201);
  t.true(made.length >= 1, all.map((r) => `${r.status} ${r.text}`).join('\n'));
  t.is(new Set(made.map((r) => r.body.id)).size, 1, 'every 201 is the same idea');
  for (const r of all)
    if (r.status !== 201) t.like(r, { status: 409, body: { error: { code: 'idempotency_key_in_flight' } } });
  t.is(made.filter((r) => r.headers.get('idempotent-replayed') === null).length, 1, 'one first answer');
  t.is((await sql(`select 1 from ideas where title = ?`, [title])).length, 1, 'one idea');
});

test('a key in flight: the same request is 409 until the first answers, then it is replayed; another request is 422', async (t) => {
  const u = await createUser('Idem held');
  const key = `held-${randomUUID()}`;
  const title = `Held ${randomUUID()}`;
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  let entered!: () => void;
  const inside = new Promise<void>((r) => (entered = r));
  gates.set('createIdea', (input) => {
    if ((input.body as { title?: string }).title !== title) return undefined;
    entered();
    return held;
  });
  t.teardown(() => gates.delete('createIdea'));
  const first = send('POST', '/api/ideas', { token: u.accessToken, body: idea(title), key });
  await inside;
  const busy = await send('POST', '/api/ideas', { token: u.accessToken, body: idea(title), key });
  t.like(busy, { status: 409, body: { error: { code: 'idempotency_key_in_flight' } } });
  t.like(await keyRow(u.id, key), { state: 'in_flight', status: null });
  const mismatch = await send('POST', '/api/ideas', { token: u.accessToken, body: idea('Another'), key });
  t.like(mismatch, { status: 422, body: { error: { code: 'idempotency_key_mismatch' } } });
  release();
  const done = await first;
  t.is(done.status, 201, done.text);
  const replay = await send('POST', '/api/ideas', { token: u.accessToken, body: idea(title), key });
  t.like(replay, { status: 201, body: { id: done.body.id } });
  t.is(replay.headers.get('idempotent-replayed'), 'true');
});

test(`a key is kept ${IDEMPOTENCY_KEY_TTL_HOURS} hours: past its expiry (row backdated) the same request runs anew, and the hourly purge deletes it`, async (t) => {
  const u = await createUser('Idem expiry');
  const key = `expiry-${randomUUID()}`;
  const title = `Expiring ${randomUUID()}`;
  const first = await send('POST', '/api/ideas', { token: u.accessToken, body: idea(title), key });
  t.is(first.status, 201);
  const [row] = await sql<{ hours: number }>(
    `select extract(epoch from expires_at - created_at) / 3600 as hours from idempotency_keys where user_id = ? and key = ?`,
    [u.id, key],
  );
  t.is(Number(row.hours), IDEMPOTENCY_KEY_TTL_HOURS);
  // Still within the 24 hours (an hour before the end): replayed.
  await sql(
    `update idempotency_keys set created_at = now() - interval '23 hours', expires_at = now() + interval '1 hour' where user_id = ? and key = ?`,
    [u.id, key],
  );
  t.is((await send('POST', '/api/ideas', { token: u.accessToken, body: idea(title), key })).body.id, first.body.id);
  // Past them: the key is free, even for another request.
  await sql(
    `update idempotency_keys set created_at = now() - interval '25 hours', expires_at = now() - interval '1 hour' where user_id = ? and key = ?`,
    [u.id, key],
  );
  const before = ran('createIdea', u);
  const later = await send('POST', '/api/ideas', { token: u.accessToken, body: idea(`${title} again`), key });
  t.is(later.status, 201, later.text);
  t.not(later.body.id, first.body.id);
  t.is(later.headers.get('idempotent-replayed'), null);
  t.is(ran('createIdea', u), before + 1);
  t.is((await sql(`select 1 from ideas where title in (?, ?)`, [title, `${title} again`])).length, 2);

  // The purge (activities/maintenance.ts, hourly) removes expired keys and keeps live ones.
  const stale = `stale-${randomUUID()}`;
  t.is(
    (await send('POST', '/api/ideas', { token: u.accessToken, body: idea(`${title} stale`), key: stale })).status,
    201,
  );
  await sql(`update idempotency_keys set expires_at = now() - interval '1 minute' where user_id = ? and key = ?`, [
    u.id,
    stale,
  ]);
  const { createMaintenanceActivities } = await import('../../activities/maintenance.js');
  const { MockActivityEnvironment } = await import('@temporalio/testing');
  const env = new MockActivityEnvironment();
  const result: { idempotencyKeys: number } = await env.run(
    createMaintenanceActivities({ orm: (await api()).services.orm } as never).purgeExpiredAuth,
  );
  t.true(result.idempotencyKeys >= 1);
  t.is(await keyRow(u.id, stale), undefined);
  t.truthy(await keyRow(u.id, key), 'a live key stays');
});

test('keys are per user and per acting workspace: the same key of two users, or of one user in two workspaces, never collide', async (t) => {
  const [a, b] = await Promise.all([createOwner('Idem A'), createUser('Idem B')]);
  const key = `shared-${randomUUID()}`;
  const title = `Shared ${randomUUID()}`;
  const ra = await send('POST', '/api/ideas', { token: a.accessToken, body: idea(title), key });
  const rb = await send('POST', '/api/ideas', { token: b.accessToken, body: idea(title), key });
  t.is(ra.status, 201);
  t.is(rb.status, 201);
  t.not(ra.body.id, rb.body.id);
  t.is(ran('createIdea', a), 1);
  t.is(ran('createIdea', b), 1);
  // Each user's key answers that user's request; another request is refused for that user alone.
  t.is((await send('POST', '/api/ideas', { token: b.accessToken, body: idea('Other'), key })).status, 422);
  t.is((await send('POST', '/api/ideas', { token: a.accessToken, body: idea(title), key })).body.id, ra.body.id);

  // B, a member of A's team, acting in A's workspace: a key of its own there (lists are per workspace).
  await addTeamMember(a.id, b.id, { role: 'admin' });
  const app = await ok<{ id: string }>('app', call('POST', '/api/apps', as(a, { name: 'Shared product' })), 201);
  const ownApp = await ok<{ id: string }>('app', call('POST', '/api/apps', as(b, { name: 'B product' })), 201);
  const listKey = `acting-${randomUUID()}`;
  const inA = await send('POST', `/api/apps/${app.id}/lists`, {
    token: b.accessToken,
    body: { name: 'Targets' },
    key: listKey,
    headers: { 'x-acting-as': a.id },
  });
  t.is(inA.status, 201, inA.text);
  const inOwn = await send('POST', `/api/apps/${ownApp.id}/lists`, {
    token: b.accessToken,
    body: { name: 'Targets' },
    key: listKey,
  });
  t.is(inOwn.status, 201, inOwn.text);
  t.is(inOwn.headers.get('idempotent-replayed'), null);
  const rows = await sql<{ workspace_id: string }>(
    `select workspace_id from idempotency_keys where user_id = ? and key = ? order by workspace_id`,
    [b.id, listKey],
  );
  t.deepEqual(rows.map((r) => r.workspace_id).sort(), [await workspaceIdOf(a.id), await workspaceIdOf(b.id)].sort());
  // The owner's own use of that key in their workspace is theirs (keys are per user).
  const byOwner = await send('POST', `/api/apps/${app.id}/lists`, {
    token: a.accessToken,
    body: { name: 'Owner targets' },
    key: listKey,
  });
  t.is(byOwner.status, 201, byOwner.text);
  // A replay in A's workspace still answers B's first request there.
  const replay = await send('POST', `/api/apps/${app.id}/lists`, {
    token: b.accessToken,
    body: { name: 'Targets' },
    key: listKey,
    headers: { 'x-acting-as': a.id },
  });
  t.like(replay, { status: 201, body: { id: inA.body.id } });
});

test('an error answer is not kept: the key is released, so the same request runs again and a corrected one with the key proceeds', async (t) => {
  const u = await createOwner('Idem errors');
  const app = await ok<{ id: string }>('app', call('POST', '/api/apps', as(u, { name: 'Errors product' })), 201);
  const path = `/api/apps/${app.id}/lists`;
  await ok('taken', call('POST', path, as(u, { name: 'Taken' })), 201);
  const key = `errors-${randomUUID()}`;
  const before = ran('createList', u);
  const refused = await send('POST', path, { token: u.accessToken, body: { name: 'Taken' }, key });
  t.is(refused.status, 409, refused.text);
  t.is(await keyRow(u.id, key), undefined, 'nothing stored');
  const again = await send('POST', path, { token: u.accessToken, body: { name: 'Taken' }, key });
  t.is(again.status, 409);
  t.is(ran('createList', u), before + 2, 'an error is not replayed: the request ran again');
  const fixed = await send('POST', path, { token: u.accessToken, body: { name: 'Free' }, key });
  t.is(fixed.status, 201, fixed.text);
  t.like(await keyRow(u.id, key), { state: 'done', status: 201 });
  // A request refused before it runs (validation) never claims the key.
  const otherKey = `invalid-${randomUUID()}`;
  t.is((await send('POST', path, { token: u.accessToken, body: { name: '' }, key: otherKey })).status, 400);
  t.is(await keyRow(u.id, otherKey), undefined);
  // A handler that throws (500) releases it too.
  const boom = `boom-${randomUUID()}`;
  gates.set('createList', (input) =>
    (input.body as { name: string }).name === 'Boom' ? Promise.reject(new Error('boom')) : undefined,
  );
  t.teardown(() => gates.delete('createList'));
  t.is((await send('POST', path, { token: u.accessToken, body: { name: 'Boom' }, key: boom })).status, 500);
  t.is(await keyRow(u.id, boom), undefined);
});

/** A POST with the Idempotency-Key header sent twice (fetch would join them into one line). */
async function twoKeys(path: string, token: string, body: unknown): Promise<{ status: number; body: any }> {
  const url = `${await server()}${path}`;
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          'Idempotency-Key': ['k-1', 'k-2'],
        },
      },
      (res) => {
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

test('a malformed key is 400 invalid_idempotency_key before anything runs; 1 to 255 printable characters are keys', async (t) => {
  const u = await createUser('Idem keys');
  const before = ran('createIdea', u);
  for (const bad of ['', 'x'.repeat(256), 'caf\u00e9', 'a\tb', 'x'.repeat(254) + '\u00ff']) {
    const r = await send('POST', '/api/ideas', { token: u.accessToken, body: idea('Bad key'), key: bad });
    t.is(r.status, 400, JSON.stringify(bad));
    t.is(r.body.error.code, 'invalid_idempotency_key', JSON.stringify(bad));
  }
  const twice = await twoKeys('/api/ideas', u.accessToken, idea('Bad key'));
  t.like(twice, { status: 400, body: { error: { code: 'invalid_idempotency_key' } } });
  t.is(ran('createIdea', u), before, 'nothing ran');
  for (const good of [
    'x'.repeat(255),
    'a',
    `with spaces/and~symbols ${randomUUID()}`,
    '!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~',
  ])
    t.is(
      (await send('POST', '/api/ideas', { token: u.accessToken, body: idea(good.slice(0, 60)), key: good })).status,
      201,
    );
  // Operations that do not take it ignore it (a GET, a PUT).
  const r = await send('GET', '/api/ideas', { token: u.accessToken, key: '' });
  t.is(r.status, 200);
});

test('the fingerprint: key order and whitespace of the body do not matter; the query and the path do', async (t) => {
  const u = await createUser('Idem fingerprint');
  const key = `fp-${randomUUID()}`;
  const first = await call('POST', '/api/ideas', {
    base: await server(),
    token: u.accessToken,
    rawBody: '{"title":"Order","body":"Something"}',
    headers: { [KEY]: key },
  });
  t.is(first.status, 201);
  const reordered = await call('POST', '/api/ideas', {
    base: await server(),
    token: u.accessToken,
    rawBody: '{ "body": "Something",\n  "title": "Order" }',
    headers: { [KEY]: key },
  });
  t.like(reordered, { status: 201, body: { id: first.body.id } });
  t.is(reordered.headers.get('idempotent-replayed'), 'true');
  t.not(
    requestFingerprintOf('POST', '/api/ideas', {}, { title: 'Order' }),
    requestFingerprintOf('POST', '/api/ideas', { a: '1' }, { title: 'Order' }),
  );
  t.is(
    requestFingerprintOf('POST', '/api/x', {}, { a: 1, b: [1, { c: 2, d: 3 }] }),
    requestFingerprintOf('POST', '/api/x', {}, { b: [1, { d: 3, c: 2 }], a: 1 }),
  );
});

test('a claim left in flight by a process that died is taken over once its lease has run out (same request only)', async (t) => {
  const u = await createUser('Idem abandoned');
  const workspaceId = await workspaceIdOf(u.id);
  const key = `abandoned-${randomUUID()}`;
  const body = idea(`Abandoned ${randomUUID()}`);
  const fingerprint = requestFingerprintOf('POST', '/api/ideas', {}, body);
  const claim = (lockedFor: string, fp = fingerprint) =>
    sql(
      `insert into idempotency_keys (user_id, workspace_id, key, operation_id, fingerprint, state, owner, locked_until, created_at, expires_at)
       values (?, ?, ?, 'createIdea', ?, 'in_flight', ?, now() + ?::interval, now(), now() + interval '24 hours')
       on conflict (user_id, workspace_id, key) do update set locked_until = excluded.locked_until, fingerprint = excluded.fingerprint`,
      [u.id, workspaceId, key, fp, randomUUID(), lockedFor],
    );
  await claim('1 minute');
  t.is((await send('POST', '/api/ideas', { token: u.accessToken, body, key })).status, 409);
  await claim('-1 second', 'f'.repeat(64));
  t.is((await send('POST', '/api/ideas', { token: u.accessToken, body, key })).status, 422, 'another request’s claim');
  await claim('-1 second');
  const taken = await send('POST', '/api/ideas', { token: u.accessToken, body, key });
  t.is(taken.status, 201, taken.text);
  t.like(await keyRow(u.id, key), { state: 'done', status: 201 });
});

test('a stored answer is sealed: the signing secret a webhook subscription shows once is not readable in the row, and a replay shows it', async (t) => {
  const u = await createUser('Idem sealed');
  const key = `sealed-${randomUUID()}`;
  const body = { url: 'https://hooks.example.com/sealed', events: ['lead.discovered'] };
  const first = await send('POST', '/api/webhooks/outbound', { token: u.accessToken, body, key });
  t.is(first.status, 201, first.text);
  const secret = first.body.secret as string;
  t.truthy(secret);
  const row = await keyRow(u.id, key);
  t.false(String(row?.body).includes(secret));
  t.false(String(row?.body).includes('hooks.example.com'));
  const again = await send('POST', '/api/webhooks/outbound', { token: u.accessToken, body, key });
  t.is(again.body.secret, secret);
  t.is(
    (await sql(`select 1 from webhook_subscriptions where workspace_id = ?`, [await workspaceIdOf(u.id)])).length,
    1,
    'one subscription',
  );
});

test('the document: the shared IdempotencyKey parameter, 400/409/422 codes and Idempotent-Replayed on covered operations only', (t) => {
  const doc = buildOpenApi(allOperations()) as {
    components: { parameters: Record<string, { name: string; in: string; required: boolean; schema: object }> };
    paths: Record<
      string,
      Record<
        string,
        { parameters: object[]; responses: Record<string, any>; 'x-error-codes': Record<string, string[]> }
      >
    >;
  };
  t.like(doc.components.parameters.IdempotencyKey, {
    name: 'Idempotency-Key',
    in: 'header',
    required: false,
    schema: { minLength: 1, maxLength: 255 },
  });
  const ref = { $ref: '#/components/parameters/IdempotencyKey' };
  for (const op of allOperations()) {
    const o = doc.paths[documentPath(op.path)][op.method.toLowerCase()];
    const has = o.parameters.some((p) => JSON.stringify(p) === JSON.stringify(ref));
    t.is(has, op.idempotent, `${op.operationId}: the parameter`);
    if (!op.idempotent) continue;
    t.true(o['x-error-codes']['400'].includes('invalid_idempotency_key'), op.operationId);
    t.true(o['x-error-codes']['409'].includes('idempotency_key_in_flight'), op.operationId);
    t.true(o['x-error-codes']['422'].includes('idempotency_key_mismatch'), op.operationId);
    for (const status of Object.keys(op.responses))
      t.deepEqual(
        o.responses[status].headers['Idempotent-Replayed'],
        { $ref: '#/components/headers/Idempotent-Replayed' },
        `${op.operationId} ${status}`,
      );
  }
});
