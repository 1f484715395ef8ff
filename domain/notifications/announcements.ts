// Announcements (docs/notifications.md): product news that support staff publish with the admin CLI
// (`npm run admin -- announce | announcements | unpublish`), shown in the app.
//
// A user sees an announcement while it is live — published (not unpublished), `starts_at <= now <
// ends_at` (no end: until unpublished) — when its audience includes the effective plan of the
// workspace they act in (domain/billing/plans.ts `entitlementsFor`; no audience = every plan), until they
// dismiss it. Dismissal and the call-to-action click are per user and recorded once each (the first
// time stays). An announcement the user cannot see (unknown, unpublished, not started, ended, for
// other plans) is 404 on every route; a dismissed one can still be clicked through and dismissed again.
import type { EntityManager } from '@mikro-orm/postgresql';
import { uuidv7 } from '../../lib/ids.js';
import { keysetSql, type PageRequest } from '../../lib/pagination.js';
import { AppError, notFound } from '../errors.js';
import type { Actor } from '../identity.js';
import { PLAN_IDS, entitlementsFor, isPlanId, type PlanId } from '../billing/plans.js';

export const ANNOUNCEMENT_TITLE_MAX = 200;
export const ANNOUNCEMENT_BODY_MAX = 5000;
export const CTA_LABEL_MAX = 60;
export const CTA_URL_MAX = 2048;

export interface AnnouncementRow {
  id: string;
  title: string;
  body: string;
  cta_label: string | null;
  cta_url: string | null;
  plans: PlanId[] | null;
  starts_at: Date;
  ends_at: Date | null;
  created_at: Date;
  /** The caller's receipt (null when they have none). */
  dismissed_at: Date | null;
  cta_clicked_at: Date | null;
}

const COLUMNS = `a.id, a.title, a.body, a.cta_label, a.cta_url, a.plans, a.starts_at, a.ends_at, a.created_at, r.dismissed_at, r.cta_clicked_at`;
const LIVE = `a.unpublished_at is null and a.starts_at <= now() and (a.ends_at is null or a.ends_at > now()) and (a.plans is null or a.plans @> jsonb_build_array(?::text))`;

async function planOf(em: EntityManager, actor: Actor): Promise<PlanId> {
  return (await entitlementsFor(em, actor.workspaceId)).plan.id;
}

/** The live announcements for the caller that they have not dismissed, newest published first. */
export async function listForUser(em: EntityManager, actor: Actor, page: PageRequest): Promise<AnnouncementRow[]> {
  const params: unknown[] = [actor.userId, await planOf(em, actor)];
  const sql = `select ${COLUMNS} from announcements a left join announcement_receipts r on r.announcement_id = a.id and r.user_id = ?
              where ${LIVE} and r.dismissed_at is null`;
  const k = keysetSql(page, 'a.id', 'desc');
  return em.execute<AnnouncementRow[]>(sql + k.sql, [...params, ...k.params]);
}

/** A live announcement for the caller's plan, dismissed or not: 404 otherwise. */
async function visible(em: EntityManager, actor: Actor, id: string): Promise<AnnouncementRow> {
  const [row] = await em.execute<AnnouncementRow[]>(
    `select ${COLUMNS} from announcements a left join announcement_receipts r on r.announcement_id = a.id and r.user_id = ? where ${LIVE} and a.id = ?`,
    [actor.userId, await planOf(em, actor), id],
  );
  if (!row) throw notFound('announcement');
  return row;
}

/** Dismisses an announcement for the caller (idempotent: the first dismissal's time stays). */
export async function dismiss(
  em: EntityManager,
  actor: Actor,
  id: string,
): Promise<{ id: string; dismissed_at: Date; already: boolean }> {
  await visible(em, actor, id);
  const [set] = await em.execute<{ dismissed_at: Date }[]>(
    `insert into announcement_receipts (announcement_id, user_id, dismissed_at) values (?, ?, now())
     on conflict (announcement_id, user_id) do update set dismissed_at = now() where announcement_receipts.dismissed_at is null
     returning dismissed_at`,
    [id, actor.userId],
  );
  if (set) return { id, dismissed_at: set.dismissed_at, already: false };
  const [r] = await em.execute<{ dismissed_at: Date }[]>(
    `select dismissed_at from announcement_receipts where announcement_id = ? and user_id = ?`,
    [id, actor.userId],
  );
  return { id, dismissed_at: r.dismissed_at, already: true };
}

/**
 * Records that the caller followed the call to action, once: a second click records nothing
 * (`recorded: false`, the first click's time). 409 `no_call_to_action` for an announcement without one.
 */
export async function clickCta(
  em: EntityManager,
  actor: Actor,
  id: string,
): Promise<{ id: string; recorded: boolean; clicked_at: Date; cta_url: string }> {
  const a = await visible(em, actor, id);
  if (!a.cta_url) throw new AppError(409, 'no_call_to_action', 'this announcement has no call to action');
  const [set] = await em.execute<{ cta_clicked_at: Date }[]>(
    `insert into announcement_receipts (announcement_id, user_id, cta_clicked_at) values (?, ?, now())
     on conflict (announcement_id, user_id) do update set cta_clicked_at = now() where announcement_receipts.cta_clicked_at is null
     returning cta_clicked_at`,
    [id, actor.userId],
  );
  if (set) return { id, recorded: true, clicked_at: set.cta_clicked_at, cta_url: a.cta_url };
  const [r] = await em.execute<{ cta_clicked_at: Date }[]>(
    `select cta_clicked_at from announcement_receipts where announcement_id = ? and user_id = ?`,
    [id, actor.userId],
  );
  return { id, recorded: false, clicked_at: r.cta_clicked_at, cta_url: a.cta_url };
}

// ---- Support staff (the admin CLI) ----------------------------------------------------------

export interface NewAnnouncement {
  title: string;
  body: string;
  ctaLabel?: string | null;
  ctaUrl?: string | null;
  /** Plan ids; null or empty = every plan. */
  plans?: string[] | null;
  startsAt?: Date;
  endsAt?: Date | null;
  createdBy?: string | null;
}

/** A problem with what support staff asked for (the CLI prints it and exits 1). */
export class AnnouncementInputError extends Error {}

const codePoints = (s: string) => [...s].length;

/** Checks and stores an announcement; returns its id. */
export async function publishAnnouncement(
  em: EntityManager,
  input: NewAnnouncement,
  now = new Date(),
): Promise<string> {
  const bad = (m: string): never => {
    throw new AnnouncementInputError(m);
  };
  const title = input.title.trim();
  const body = input.body.trim();
  if (!title || codePoints(title) > ANNOUNCEMENT_TITLE_MAX)
    bad(`the title must have 1 to ${ANNOUNCEMENT_TITLE_MAX} characters`);
  if (!body || codePoints(body) > ANNOUNCEMENT_BODY_MAX)
    bad(`the body must have 1 to ${ANNOUNCEMENT_BODY_MAX} characters`);
  if ([title, body, input.ctaLabel ?? '', input.ctaUrl ?? ''].some((s) => s.includes('\u0000')))
    bad('no NUL characters');
  const label = input.ctaLabel?.trim() || null;
  const url = input.ctaUrl?.trim() || null;
  if (!!label !== !!url) bad('a call to action needs both a label and a URL');
  if (label && codePoints(label) > CTA_LABEL_MAX)
    bad(`the call-to-action label has at most ${CTA_LABEL_MAX} characters`);
  if (url) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(url);
    } catch {
      bad(`"${url}" is not a URL`);
    }
    if (
      parsed!.protocol !== 'https:' &&
      !(parsed!.protocol === 'http:' && ['localhost', '127.0.0.1'].includes(parsed!.hostname))
    )
      bad('the call-to-action URL must be https');
    if (parsed!.username || parsed!.password) bad('the call-to-action URL must not carry credentials');
    if (url.length > CTA_URL_MAX) bad(`the call-to-action URL has at most ${CTA_URL_MAX} characters`);
  }
  const plans = input.plans?.length ? [...new Set(input.plans)] : null;
  for (const p of plans ?? []) if (!isPlanId(p)) bad(`unknown plan "${p}"; plans: ${PLAN_IDS.join(', ')}`);
  const startsAt = input.startsAt ?? now;
  const endsAt = input.endsAt ?? null;
  if (Number.isNaN(startsAt.getTime()) || (endsAt && Number.isNaN(endsAt.getTime()))) bad('times must be ISO 8601');
  if (endsAt && endsAt <= startsAt) bad('ends_at must be after starts_at');
  if (endsAt && endsAt <= now) bad('ends_at is in the past: nobody would see it');
  const id = uuidv7();
  await em.execute(
    `insert into announcements (id, title, body, cta_label, cta_url, plans, starts_at, ends_at, created_by, created_at) values (?, ?, ?, ?, ?, ?::jsonb, ?, ?, ?, now())`,
    [
      id,
      title,
      body,
      label,
      url,
      plans ? JSON.stringify(plans) : null,
      startsAt,
      endsAt,
      input.createdBy?.slice(0, 200) ?? null,
    ],
  );
  return id;
}

export interface AnnouncementSummary {
  id: string;
  title: string;
  status: 'scheduled' | 'live' | 'ended' | 'unpublished';
  plans: string[] | null;
  starts_at: Date;
  ends_at: Date | null;
  cta_label: string | null;
  cta_url: string | null;
  created_by: string | null;
  dismissals: number;
  cta_clicks: number;
}

/** Announcements for support staff, newest first, with their status and counts; `all` includes ended and unpublished ones. */
export async function listForStaff(
  em: EntityManager,
  opts: { all?: boolean; limit?: number } = {},
): Promise<AnnouncementSummary[]> {
  return em.execute<AnnouncementSummary[]>(
    `select a.id, a.title, a.plans, a.starts_at, a.ends_at, a.cta_label, a.cta_url, a.created_by,
            case when a.unpublished_at is not null then 'unpublished' when a.starts_at > now() then 'scheduled'
                 when a.ends_at is not null and a.ends_at <= now() then 'ended' else 'live' end as status,
            (select count(*)::int from announcement_receipts r where r.announcement_id = a.id and r.dismissed_at is not null) as dismissals,
            (select count(*)::int from announcement_receipts r where r.announcement_id = a.id and r.cta_clicked_at is not null) as cta_clicks
       from announcements a
      ${opts.all ? '' : 'where a.unpublished_at is null and (a.ends_at is null or a.ends_at > now())'}
      order by a.id desc limit ?`,
    [opts.limit ?? 100],
  );
}

/** Takes an announcement down at once (idempotent); null for an unknown id. */
export async function unpublishAnnouncement(
  em: EntityManager,
  id: string,
): Promise<{ title: string; already: boolean } | null> {
  const [set] = await em.execute<{ title: string }[]>(
    `update announcements set unpublished_at = now() where id = ? and unpublished_at is null returning title`,
    [id],
  );
  if (set) return { title: set.title, already: false };
  const [r] = await em.execute<{ title: string }[]>(`select title from announcements where id = ?`, [id]);
  return r ? { title: r.title, already: true } : null;
}
