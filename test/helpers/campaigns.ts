// Campaigns, steps and their version snapshot written directly (the campaign routes are another
// issue's), sender accounts tuned for fast tests, and leads to enroll.
import { randomUUID } from 'node:crypto';
import { temporalJobs } from '../../jobs/temporal.js';
import { enrollLeads } from '../../domain/enrollments/enrollments.js';
import type { Jobs } from '../../domain/jobs.js';
import { resolveActor } from '../../domain/workspaces.js';
import { uuidv7 } from '../../lib/ids.js';
import { enrollmentWorkflowIds } from '../../lib/workflow-ids.js';
import { api, call, createTestApp, type TestUser } from './api.js';
import { createOwner, em, workspaceIdOf } from './billing.js';
import { seedContacts } from './contacts.js';
import { createMailbox, mailCredentials, uniqueAddress } from './mail-server.js';

export const ALL_WEEK = Object.fromEntries(
  ['1', '2', '3', '4', '5', '6', '7'].map((d) => [d, [{ start: '00:00', end: '24:00' }]]),
);

export interface StepSpec {
  type: string;
  config?: Record<string, unknown>;
  messageMode?: string | null;
}

export interface CampaignSpec {
  appId: string;
  accountIds: string[];
  steps: StepSpec[];
  status?: string;
  reviewRequired?: boolean;
  stopOnReply?: boolean;
  dailyNewLeadCap?: number | null;
  windows?: Record<string, { start: string; end: string }[]>;
  timeZone?: string;
  rotation?: string;
  countryRule?: { mode: 'allow' | 'block'; countries: string[] } | null;
  exclusiveLeads?: boolean;
}

/** Inserts the campaign, its steps and version 1 of them; returns the ids. */
export async function seedCampaign(workspaceId: string, s: CampaignSpec): Promise<{ id: string; stepIds: string[] }> {
  const e = await em();
  const id = uuidv7();
  await e.execute(
    `insert into campaigns (id, workspace_id, app_id, name, status, time_zone, sending_windows, account_ids, rotation, daily_new_lead_cap, stop_on_reply, country_rule,
       review_required, message_mode, exclusive_leads, step_version, created_at, updated_at)
     values (?, ?, ?, ?, ?, ?, ?::jsonb, ?::jsonb, ?, ?, ?, ?::jsonb, ?, 'template', ?, 1, now(), now())`,
    [
      id,
      workspaceId,
      s.appId,
      `Campaign ${id.slice(-6)}`,
      s.status ?? 'active',
      s.timeZone ?? 'Europe/Paris',
      JSON.stringify(s.windows ?? ALL_WEEK),
      JSON.stringify(s.accountIds),
      s.rotation ?? 'round_robin',
      s.dailyNewLeadCap ?? null,
      s.stopOnReply ?? true,
      s.countryRule ? JSON.stringify(s.countryRule) : null,
      s.reviewRequired ?? false,
      s.exclusiveLeads ?? false,
    ],
  );
  const steps = s.steps.map((st, i) => ({
    id: uuidv7(),
    position: i,
    type: st.type,
    config: st.config ?? {},
    messageMode: st.messageMode ?? null,
    hasAttachment: false,
  }));
  for (const st of steps) {
    await e.execute(
      `insert into campaign_steps (id, campaign_id, position, type, config, message_mode, created_at, updated_at) values (?, ?, ?, ?, ?::jsonb, ?, now(), now())`,
      [st.id, id, st.position, st.type, JSON.stringify(st.config), st.messageMode],
    );
  }
  await e.execute(
    `insert into campaign_step_versions (campaign_id, version, steps, created_at) values (?, 1, ?::jsonb, now())`,
    [id, JSON.stringify(steps)],
  );
  return { id, stepIds: steps.map((x) => x.id) };
}

/** Writes version `version` of the campaign's steps (an edit) and makes it current. */
export async function seedVersion(
  campaignId: string,
  version: number,
  steps: (StepSpec & { id?: string })[],
): Promise<string[]> {
  const e = await em();
  const rows = steps.map((st, i) => ({
    id: st.id ?? uuidv7(),
    position: i,
    type: st.type,
    config: st.config ?? {},
    messageMode: st.messageMode ?? null,
    hasAttachment: false,
  }));
  await e.execute(
    `insert into campaign_step_versions (campaign_id, version, steps, created_at) values (?, ?, ?::jsonb, now())`,
    [campaignId, version, JSON.stringify(rows)],
  );
  await e.execute(`update campaigns set step_version = ? where id = ?`, [version, campaignId]);
  return rows.map((r) => r.id);
}

/** A sender account connected to a fresh mailbox of the test mail server, tuned like fastAccount (no gap, no warm-up, all hours). */
export async function mailAccount(u: TestUser): Promise<{ id: string; address: string }> {
  const address = await createMailbox(uniqueAddress('sender'), 'sender-pw');
  const a = (
    await call('POST', '/api/platform-accounts', {
      token: u.accessToken,
      body: { channel: 'email', display_name: 'Ana Sender', time_zone: 'Europe/Paris' },
    })
  ).body;
  const c = await call('POST', `/api/platform-accounts/${a.id}/connect`, {
    token: u.accessToken,
    body: { credentials: mailCredentials(address, 'sender-pw') },
  });
  if (c.status !== 200) throw new Error(`connect failed: ${c.status} ${c.text}`);
  await (
    await em()
  ).execute(
    `update platform_accounts set min_gap_seconds = 0, jitter_seconds = 0, warmup_skipped_at = now(), working_hours = '{"days":[1,2,3,4,5,6,7],"start":"00:00","end":"24:00"}'::jsonb where id = ?`,
    [a.id],
  );
  return { id: a.id as string, address };
}

/** A connected sender account with no gap, no warm-up and hours all week (then `tune` what a test needs). */
export async function fastAccount(u: TestUser, channel: 'email' | 'network', tune: Record<string, unknown> = {}) {
  const a = (
    await call('POST', '/api/platform-accounts', {
      token: u.accessToken,
      body: { channel, display_name: `Ana ${channel}`, time_zone: 'Europe/Paris' },
    })
  ).body;
  const c = await call('POST', `/api/platform-accounts/${a.id}/connect`, {
    token: u.accessToken,
    body: { credentials: { username: `ana-${randomUUID()}` } },
  });
  if (c.status !== 200) throw new Error(`connect failed: ${c.status} ${c.text}`);
  const t: Record<string, unknown> = { min_gap_seconds: 0, jitter_seconds: 0, ...tune };
  await (
    await em()
  ).execute(
    `update platform_accounts set min_gap_seconds = ?, jitter_seconds = ?, warmup_skipped_at = now(), working_hours = '{"days":[1,2,3,4,5,6,7],"start":"00:00","end":"24:00"}'::jsonb,
       caps = coalesce(?::jsonb, caps) where id = ?`,
    [t.min_gap_seconds, t.jitter_seconds, t.caps ? JSON.stringify(t.caps) : null, a.id],
  );
  return c.body.account as { id: string; connector_account_id: string };
}

/** An owner with a product and a list; `leads` adds leads to it. */
export async function campaignOwner(u: TestUser) {
  const app = await createTestApp(u);
  const workspaceId = await workspaceIdOf(u.id);
  const list = (await call('POST', `/api/apps/${app.id}/lists`, { token: u.accessToken, body: { name: 'Targets' } }))
    .body;
  const leads = async (n: number, extra: Record<string, unknown> = {}) => {
    const contacts = await seedContacts(
      workspaceId,
      Array.from({ length: n }, () => {
        const tag = randomUUID();
        return {
          first_name: 'Grace',
          last_name: 'Hopper',
          company: 'Navy',
          email: `grace-${tag}@example.test`,
          profile_url: `https://pronet.example/in/grace-${tag}`,
          lists: [list.id],
          ...extra,
        };
      }),
    );
    return contacts.map((c) => ({
      leadId: c.leads[list.id],
      contactId: c.id,
      profileUrl: c.profile_url!,
      email: c.email!,
    }));
  };
  return { app, workspaceId, listId: list.id as string, leads };
}

/** Enrolls as the route does (enrollLeads), with workflow starts that shorten the review deadline to `reviewDeadlineMs`. */
export async function enrollWithReviewDeadline(
  u: TestUser,
  campaignId: string,
  leadIds: string[],
  reviewDeadlineMs: number,
) {
  const { services } = await api();
  const taskQueue = process.env.TEMPORAL_TASK_QUEUE!;
  const jobs: Jobs = {
    ...temporalJobs(services.temporal, taskQueue),
    async startEnrollments(starts) {
      for (const s of starts) {
        await services.temporal.workflow.start('enrollment', {
          taskQueue,
          workflowId: enrollmentWorkflowIds.enrollment(s.campaignId, s.leadId),
          args: [
            {
              enrollmentId: s.enrollmentId,
              campaignId: s.campaignId,
              leadId: s.leadId,
              version: s.version,
              reviewDeadlineMs,
            },
          ],
        });
      }
      return { failed: [] };
    },
  };
  const e = services.orm.em.fork();
  const actor = await resolveActor(e as never, { userId: u.id, kind: 'session' }, undefined);
  return enrollLeads(e as never, jobs, actor, campaignId, leadIds, new Set());
}

/** A new owner on the pro plan with a product, a list, a fast sender account on `channel`, and an active campaign of `steps` sending from it. */
export async function campaignWithAccount(channel: 'network' | 'email', steps: StepSpec[]) {
  const u = await createOwner();
  const o = await campaignOwner(u);
  const account = await fastAccount(u, channel);
  const campaign = await seedCampaign(o.workspaceId, { appId: o.app.id, accountIds: [account.id], steps });
  return { u, o, account, campaign };
}
