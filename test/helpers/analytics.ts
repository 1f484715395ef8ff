// Raw facts written directly (as the executor, inbox and discovery would have), for analytics and
// insights tests: a list with leads enrolled in a campaign, their scheduled actions with the times
// of their sends, opens, acceptances and replies, discovered leads and meetings.
import { uuidv7 } from '../../lib/ids.js';
import { em } from './billing.js';

export interface ActionSpec {
  enrollment: number;
  step: number;
  state?: string;
  executedAt?: Date | null;
  openedAt?: Date | null;
  acceptedAt?: Date | null;
  repliedAt?: Date | null;
  /** An inbound bounce of the executed send (inbox processing). */
  bouncedAt?: Date | null;
  errorCode?: string | null;
  updatedAt?: Date;
}

/** `count` leads enrolled in the campaign (created at `enrolledAt`), and the given actions on them. */
export async function seedEnrollments(
  workspaceId: string,
  appId: string,
  campaign: { id: string; stepIds: string[] },
  count: number,
  actions: ActionSpec[],
  enrolledAt = new Date(),
) {
  const e = await em();
  const listId = uuidv7();
  await e.execute(
    `insert into lead_lists (id, workspace_id, app_id, name, created_at, updated_at) values (?, ?, ?, 'Analytics list', now(), now())`,
    [listId, workspaceId, appId],
  );
  const rows = Array.from({ length: count }, () => ({ contact: uuidv7(), lead: uuidv7(), enrollment: uuidv7() }));
  await e.execute(
    `with v as (select * from json_to_recordset(?::json) as v(contact uuid, lead uuid, enrollment uuid)),
       c as (insert into contacts (id, workspace_id, created_at, updated_at) select contact, ?, now(), now() from v),
       l as (insert into leads (id, workspace_id, list_id, contact_id, source, created_at, updated_at) select lead, ?, ?, contact, 'manual', now(), now() from v)
     insert into enrollments (id, workspace_id, campaign_id, lead_id, contact_id, step_version, status, enrolled_at, created_at, updated_at)
     select enrollment, ?, ?, lead, contact, 1, 'active', ?, ?, now() from v`,
    [JSON.stringify(rows), workspaceId, workspaceId, listId, workspaceId, campaign.id, enrolledAt, enrolledAt],
  );
  const acts = actions.map((a) => ({
    id: uuidv7(),
    enrollment_id: rows[a.enrollment]!.enrollment,
    lead_id: rows[a.enrollment]!.lead,
    step_id: campaign.stepIds[a.step]!,
    step_position: a.step,
    state: a.state ?? (a.executedAt ? 'executed' : 'planned'),
    executed_at: a.executedAt ?? null,
    opened_at: a.openedAt ?? null,
    accepted_at: a.acceptedAt ?? null,
    replied_at: a.repliedAt ?? null,
    bounced_at: a.bouncedAt ?? null,
    error_code: a.errorCode ?? null,
    updated_at: a.updatedAt ?? a.executedAt ?? new Date(),
  }));
  await e.execute(
    `insert into scheduled_actions (id, workspace_id, campaign_id, enrollment_id, lead_id, step_id, step_position, step_version, type, state, due_at, executed_at, opened_at, accepted_at, replied_at, bounced_at, error_code, attempts, created_at, updated_at)
     select v.id, ?, ?, v.enrollment_id, v.lead_id, v.step_id, v.step_position, 1, 'email', v.state, coalesce(v.executed_at, now()), v.executed_at, v.opened_at, v.accepted_at, v.replied_at, v.bounced_at, v.error_code, 0, now(), v.updated_at
       from json_to_recordset(?::json) as v(id uuid, enrollment_id uuid, lead_id uuid, step_id uuid, step_position int, state text, executed_at timestamptz, opened_at timestamptz,
            accepted_at timestamptz, replied_at timestamptz, bounced_at timestamptz, error_code text, updated_at timestamptz)`,
    [workspaceId, campaign.id, JSON.stringify(acts)],
  );
  // An enrollment's replied_at is its lead's first reply, as reply routing records it.
  await e.execute(
    `update enrollments e set replied_at = r.first from (select enrollment_id, min(replied_at) as first from scheduled_actions where campaign_id = ? and replied_at is not null group by 1) r
      where e.id = r.enrollment_id`,
    [campaign.id],
  );
  return {
    listId,
    leads: rows.map((r) => r.lead),
    contacts: rows.map((r) => r.contact),
    enrollments: rows.map((r) => r.enrollment),
    actions: acts.map((a) => a.id),
  };
}

export async function seedAgent(workspaceId: string, appId: string, status = 'active'): Promise<string> {
  const id = uuidv7();
  await (
    await em()
  ).execute(
    `insert into discovery_agents (id, workspace_id, app_id, name, status, created_at, updated_at) values (?, ?, ?, 'Analytics agent', ?, now(), now())`,
    [id, workspaceId, appId, status],
  );
  return id;
}

export interface DiscoveredSpec {
  signal: string;
  source: string;
  at: Date;
  status?: 'new' | 'approved' | 'rejected';
  reviewedAt?: Date;
}

export async function seedDiscovered(workspaceId: string, appId: string, agentId: string, specs: DiscoveredSpec[]) {
  const rows = specs.map((s, i) => ({
    id: uuidv7(),
    signal_key: s.signal,
    source: s.source,
    created_at: s.at,
    status: s.status ?? 'new',
    reviewed_at: s.reviewedAt ?? (s.status && s.status !== 'new' ? s.at : null),
    key: `k-${i}-${uuidv7()}`,
  }));
  await (
    await em()
  ).execute(
    `insert into discovered_leads (id, workspace_id, app_id, agent_id, signal_key, evidence_key, source, external_id, dedupe_key, full_name, evidence, score, reasons, status, reviewed_at, created_at, updated_at)
     select v.id, ?, ?, ?, v.signal_key, v.key, v.source, v.key, v.key, 'Found Person', '{}', 50, '[]', v.status, v.reviewed_at, v.created_at, v.created_at
       from json_to_recordset(?::json) as v(id uuid, signal_key text, source text, created_at timestamptz, status text, reviewed_at timestamptz, key text)`,
    [workspaceId, appId, agentId, JSON.stringify(rows)],
  );
}

export async function seedMeeting(workspaceId: string, leadId: string, contactId: string, createdAt: Date) {
  await (
    await em()
  ).execute(
    `insert into meetings (id, workspace_id, lead_id, contact_id, title, starts_at, ends_at, status, source, created_at, updated_at)
     values (?, ?, ?, ?, 'Intro call', ?, ?, 'scheduled', 'manual', ?, ?)`,
    [
      uuidv7(),
      workspaceId,
      leadId,
      contactId,
      new Date(createdAt.getTime() + 86_400_000),
      new Date(createdAt.getTime() + 86_400_000 + 1_800_000),
      createdAt,
      createdAt,
    ],
  );
}

/** The local calendar day of `at` in `tz` (YYYY-MM-DD). */
export const localDay = (at: Date, tz: string) =>
  new Intl.DateTimeFormat('en-CA', { timeZone: tz, year: 'numeric', month: '2-digit', day: '2-digit' }).format(at);
