// Meetings with leads (docs/meetings.md): logged by hand or from a booking provider
// (domain/booking/events.ts). Anyone with access to the lead's product reads and records them; a
// meeting that a connected provider manages changes its time, title and status only through the
// provider's events (here only its outcome and notes).
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Contact } from '../../db/entities/Contact.js';
import { Lead } from '../../db/entities/Lead.js';
import { Meeting, type IMeeting, type MeetingOutcome, type MeetingStatus } from '../../db/entities/Meeting.js';
import { Workspace } from '../../db/entities/Workspace.js';
import { keysetBy, type PageRequest } from '../../lib/pagination.js';
import { assertWritable } from '../demo/demo.js';
import { badRequest, conflict, notFound } from '../errors.js';
import type { Actor } from '../identity.js';

/** A meeting lasts at most a day; its start lies within 5 years back and 2 years ahead. */
export const MEETING_LIMITS = { maxDurationMs: 24 * 3_600_000, pastYears: 5, futureYears: 2 };
const YEAR = 365.25 * 86_400_000;

export interface MeetingLead {
  id: string;
  contactId: string;
  appId: string;
}

/** A lead of the actor's workspace (404 otherwise). Who may touch it was checked before: domain/access.ts. */
export async function requireMeetingLead(em: EntityManager, actor: Actor, leadId: string): Promise<MeetingLead> {
  const [lead] = await em.execute<{ id: string; contact_id: string; app_id: string }[]>(
    `select l.id, l.contact_id, ll.app_id from leads l join lead_lists ll on ll.id = l.list_id where l.id = ? and l.workspace_id = ?`,
    [leadId, actor.workspaceId],
  );
  if (!lead) throw notFound('lead');
  return { id: lead.id, contactId: lead.contact_id, appId: lead.app_id };
}

/** A meeting of the actor's workspace (404 otherwise). Who may touch it was checked before: domain/access.ts. */
export async function requireMeeting(
  em: EntityManager,
  actor: Actor,
  id: string,
  opts: { lock?: boolean } = {},
): Promise<IMeeting> {
  const meeting = await em.findOne(
    Meeting,
    { id, workspace: actor.workspaceId },
    opts.lock ? { lockMode: LockMode.PESSIMISTIC_WRITE } : {},
  );
  if (!meeting) throw notFound('meeting');
  return meeting;
}

/** 400 `invalid_time_range` unless the end is after the start, within a day, and the start is within the allowed years. */
export function checkMeetingTimes(startsAt: Date, endsAt: Date, now = new Date()): void {
  const bad = (message: string, path: string) => badRequest('invalid_time_range', message, [{ path, message }]);
  if (endsAt.getTime() <= startsAt.getTime()) throw bad('ends_at must be after starts_at', 'ends_at');
  if (endsAt.getTime() - startsAt.getTime() > MEETING_LIMITS.maxDurationMs)
    throw bad('a meeting lasts at most 24 hours', 'ends_at');
  if (startsAt.getTime() < now.getTime() - MEETING_LIMITS.pastYears * YEAR)
    throw bad(`starts_at is more than ${MEETING_LIMITS.pastYears} years ago`, 'starts_at');
  if (startsAt.getTime() > now.getTime() + MEETING_LIMITS.futureYears * YEAR)
    throw bad(`starts_at is more than ${MEETING_LIMITS.futureYears} years ahead`, 'starts_at');
}

/**
 * Why a meeting cannot have this outcome, or null: an outcome belongs to a scheduled meeting, and
 * `held` / `no_show` only to one that has started.
 */
export function outcomeProblem(
  m: { status: MeetingStatus; startsAt: Date; outcome: MeetingOutcome | null },
  now = new Date(),
): string | null {
  if (m.outcome === null) return null;
  if (m.status !== 'scheduled') return 'a canceled meeting has no outcome';
  if ((m.outcome === 'held' || m.outcome === 'no_show') && m.startsAt.getTime() > now.getTime())
    return `a meeting that has not started cannot be ${m.outcome}`;
  return null;
}

export interface MeetingFilter {
  status?: MeetingStatus;
}

/** The lead's meetings, by start time (then id): keyset pages whose cursor is the last meeting's id. */
export async function listLeadMeetings(
  em: EntityManager,
  actor: Actor,
  leadId: string,
  filter: MeetingFilter,
  page: PageRequest,
): Promise<IMeeting[]> {
  const lead = await requireMeetingLead(em, actor, leadId);
  const after = page.after
    ? await em.findOne(Meeting, { id: page.after, lead: lead.id }, { fields: ['id', 'startsAt'] })
    : null;
  if (page.after && !after) throw badRequest('invalid_cursor', 'the cursor is not a position in this list');
  const k = keysetBy('startsAt', {
    limit: page.limit,
    after: after ? { at: after.startsAt, id: after.id } : undefined,
  });
  return em.find(
    Meeting,
    { lead: lead.id, ...(filter.status ? { status: filter.status } : {}), ...k.where },
    k.options,
  );
}

/** Meetings of the workspace in a time window, soonest first (the Operator's `list_meetings`), in the products the actor may use. */
export async function listWorkspaceMeetings(
  em: EntityManager,
  actor: Actor,
  window: { from: Date; to: Date; status?: MeetingStatus; limit: number },
): Promise<IMeeting[]> {
  const ids = await em.execute<{ id: string }[]>(
    `select m.id from meetings m join leads l on l.id = m.lead_id join lead_lists ll on ll.id = l.list_id
      where m.workspace_id = ? and m.starts_at >= ? and m.starts_at < ? and (?::text is null or m.status = ?)
        and (?::boolean or ll.app_id = any(?::uuid[]))
      order by m.starts_at, m.id limit ?`,
    [
      actor.workspaceId,
      window.from,
      window.to,
      window.status ?? null,
      window.status ?? null,
      actor.allApps,
      `{${actor.appIds.join(',')}}`,
      window.limit,
    ],
  );
  return ids.length
    ? em.find(Meeting, { id: { $in: ids.map((r) => r.id) } }, { orderBy: { startsAt: 'asc', id: 'asc' } })
    : [];
}

export interface NewMeeting {
  title: string;
  startsAt: Date;
  endsAt: Date;
  location?: string | null;
  notes?: string | null;
  /** A past meeting logged with what happened. */
  outcome?: MeetingOutcome | null;
}

/** Logs a meeting by hand (source `manual`, scheduled). 400 `invalid_time_range`, 400 `invalid_outcome`. */
export async function createMeeting(
  em: EntityManager,
  actor: Actor,
  leadId: string,
  input: NewMeeting,
  now = new Date(),
): Promise<IMeeting> {
  assertWritable(actor);
  const lead = await requireMeetingLead(em, actor, leadId);
  checkMeetingTimes(input.startsAt, input.endsAt, now);
  const outcome = input.outcome ?? null;
  const problem = outcomeProblem({ status: 'scheduled', startsAt: input.startsAt, outcome }, now);
  if (problem) throw badRequest('invalid_outcome', problem, [{ path: 'outcome', message: problem }]);
  const meeting = em.create(Meeting, {
    workspace: em.getReference(Workspace, actor.workspaceId),
    lead: em.getReference(Lead, lead.id),
    contact: em.getReference(Contact, lead.contactId),
    title: input.title,
    startsAt: input.startsAt,
    endsAt: input.endsAt,
    status: 'scheduled',
    outcome,
    outcomeAt: outcome ? now : null,
    location: input.location ?? null,
    notes: input.notes ?? null,
    source: 'manual',
    createdByUserId: actor.userId,
  });
  await em.flush();
  return meeting;
}

export interface MeetingPatch {
  title?: string;
  startsAt?: Date;
  endsAt?: Date;
  status?: MeetingStatus;
  outcome?: MeetingOutcome | null;
  location?: string | null;
  notes?: string | null;
}

/** Fields a connected booking provider owns on its meetings. */
const PROVIDER_FIELDS = ['title', 'startsAt', 'endsAt', 'status', 'location'] as const;

/**
 * Changes a meeting; the rules hold for the meeting as it would be after the change (docs/meetings.md
 * "Transitions"): 400 `invalid_time_range`; 409 `invalid_transition` for an outcome the meeting cannot
 * have; 409 `booking_managed` for the time, title, status or location of a meeting a connected
 * provider manages.
 */
export async function updateMeeting(
  em: EntityManager,
  actor: Actor,
  id: string,
  patch: MeetingPatch,
  now = new Date(),
): Promise<IMeeting> {
  assertWritable(actor);
  if (!Object.values(patch).some((v) => v !== undefined))
    throw badRequest('invalid_body', 'give at least one field to change');
  return em.transactional(async (tx) => {
    const meeting = await requireMeeting(tx as EntityManager, actor, id, { lock: true });
    if (meeting.bookingProvider) {
      const owned = PROVIDER_FIELDS.filter((f) => patch[f] !== undefined && !same(patch[f], meeting[f]));
      if (owned.length)
        throw conflict(
          'booking_managed',
          `the booking provider manages ${owned.map(snake).join(', ')} of this meeting: change the booking there`,
        );
    }
    const after = {
      startsAt: patch.startsAt ?? meeting.startsAt,
      endsAt: patch.endsAt ?? meeting.endsAt,
      status: patch.status ?? (meeting.status as MeetingStatus),
      outcome: patch.outcome === undefined ? ((meeting.outcome ?? null) as MeetingOutcome | null) : patch.outcome,
    };
    if (patch.startsAt || patch.endsAt) checkMeetingTimes(after.startsAt, after.endsAt, now);
    const problem = outcomeProblem(after, now);
    if (problem) throw conflict('invalid_transition', problem);
    if (patch.title !== undefined) meeting.title = patch.title;
    if (patch.location !== undefined) meeting.location = patch.location;
    if (patch.notes !== undefined) meeting.notes = patch.notes;
    meeting.startsAt = after.startsAt;
    meeting.endsAt = after.endsAt;
    if (after.status !== meeting.status) {
      meeting.status = after.status;
      meeting.canceledAt = after.status === 'canceled' ? now : null;
    }
    if (after.outcome !== (meeting.outcome ?? null)) {
      meeting.outcome = after.outcome;
      meeting.outcomeAt = after.outcome ? now : null;
    }
    await tx.flush();
    return meeting;
  });
}

const same = (a: unknown, b: unknown) =>
  a instanceof Date && b instanceof Date ? a.getTime() === b.getTime() : (a ?? null) === (b ?? null);
const snake = (f: string) => f.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
