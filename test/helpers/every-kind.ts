// One real row of every resource kind of domain/access.ts (RESOLVE), in the workspace of
// createOwnerWithProducts(): product kinds belong to product p1 only (as RESOLVE computes their
// products), workspace-level kinds are the workspace's, `own` kinds are the owner's. Made through the
// HTTP API where that is simple, else inserted as the domain would leave them. The fixture for
// checks that run over every kind (test/api/every-kind.test.ts).
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Kind } from '../../domain/access.js';
import { uuidv7 } from '../../lib/ids.js';
import { call, uniqueEmail, type Res } from './api.js';
import { em } from './billing.js';
import { connectScheduler } from './booking.js';
import { preview } from './imports.js';
import type { createOwnerWithProducts } from './scope.js';
import { addMemberViaInvite } from './team.js';

type Fixture = Awaited<ReturnType<typeof createOwnerWithProducts>>;

const sql = async <T = Record<string, unknown>>(query: string, params: unknown[] = []): Promise<T[]> =>
  (await em()).execute<T[]>(query, params);

/** The answer's body when its status is `status`; throws with the answer otherwise. */
async function answer<T = any>(what: string, status: number, res: Promise<Res> | Res): Promise<T> {
  const r = await res;
  if (r.status !== status) throw new Error(`${what}: expected ${status}, got ${r.status} ${r.text}`);
  return r.body as T;
}

const hour = (h: number) => new Date(Date.now() + h * 3_600_000).toISOString();

export async function seedEveryKind(f: Fixture): Promise<Record<Kind, string>> {
  const { owner, workspaceId, account, p1 } = f;
  const as = (body?: unknown, headers: Record<string, string> = {}) => ({
    token: owner.accessToken,
    headers,
    ...(body === undefined ? {} : { body }),
  });
  const lead = p1.lead;

  // A discovery agent of P1 (API), and a lead it found (inserted as a discovery run stores them).
  const agentAndFound = (async () => {
    const agent = await answer<{ id: string }>(
      'create agent',
      201,
      call('POST', `/api/apps/${p1.appId}/agents`, as({ name: 'Every-kind agent' })),
    );
    const found = uuidv7();
    const key = `k-${found}`;
    await sql(
      `insert into discovered_leads (id, workspace_id, app_id, agent_id, signal_key, evidence_key, source, external_id, dedupe_key, full_name, evidence, score, reasons, status, created_at, updated_at)
       values (?, ?, ?, ?, 'hiring', ?, 'jobs', ?, ?, 'Found Person', '{}'::jsonb, 50, '[]'::jsonb, 'new', now(), now())`,
      [found, workspaceId, p1.appId, agent.id, key, key, key],
    );
    return { agent: agent.id, discovered_lead: found };
  })();

  // A P1 campaign with one step (API); the P1 lead enrolled in it with its first action planned (inserted as enrollment leaves them).
  const campaignChain = (async () => {
    const campaign = await answer<{ id: string }>(
      'create campaign',
      201,
      call(
        'POST',
        `/api/apps/${p1.appId}/campaigns`,
        as({ name: `Every kind ${randomUUID()}`, time_zone: 'Europe/Paris' }),
      ),
    );
    const step = await answer<{ id: string; position: number; step_version: number }>(
      'add step',
      201,
      call(
        'POST',
        `/api/campaigns/${campaign.id}/steps`,
        as({ type: 'email', config: { subject: 'Hi {{first_name|there}}', body: 'Hello {{first_name}}' } }),
      ),
    );
    const enrollment = uuidv7();
    await sql(
      `insert into enrollments (id, workspace_id, campaign_id, lead_id, contact_id, status, step_version, current_position, current_step_id, run, enrolled_at, created_at, updated_at)
       values (?, ?, ?, ?, ?, 'active', ?, ?, ?, 1, now(), now(), now())`,
      [enrollment, workspaceId, campaign.id, lead.leadId, lead.contactId, step.step_version, step.position, step.id],
    );
    const action = uuidv7();
    await sql(
      `insert into scheduled_actions (id, workspace_id, campaign_id, enrollment_id, lead_id, step_id, step_position, step_version, type, state, due_at, attempts, created_at, updated_at)
       values (?, ?, ?, ?, ?, ?, ?, ?, 'email', 'planned', ?, 0, now(), now())`,
      [action, workspaceId, campaign.id, enrollment, lead.leadId, step.id, step.position, step.step_version, hour(24)],
    );
    return { campaign: campaign.id, enrollment, action };
  })();

  // A conversation with the P1 lead (no campaign: its products are its lead's).
  const conversation = (async () => {
    const id = uuidv7();
    await sql(
      `insert into conversations (id, workspace_id, platform_account_id, channel, connector_thread_id, counterpart, contact_id, lead_id, last_message_at, last_message_preview, last_direction, unread_count, created_at, updated_at)
       values (?, ?, ?, 'email', ?, ?, ?, ?, now(), 'Sounds good', 'in', 1, now(), now())`,
      [id, workspaceId, account.id, `thr-${id}`, lead.email, lead.contactId, lead.leadId],
    );
    return id;
  })();

  const meeting = (async () =>
    (
      await answer<{ id: string }>(
        'create meeting',
        201,
        call(
          'POST',
          `/api/leads/${lead.leadId}/meetings`,
          as({ title: 'Intro call', starts_at: hour(24), ends_at: hour(25) }),
        ),
      )
    ).id)();

  // A reply-waiting reminder on the P1 lead, as reply routing opens one.
  const reminder = (async () => {
    const id = uuidv7();
    await sql(
      `insert into follow_up_reminders (id, workspace_id, lead_id, kind, state, due_at, summary, created_at) values (?, ?, ?, 'reply_waiting', 'open', ?, 'Answer Grace', now())`,
      [id, workspaceId, lead.leadId, hour(24)],
    );
    return id;
  })();

  // An insight about P1 (an insight with no product is workspace-level).
  // Shaped like the refresh writes it (the action is what the response schema checks).
  const insight = (async () => {
    const id = uuidv7();
    const { agent } = await agentAndFound;
    await sql(
      `insert into insights (id, workspace_id, app_id, kind, subject_id, dedupe_key, title, detail, action, status, refreshed_at, created_at, updated_at)
       values (?, ?, ?, 'agent_rejections', ?, ?, 'Most found leads are rejected', '{}'::jsonb, jsonb_build_object('type', 'pause_agent', 'agent_id', ?::text), 'open', now(), now(), now())`,
      [id, workspaceId, p1.appId, agent, `every-kind:${id}`, agent],
    );
    return id;
  })();

  // A CSV import draft in P1 (API preview).
  const listImport = (async () =>
    (
      await answer<{ id: string }>(
        'import preview',
        201,
        preview(owner, p1.appId, 'Email,First Name\ngrace@acme.example,Grace\n', { filename: 'every-kind.csv' }),
      )
    ).id)();

  // A company (CDM) import into P1's list, finished (inserted as domain/cdm-imports/cdm-imports.ts creates one).
  const cdmImport = (async () => {
    const id = uuidv7();
    await sql(
      `insert into cdm_imports (id, workspace_id, app_id, list_id, created_by_id, state, run, titles, seniorities, max_per_company, batch_size,
         company_count, batch_count, duplicates_removed, review_cursor, credits_charged, completed_at, created_at, updated_at)
       values (?, ?, ?, ?, ?, 'completed', 1, '["CTO"]'::jsonb, '[]'::jsonb, 3, 10, 1, 1, 0, 0, 0, now(), now(), now())`,
      [id, workspaceId, p1.appId, p1.listId, owner.id],
    );
    return id;
  })();

  // An export's products are its requester's scope: the owner's would cover every product, so it is
  // requested (API) by a member given P1 only, acting in the owner's workspace.
  const exportId = (async () => {
    const { user } = await addMemberViaInvite(owner, { role: 'member', all_apps: false, app_ids: [p1.appId] });
    const r = call('POST', '/api/contacts/export', {
      token: user.accessToken,
      headers: { 'x-acting-as': owner.id },
      body: { app_id: p1.appId },
    });
    return (await answer<{ id: string }>('create export', 202, r)).id;
  })();

  // An integration (as the CRM install stores it) and a pending conflict it raised on the P1 lead.
  const integrationAndEvent = (async () => {
    const integration = uuidv7();
    await sql(
      `insert into integrations (id, workspace_id, provider, name, status, created_at, updated_at) values (?, ?, 'partner', 'CRM', 'active', now(), now())`,
      [integration, workspaceId],
    );
    const event = uuidv7();
    await sql(
      `insert into partner_events (id, workspace_id, integration_id, kind, record_kind, record_id, state, details, created_at, updated_at)
       values (?, ?, ?, 'field_conflict', 'lead', ?, 'pending', ?::jsonb, now(), now())`,
      [
        event,
        workspaceId,
        integration,
        lead.leadId,
        JSON.stringify({ partner_id: 'p-1', fields: [{ field: 'company', ours: 'Navy', theirs: 'US Navy' }] }),
      ],
    );
    return { integration, partner_event: event };
  })();

  const webhook = (async () =>
    (
      await answer<{ id: string }>(
        'create webhook',
        201,
        call(
          'POST',
          '/api/webhooks/outbound',
          as({ url: 'https://hooks.example.com/every-kind', events: ['lead.discovered'] }),
        ),
      )
    ).id)();

  // The local scheduler connected (API), and an event of it nobody could match (as the hook stores it).
  const booking = (async () => {
    const provider = await connectScheduler(owner);
    const event = uuidv7();
    await sql(
      `insert into booking_provider_events (id, workspace_id, booking_provider_id, provider, event_id, source, type, booking_id, payload, title, starts_at, ends_at,
         booking_status, booking_updated_at, attendee_email, state, received_at, handled_at)
       values (?, ?, ?, 'scheduler', ?, 'webhook', 'booking.created', ?, '{}'::jsonb, 'Intro call', ?, ?, 'scheduled', now(), 'stranger@example.test', 'unmatched', now(), now())`,
      [event, workspaceId, provider.id, `evt_${event}`, `bk_${event}`, hour(24), hour(25)],
    );
    return { booking_provider: provider.id, booking_event: event };
  })();

  const member = (async () => {
    const [row] = await sql<{ id: string }>(`select id from team_members where workspace_id = ? and user_id = ?`, [
      workspaceId,
      f.member.id,
    ]);
    if (!row) throw new Error('the fixture’s member has no team_members row');
    return row.id;
  })();

  const invitation = (async () =>
    (
      await answer<{ id: string }>(
        'invite',
        201,
        call('POST', '/api/team/invitations', as({ email: uniqueEmail('every-kind'), role: 'member' })),
      )
    ).id)();

  // A pending MCP approval of the owner (a registered client, its grant, the approval row), as a risky tool call leaves it.
  const approval = (async () => {
    const client = uuidv7();
    await sql(
      `insert into mcp_clients (id, client_name, redirect_uris, created_at) values (?, 'Every-kind client', '[]'::jsonb, now())`,
      [client],
    );
    const grant = uuidv7();
    await sql(
      `insert into mcp_grants (id, client_id, user_id, workspace_id, scope, resource, redirect_uri, code_hash, code_challenge, code_expires_at, created_at)
       values (?, ?, ?, ?, 'mcp', 'http://x/mcp', 'http://127.0.0.1/cb', ?, 'c', now(), now())`,
      [grant, client, owner.id, workspaceId, randomBytes(32).toString('hex')],
    );
    const id = uuidv7();
    const args = { app_id: p1.appId, name: 'From MCP' };
    await sql(
      `insert into mcp_approvals (id, workspace_id, user_id, client_id, grant_id, tool_name, risk, args, args_hash, status, expires_at, created_at)
       values (?, ?, ?, ?, ?, 'create_lead_list', 'change', ?::jsonb, ?, 'pending', ?, now())`,
      [
        id,
        workspaceId,
        owner.id,
        client,
        grant,
        JSON.stringify(args),
        createHash('sha256').update(JSON.stringify(args)).digest('hex'),
        hour(1),
      ],
    );
    return id;
  })();

  // An Operator thread of the owner on P1 (API), and a text file attached to it (as an upload stores it).
  const threadAndAttachment = (async () => {
    const thread = await answer<{ id: string }>(
      'create thread',
      201,
      call('POST', '/api/agent/threads', as({ app_id: p1.appId, title: 'Every kind' })),
    );
    const attachment = uuidv7();
    const text = 'Notes about Grace';
    await sql(
      `insert into agent_attachments (id, workspace_id, thread_id, user_id, filename, content_type, size_bytes, sha256, extraction_status, text, created_at)
       values (?, ?, ?, ?, 'notes.txt', 'text/plain', ?, ?, 'extracted', ?, now())`,
      [
        attachment,
        workspaceId,
        thread.id,
        owner.id,
        Buffer.byteLength(text),
        createHash('sha256').update(text).digest('hex'),
        text,
      ],
    );
    return { thread: thread.id, attachment };
  })();

  // A finished Operator task of the owner on P1 (tasks are made by the Operator's create_task tool, no route).
  const task = (async () => {
    const id = uuidv7();
    await sql(
      `insert into operator_tasks (id, workspace_id, user_id, app_id, title, status, on_failure, action_count, run, event_count, created_at, updated_at, started_at, finished_at)
       values (?, ?, ?, ?, 'Every-kind task', 'completed', 'stop', 0, 1, 0, now(), now(), now(), now())`,
      [id, workspaceId, owner.id, p1.appId],
    );
    return id;
  })();

  // An address on the workspace's suppression list (API).
  const suppression = (async () =>
    (
      await answer<{ id: string }>(
        'suppress',
        201,
        call('POST', '/api/suppressions', as({ value: uniqueEmail('every-kind') })),
      )
    ).id)();

  const memory = (async () => {
    const [fact] = await answer<{ id: string }[]>(
      'remember',
      200,
      call('PUT', '/api/operator/memory', as({ app_id: p1.appId, key: 'tone', value: 'Friendly, short' })),
    );
    return fact.id;
  })();

  const [
    found,
    chain,
    conv,
    meet,
    rem,
    ins,
    imp,
    cdm,
    exp,
    partner,
    hook,
    book,
    mem,
    inv,
    appr,
    threadAtt,
    tsk,
    fact,
    supp,
  ] = await Promise.all([
    agentAndFound,
    campaignChain,
    conversation,
    meeting,
    reminder,
    insight,
    listImport,
    cdmImport,
    exportId,
    integrationAndEvent,
    webhook,
    booking,
    member,
    invitation,
    approval,
    threadAndAttachment,
    task,
    memory,
    suppression,
  ]);

  // Every key of Kind must be here (the type says so); the test also checks each at run time.
  return {
    app: p1.appId,
    agent: found.agent,
    list: p1.listId,
    lead: lead.leadId,
    contact: lead.contactId,
    discovered_lead: found.discovered_lead,
    list_import: imp,
    cdm_import: cdm,
    export: exp,
    campaign: chain.campaign,
    enrollment: chain.enrollment,
    action: chain.action,
    conversation: conv,
    meeting: meet,
    reminder: rem,
    insight: ins,
    account: account.id,
    integration: partner.integration,
    partner_event: partner.partner_event,
    webhook: hook,
    booking_provider: book.booking_provider,
    booking_event: book.booking_event,
    member: mem,
    invitation: inv,
    suppression: supp,
    approval: appr,
    thread: threadAtt.thread,
    task: tsk,
    memory: fact,
    attachment: threadAtt.attachment,
  };
}
