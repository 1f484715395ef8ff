// Backfills of past bookings (docs/meetings.md "Backfill"): an operation row with exact counts and
// the provider's cursor, and the workflow `booking-backfill:<providerId>:<operationId>` whose activity
// reads the provider page by page. Each page is stored and applied in one transaction together with
// its progress (guarded by the cursor), so a retried attempt resumes after the last committed page and
// never counts one twice. A repeat with the same client key, or any request while one runs, returns
// that job.
import type { EntityManager } from '@mikro-orm/postgresql';
import { BookingBackfill, type IBookingBackfill } from '../../db/entities/BookingBackfill.js';
import { BookingConnection, type IBookingConnection } from '../../db/entities/BookingConnection.js';
import { BookingError, type BookingProviderName } from '../../lib/booking/types.js';
import { uuidv7 } from '../../lib/ids.js';
import { storeAndApply, backfillEvent } from './events.js';
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
 * starts nothing new. `workspaceId` limits it to one workspace (tests).
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
    return { done: true, bookings: 0 };
  const c: IBookingConnection = b.bookingProvider.getEntity();
  const provider = deps.providers.get(c.provider as BookingProviderName)!;
  const page = await provider
    .bookings(await usableCredentials(em, deps, c), { since: b.since, cursor: b.cursor ?? null, limit: pageSize })
    .catch(async (err) => {
      if (err instanceof BookingError && err.code === 'auth') await markRefused(em, c, err);
      throw err;
    });
  const counts = { created: 0, updated: 0, unchanged: 0, unmatched: 0 };
  const committed = await em.transactional(async (tx) => {
    const moved = await tx.execute(
      `update booking_backfills set status = 'running', started_at = coalesce(started_at, now()), updated_at = now()
        where id = ? and pages = ? and cursor is not distinct from ? returning id`,
      [b.id, b.pages, b.cursor ?? null],
    );
    if (!moved.length) return false;
    const conn = await tx.findOneOrFail(BookingConnection, { id: c.id });
    for (const booking of page.items) {
      const applied = await storeAndApply(tx as EntityManager, conn, backfillEvent(booking));
      if (!applied || applied.effect === 'stale' || applied.state === 'dismissed' || applied.state === 'superseded')
        counts.unchanged++;
      else if (applied.state === 'unmatched') counts.unmatched++;
      else if (applied.effect === 'created') counts.created++;
      else counts.updated++;
    }
    await tx.execute(
      `update booking_backfills set cursor = ?, pages = pages + 1, bookings = bookings + ?, created = created + ?, updated = updated + ?, unchanged = unchanged + ?,
              unmatched = unmatched + ?, invalid = invalid + ?, updated_at = now() where id = ?`,
      [
        page.cursor,
        page.items.length,
        counts.created,
        counts.updated,
        counts.unchanged,
        counts.unmatched,
        page.invalid,
        b.id,
      ],
    );
    return true;
  });
  return { done: committed && page.cursor === null, bookings: committed ? page.items.length : 0 };
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
