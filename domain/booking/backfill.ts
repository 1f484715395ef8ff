// Backfills of past bookings (docs/meetings.md "Backfill"): an operation row with exact counts and
// the provider's cursor, and the workflow `booking-backfill:<providerId>:<operationId>` whose activity
// reads the provider page by page. Each page is stored and applied in one transaction together with
// its progress (guarded by the cursor), so a retried attempt resumes after the last committed page and
// never counts one twice. A repeat with the same client key, or any request while one runs, returns
// that job.
import type { EntityManager } from '@mikro-orm/postgresql';
import { BookingBackfill, type IBookingBackfill } from '../../db/entities/BookingBackfill.js';
import { BookingConnection, type IBookingConnection } from '../../db/entities/BookingConnection.js';
import {
  BookingError,
  FULL_SYNC_REQUIRED,
  type BookingPage,
  type BookingProvider,
  type BookingProviderName,
} from '../../lib/booking/types.js';
import { uuidv7 } from '../../lib/ids.js';
import { storeAndApply, backfillEvent } from './events.js';
import { calendarEvents } from './calendar-sync.js';
import type { StoppedEnrollment } from './meeting-stops.js';
import { markRefused, onlyManagers, requireConnection, usableCredentials, type BookingDeps } from './providers.js';
import { assertWritable } from '../demo/demo.js';
import { badRequest, conflict } from '../errors.js';
import type { Actor } from '../identity.js';
import type { Jobs } from '../jobs.js';
// The port's input, declared with the port (domain/jobs.ts) so that the port imports no slice.
import type { BookingBackfillStart } from '../jobs.js';
export type { BookingBackfillStart };

export const BACKFILL_DAYS = { default: 90, max: 730 };
const DAY = 86_400_000;

/**
 * The first cursor of a job that reads a calendar's changes since its stored sync token (Google
 * Calendar, docs/calendar.md) rather than the window from `since`: the sweep's jobs and a backfill
 * asked without `since`, once the connection has a token. Never a provider's cursor.
 */
export const FROM_SYNC_TOKEN = 'sync-token';

const startOf = (b: IBookingBackfill): BookingBackfillStart => ({
  backfillId: b.id,
  providerId: b.bookingProvider.id,
  workspaceId: b.workspace.id,
});

/**
 * Starts a backfill of the connection's bookings since `since` (default 90 days back, at most 730;
 * 400 `invalid_since`), or returns the job a repeat names: the same `client_key` (409
 * `client_key_reused` with another `since`), or the one queued or running. 409
 * `provider_not_connected` while the credentials are refused.
 */
export async function startBackfill(
  em: EntityManager,
  jobs: Jobs,
  actor: Actor,
  id: string,
  input: { since?: Date; clientKey?: string },
  now = new Date(),
): Promise<{ backfill: IBookingBackfill; created: boolean }> {
  assertWritable(actor);
  onlyManagers(actor);
  const c = await requireConnection(em, actor, id);
  if (
    input.since &&
    (input.since.getTime() > now.getTime() || input.since.getTime() < now.getTime() - BACKFILL_DAYS.max * DAY)
  ) {
    throw badRequest('invalid_since', `since must be in the past, at most ${BACKFILL_DAYS.max} days back`, [
      { path: 'since', message: 'out of range' },
    ]);
  }
  const since = input.since ?? new Date(now.getTime() - BACKFILL_DAYS.default * DAY);
  const out = await claimBackfill(em, c, {
    since,
    sinceGiven: !!input.since,
    clientKey: input.clientKey ?? null,
    userId: actor.userId,
  });
  // Also for a repeat: a job whose first start failed is started now (the start is idempotent).
  if (out.backfill.status === 'queued' || out.backfill.status === 'running')
    await jobs.start('booking-backfill', startOf(out.backfill));
  return out;
}

/**
 * Under the connection's lock: the job the client key names (409 `client_key_reused` when `since` was
 * given and differs), else the one queued or running, else a new queued one (409
 * `provider_not_connected` while the credentials are refused).
 */
async function claimBackfill(
  em: EntityManager,
  c: IBookingConnection,
  input: { since: Date; sinceGiven: boolean; clientKey: string | null; userId: string },
): Promise<{ backfill: IBookingBackfill; created: boolean }> {
  return em.transactional(async (tx) => {
    await tx.execute('select pg_advisory_xact_lock(hashtext(?))', [`booking-backfill:${c.id}`]);
    if (input.clientKey) {
      const same = await tx.findOne(BookingBackfill, { bookingProvider: c.id, clientKey: input.clientKey });
      if (same) {
        if (input.sinceGiven && same.since.getTime() !== input.since.getTime())
          throw conflict('client_key_reused', 'this client key was used for a backfill with another since');
        return { backfill: same, created: false };
      }
    }
    const open = await tx.findOne(BookingBackfill, { bookingProvider: c.id, status: { $in: ['queued', 'running'] } });
    if (open) return { backfill: open, created: false };
    if (c.status !== 'connected')
      throw conflict('provider_not_connected', 'the provider refused the stored credentials: reconnect it first');
    const backfill = tx.create(BookingBackfill, {
      id: uuidv7(),
      workspace: c.workspace,
      bookingProvider: c,
      clientKey: input.clientKey,
      userId: input.userId,
      since: input.since,
      status: 'queued',
      // A `since` asked for is a window to read again; otherwise a calendar with a token reads its changes.
      cursor: c.syncToken && !input.sinceGiven ? FROM_SYNC_TOKEN : null,
    });
    await tx.flush();
    return { backfill, created: true };
  });
}

/** How far back the periodic sweep reads: bookings that started in the last day, and every upcoming one. */
export const SWEEP_SINCE_MS = DAY;

/**
 * The periodic sweep (`schedule:booking-backfill-sweep`, docs/meetings.md "Backfill"): a backfill from
 * a day back for every connected provider without one queued or running, so a booking whose webhook
 * never came (a provider outage, our downtime) still becomes a meeting. Bookings already imported at
 * that version count `unchanged`; the job is the ordinary one (progress in `last_backfill`), recorded
 * as the workspace owner's with the client key `sweep:<hour>` so a repeated sweep in the same hour
 * starts nothing new. A calendar read with sync tokens (Google Calendar) reads its changes since the
 * last read instead (`FROM_SYNC_TOKEN`): the sweep is its poll. `workspaceId` limits it to one workspace (tests).
 */
export async function sweepBackfills(
  em: EntityManager,
  jobs: Jobs,
  opts: { workspaceId?: string; now?: Date } = {},
): Promise<{ started: number }> {
  const now = opts.now ?? new Date();
  const rows = await em.execute<{ id: string; owner_id: string }[]>(
    `select c.id, w.owner_id from booking_providers c join workspaces w on w.id = c.workspace_id
      where c.status = 'connected' and not w.is_demo and (?::uuid is null or c.workspace_id = ?::uuid)
        and not exists (select 1 from booking_backfills b where b.booking_provider_id = c.id and b.status in ('queued', 'running'))
      order by c.id`,
    [opts.workspaceId ?? null, opts.workspaceId ?? null],
  );
  const clientKey = `sweep:${now.toISOString().slice(0, 13)}`;
  let started = 0;
  for (const r of rows) {
    const c = await em.findOne(BookingConnection, r.id);
    if (!c || c.status !== 'connected') continue; // removed or refused since the select
    // The hour's sweep job or a job already open: claimed, not created, so nothing starts.
    const out = await claimBackfill(em, c, {
      since: new Date(now.getTime() - SWEEP_SINCE_MS),
      sinceGiven: false,
      clientKey,
      userId: r.owner_id,
    });
    if (!out.created) continue;
    await jobs.start('booking-backfill', startOf(out.backfill));
    started++;
  }
  return { started };
}

/** The latest backfill of each connection (for the providers list). */
export async function latestBackfills(
  em: EntityManager,
  connectionIds: string[],
): Promise<Map<string, IBookingBackfill>> {
  if (!connectionIds.length) return new Map();
  const rows = await em.execute<{ id: string }[]>(
    `select distinct on (booking_provider_id) id from booking_backfills where booking_provider_id = any(?::uuid[]) order by booking_provider_id, id desc`,
    [`{${connectionIds.join(',')}}`],
  );
  const found = rows.length ? await em.find(BookingBackfill, { id: { $in: rows.map((r) => r.id) } }) : [];
  return new Map(found.map((b) => [b.bookingProvider.id, b]));
}

export interface BackfillPage {
  /** Nothing left to read (or the job is gone with its connection). */
  done: boolean;
  bookings: number;
  /** Enrollments the page's new meetings stopped (meeting-stops.ts), to wake after the commit. */
  stopped: StoppedEnrollment[];
}

/**
 * A page of the provider, with the connection's credentials: an OAuth token refused before its
 * expiry is refreshed once and the page asked again; a refusal after that (or of the refresh) marks
 * the connection `invalid_credentials`.
 */
async function readPage(
  em: EntityManager,
  deps: BookingDeps,
  c: IBookingConnection,
  provider: BookingProvider,
  page: { since: Date; cursor: string | null; limit: number; syncToken: string | null },
): Promise<BookingPage> {
  let creds = await usableCredentials(em, deps, c);
  for (let attempt = 0; ; attempt++) {
    try {
      return await provider.bookings(creds, page);
    } catch (err) {
      if (!(err instanceof BookingError) || err.code !== 'auth') throw err;
      if (attempt === 0 && creds.kind === 'oauth' && creds.refreshToken) {
        creds = await usableCredentials(em, deps, c, new Date(), { force: true });
        continue;
      }
      await markRefused(em, c, err);
      throw err;
    }
  }
}

/**
 * Reads and applies the next page. The page's events, meetings and progress commit together, and only
 * if the progress is still where this attempt read it (a concurrent attempt's page counts nothing).
 */
export async function backfillNextPage(
  em: EntityManager,
  deps: BookingDeps,
  backfillId: string,
  pageSize: number,
): Promise<BackfillPage> {
  const b = await em.findOne(BookingBackfill, { id: backfillId }, { populate: ['bookingProvider'] });
  if (!b || b.status === 'completed' || b.status === 'failed' || (b.pages > 0 && b.cursor === null))
    return { done: true, bookings: 0, stopped: [] };
  const c: IBookingConnection = b.bookingProvider.getEntity();
  const provider = deps.providers.get(c.provider as BookingProviderName)!;
  const fromToken = b.cursor === FROM_SYNC_TOKEN;
  const cursor = fromToken ? null : (b.cursor ?? null);
  // A read of changes (its first page, or a later one) goes on from the stored token; a window's first page does not.
  const syncToken = provider.calendarSync && (fromToken || cursor !== null) ? (c.syncToken ?? null) : null;
  let page: BookingPage;
  try {
    page = await readPage(em, deps, c, provider, { since: b.since, cursor, limit: pageSize, syncToken });
  } catch (err) {
    if (!(err instanceof BookingError) || err.details.reason !== FULL_SYNC_REQUIRED) throw err;
    // The token was refused (Google's 410): forget it and read the window from `since` again.
    c.syncToken = null;
    await em.flush();
    page = await readPage(em, deps, c, provider, { since: b.since, cursor: null, limit: pageSize, syncToken: null });
  }
  const counts = { created: 0, updated: 0, unchanged: 0, unmatched: 0 };
  const stopped: StoppedEnrollment[] = [];
  let read = 0;
  const committed = await em.transactional(async (tx) => {
    const moved = await tx.execute(
      `update booking_backfills set status = 'running', started_at = coalesce(started_at, now()), updated_at = now()
        where id = ? and pages = ? and cursor is not distinct from ? returning id`,
      [b.id, b.pages, b.cursor ?? null],
    );
    if (!moved.length) return false;
    const conn = await tx.findOneOrFail(BookingConnection, { id: c.id });
    // A calendar's page keeps the events that concern leads (calendar-sync.ts).
    const events = provider.calendarSync
      ? await calendarEvents(tx as EntityManager, conn, page)
      : page.items.map(backfillEvent);
    read = events.length;
    for (const event of events) {
      const applied = await storeAndApply(tx as EntityManager, conn, event);
      if (applied?.stopped) stopped.push(...applied.stopped);
      if (!applied || applied.effect === 'stale' || applied.state === 'dismissed' || applied.state === 'superseded')
        counts.unchanged++;
      else if (applied.state === 'unmatched') counts.unmatched++;
      else if (applied.effect === 'created') counts.created++;
      else counts.updated++;
    }
    // The read's last page: the next read starts from the token it gives (docs/calendar.md).
    if (page.cursor === null && page.nextSyncToken !== undefined)
      await tx.execute(`update booking_providers set sync_token = ? where id = ?`, [page.nextSyncToken, c.id]);
    await tx.execute(
      `update booking_backfills set cursor = ?, pages = pages + 1, bookings = bookings + ?, created = created + ?, updated = updated + ?, unchanged = unchanged + ?,
              unmatched = unmatched + ?, invalid = invalid + ?, updated_at = now() where id = ?`,
      [page.cursor, read, counts.created, counts.updated, counts.unchanged, counts.unmatched, page.invalid, b.id],
    );
    return true;
  });
  return { done: committed && page.cursor === null, bookings: committed ? read : 0, stopped: committed ? stopped : [] };
}

/** Records the job's end (a failure with its reason); returns its counts. */
export async function finishBackfill(
  em: EntityManager,
  backfillId: string,
  status: 'completed' | 'failed',
  error?: { code: string; message: string },
): Promise<IBookingBackfill | null> {
  await em.execute(
    `update booking_backfills set status = ?, error_code = ?, error_message = ?, finished_at = now(), updated_at = now() where id = ? and status in ('queued', 'running')`,
    [status, error?.code ?? null, error?.message.slice(0, 500) ?? null, backfillId],
  );
  return em.fork().findOne(BookingBackfill, { id: backfillId });
}
