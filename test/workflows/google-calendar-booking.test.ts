// The `calendar` booking provider over Google Calendar API v3 (issue 46; docs/calendar.md), end to end
// through the public API: the API in this process and a worker process of its own, both configured as
// a deployment would be (BOOKING_CALENDAR_PROVIDER=google with the OAuth client) and pointed at the
// stand-in that speaks Google's documented formats (test/helpers/google-calendar/stand-in.ts).
//
//   two leads in a running sequence → connect the calendar (oauth/start → Google's authorization page
//   → our callback, PKCE) → an event with one lead as attendee → the first sync (a window read) → a
//   meeting on that lead, its enrollment stopped (`meeting_booked`), the other lead's going on →
//   the event moved → the periodic sweep reads the changes with the sync token → the meeting moved →
//   cancelled (deleted, reduced to its id) → the meeting canceled → Google refuses the sync token
//   (410) → the window read again, nothing doubled → the access token expires early → refreshed →
//   the grant revoked → the refresh refused → the provider shows `invalid_credentials` and the sweep
//   leaves it alone
import test from 'ava';
import { randomUUID } from 'node:crypto';
import type { Services } from '../../api/services.js';
import { temporalJobs } from '../../jobs/temporal.js';
import { createBookingProviders, GoogleCalendarProvider } from '../../lib/booking/index.js';
import { calendarSettings, type Config } from '../../lib/config.js';
import { bookingWorkflowIds, enrollmentWorkflowIds } from '../../lib/workflow-ids.js';
import { spawnTsx, stopChild, waitFor } from '../../scripts/children.js';
import { api, call, closeApi, listen } from '../helpers/api.js';
import { createOwner, em } from '../helpers/billing.js';
import { campaignOwner, fastAccount, seedCampaign } from '../helpers/campaigns.js';
import { openAuthorization, startGoogleStandIn } from '../helpers/google-calendar/stand-in.js';
import { startOwnWorker } from '../helpers/own-worker.js';

test.after.always(closeApi);

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const at = (ms: number) => ({ dateTime: new Date(ms).toISOString(), timeZone: 'Europe/Paris' });

test('Google Calendar through the API on a worker of its own: a booked event → a meeting and the sequence stopped; moved, cancelled, 410, revoked', async (t) => {
  t.timeout(240_000);
  const { services } = await api();
  const g = await startGoogleStandIn();
  t.teardown(() => g.close());

  // The process configuration both sides read, from the variables a deployment sets (lib/config.ts).
  const taskQueue = `gcal-booking-${randomUUID()}`;
  const googleEnv = {
    BOOKING_CALENDAR_PROVIDER: 'google',
    BOOKING_CALENDAR_CLIENT_ID: g.clientId,
    BOOKING_CALENDAR_CLIENT_SECRET: g.clientSecret,
    GOOGLE_CALENDAR_BASE_URL: g.calendarBaseUrl,
    GOOGLE_OAUTH_AUTHORIZE_URL: g.authorizeUrl,
    GOOGLE_OAUTH_TOKEN_URL: g.tokenUrl,
  };
  const config: Config = {
    ...services.config,
    booking: { ...services.config.booking, calendar: calendarSettings(googleEnv) },
  };
  const booking = createBookingProviders(config.booking, config.publicBaseUrl);
  t.teardown(() => booking.close());
  t.true(booking.get('calendar') instanceof GoogleCalendarProvider);
  const svc: Services = { ...services, config, booking, jobs: temporalJobs(services.temporal, taskQueue) };
  const { base } = await listen(svc);
  // Our callback is on this server: the URL the OAuth client registers at Google.
  config.publicBaseUrl = base;
  g.redirectUris.push(`${base}/oauth/booking/calendar/callback`);

  const worker = startOwnWorker(t, services.temporal, taskQueue, { ...googleEnv, PUBLIC_BASE_URL: base });

  // ---------------------------------------------------------------------------------------------
  // Two leads in a running sequence: an invitation, then three days' wait, then a message.
  const u = await createOwner();
  const as = (body?: unknown) => ({ base, token: u.accessToken, ...(body === undefined ? {} : { body }) });
  const o = await campaignOwner(u);
  const account = await fastAccount(u, 'network');
  const campaign = await seedCampaign(o.workspaceId, {
    appId: o.app.id,
    accountIds: [account.id],
    steps: [
      { type: 'invitation', config: { note: 'Hi' } },
      { type: 'wait', config: { amount: 72, unit: 'hours' } },
      { type: 'message', config: { body: 'Hello again' } },
    ],
  });
  const [booker, other] = await o.leads(2);
  const enrolled = await call(
    'POST',
    `/api/campaigns/${campaign.id}/leads`,
    as({ lead_ids: [booker.leadId, other.leadId] }),
  );
  t.is(enrolled.status, 200, enrolled.text);
  const actions = async (leadId: string) =>
    (await em()).execute<{ type: string; state: string; error_code: string | null }[]>(
      `select type, state, error_code from scheduled_actions where lead_id = ? order by step_position`,
      [leadId],
    );
  for (const l of [booker, other])
    await waitFor(
      'the invitation sent and the message planned',
      async () => {
        const a = await actions(l.leadId);
        return a.length === 2 && a[0].state === 'executed' && a[1].state === 'planned';
      },
      120_000,
    );
  const enrollmentOf = async (leadId: string) =>
    (
      (await call('GET', `/api/campaigns/${campaign.id}/enrollments`, as())).body.items as {
        id: string;
        lead_id: string;
        status: string;
        stop_reason: string | null;
      }[]
    ).find((e) => e.lead_id === leadId)!;
  t.is((await enrollmentOf(booker.leadId)).status, 'active');

  // ---------------------------------------------------------------------------------------------
  // Connect the calendar: our start → Google's authorization page → our callback.
  const owner = `sales-${randomUUID().slice(0, 8)}@corp.example`;
  g.signIn = owner;
  const start = await call('POST', '/api/booking-providers/calendar/oauth/start', as({ login_hint: owner }));
  t.is(start.status, 200, start.text);
  const authorizeUrl = new URL(start.body.authorization_url);
  t.is(authorizeUrl.origin + authorizeUrl.pathname, g.authorizeUrl);
  t.like(Object.fromEntries(authorizeUrl.searchParams), {
    client_id: g.clientId,
    redirect_uri: `${base}/oauth/booking/calendar/callback`,
    access_type: 'offline',
    prompt: 'consent',
    code_challenge_method: 'S256',
    login_hint: owner,
  });
  const consent = await openAuthorization(start.body.authorization_url);
  t.is(consent.status, 302);
  t.true(consent.location!.startsWith(`${base}/oauth/booking/calendar/callback?`));
  const callback = await fetch(consent.location!);
  const connected = (await callback.json()) as { status: string; booking_provider: { id: string } };
  t.is(callback.status, 200, JSON.stringify(connected));
  t.like(connected, {
    status: 'connected',
    booking_provider: {
      provider: 'calendar',
      auth: 'oauth',
      status: 'connected',
      account: { id: owner, email: owner },
    },
  });
  const providerId = connected.booking_provider.id;
  // Polled, not pushed: no webhook to register.
  const hook = await call('POST', `/api/booking-providers/${providerId}/webhook/register`, as());
  t.is(hook.status, 400);
  t.is(hook.body.error.code, 'webhook_not_supported');

  // ---------------------------------------------------------------------------------------------
  // The booker accepts an invitation for a call in two days; a colleague's meeting is beside it.
  const cal = g.calendar(owner);
  const when = Date.now() + 2 * DAY;
  const event = cal.insert({
    summary: 'Intro call',
    start: at(when),
    end: at(when + 1800_000),
    attendees: [
      { email: owner, self: true, organizer: true, responseStatus: 'accepted' },
      { email: booker.email.toUpperCase(), displayName: 'Grace Hopper', responseStatus: 'accepted' },
    ],
  });
  cal.insert({
    summary: 'Team sync',
    start: at(when),
    end: at(when + HOUR),
    attendees: [{ email: 'colleague@corp.example', responseStatus: 'accepted' }],
  });

  const backfillResult = async (jobId: string) =>
    services.temporal.workflow
      .getHandle(bookingWorkflowIds.backfill(providerId, jobId))
      .result()
      .then(
        (r) => r as { status: string; created: number; updated: number; unchanged: number; bookings: number },
        (err: Error) => ({ status: 'failed', error: err }),
      );
  const eventsReads = (from: number) =>
    g.requests.slice(from).filter((r) => r.path === '/calendar/v3/calendars/primary/events');
  const syncTokenOf = async () =>
    (
      await (
        await em()
      ).execute<{ sync_token: string | null }[]>(`select sync_token from booking_providers where id = ?`, [providerId])
    )[0].sync_token;
  const meetings = async () =>
    (await call('GET', `/api/leads/${booker.leadId}/meetings`, as())).body.items as Record<string, unknown>[];

  // The first sync: the window (90 days back), read in full.
  let mark = g.requests.length;
  const first = await call('POST', `/api/booking-providers/${providerId}/backfill`, as({ client_key: 'first' }));
  t.is(first.status, 202, first.text);
  t.like(await backfillResult(first.body.id), { status: 'completed', created: 1, bookings: 1 });
  const firstReads = eventsReads(mark);
  t.true(firstReads.length >= 1 && firstReads.every((r) => r.query.has('timeMin') && !r.query.has('syncToken')));
  t.truthy(await syncTokenOf(), 'the read’s nextSyncToken is kept');
  const [meeting] = await meetings();
  t.like(meeting, {
    title: 'Intro call',
    status: 'scheduled',
    source: 'booking',
    starts_at: new Date(when).toISOString(),
    ends_at: new Date(when + 1800_000).toISOString(),
  });
  // The booked meeting stopped the booker's sequence (the message is not sent); the other lead's goes on.
  t.like(await enrollmentOf(booker.leadId), { status: 'stopped', stop_reason: 'meeting_booked' });
  t.like(await actions(booker.leadId), [
    { type: 'invitation', state: 'executed' },
    { type: 'message', state: 'canceled', error_code: 'meeting_booked' },
  ]);
  const stoppedRun = services.temporal.workflow.getHandle(enrollmentWorkflowIds.enrollment(campaign.id, booker.leadId));
  await stoppedRun.result();
  t.is((await stoppedRun.describe()).status.name, 'COMPLETED', 'woken and ended, not left waiting three days');
  t.like(
    await enrollmentOf(booker.leadId),
    { status: 'stopped', stop_reason: 'meeting_booked' },
    'kept by the workflow',
  );
  t.is((await enrollmentOf(other.leadId)).status, 'active');
  t.is(
    (await call('GET', '/api/booking-provider-events/unmatched', as())).body.items.length,
    0,
    'the team sync is not ours',
  );

  // ---------------------------------------------------------------------------------------------
  // Moved by a day; the access token meanwhile refused early (refreshed once); the periodic sweep
  // reads the changes with the sync token.
  cal.patch(event.id, { start: at(when + DAY), end: at(when + DAY + 1800_000) });
  g.expireAccessTokens();
  mark = g.requests.length;
  const sweepId = `booking-backfill-sweep-test:${randomUUID()}`;
  const swept = (await services.temporal.workflow.execute('bookingBackfillSweep', {
    taskQueue,
    workflowId: sweepId,
    args: [{ workspaceId: o.workspaceId }],
  })) as { started: number };
  t.is(swept.started, 1);
  const listed = (await call('GET', '/api/booking-providers', as())).body.items[0];
  t.regex(listed.last_backfill.client_key, /^sweep:/);
  t.like(await backfillResult(listed.last_backfill.id), { status: 'completed', updated: 1 });
  const sweepReads = eventsReads(mark);
  t.true(sweepReads.length >= 2 && sweepReads.every((r) => r.query.has('syncToken') && !r.query.has('timeMin')));
  t.deepEqual(
    sweepReads.map((r) => r.status),
    [401, ...Array<number>(sweepReads.length - 1).fill(200)],
    'a 401, then the same read with the refreshed token',
  );
  t.true(
    g.requests
      .slice(mark)
      .some((r) => r.path === '/token' && r.form?.get('grant_type') === 'refresh_token' && r.status === 200),
  );
  t.like((await meetings())[0], {
    id: meeting.id,
    status: 'scheduled',
    starts_at: new Date(when + DAY).toISOString(),
    ends_at: new Date(when + DAY + 1800_000).toISOString(),
  });

  // Cancelled: the incremental read shows only its id; "sync now" (a backfill without since) reads the changes.
  cal.cancel(event.id, { minimal: true });
  const cancelled = await call(
    'POST',
    `/api/booking-providers/${providerId}/backfill`,
    as({ client_key: 'cancelled' }),
  );
  t.like(await backfillResult(cancelled.body.id), { status: 'completed', updated: 1 });
  t.like((await meetings())[0], { id: meeting.id, status: 'canceled' });
  t.is((await meetings()).length, 1, 'the same meeting throughout');

  // Google refuses the sync token (410): it is cleared and the window read again; nothing changes or doubles.
  g.expireSyncTokens(owner);
  const before = await syncTokenOf();
  mark = g.requests.length;
  const resync = await call('POST', `/api/booking-providers/${providerId}/backfill`, as({ client_key: 'resync' }));
  t.like(await backfillResult(resync.body.id), { status: 'completed', created: 0, updated: 0 });
  const resyncReads = eventsReads(mark);
  t.is(resyncReads[0].status, 410);
  t.true(resyncReads[0].query.has('syncToken'));
  t.true(resyncReads.slice(1).every((r) => r.status === 200 && r.query.has('timeMin')));
  const after = await syncTokenOf();
  t.truthy(after);
  t.not(after, before);
  t.like((await meetings())[0], { status: 'canceled' });
  const stored = await (
    await em()
  ).execute<{ n: number }[]>(
    `select count(*)::int as n from booking_provider_events where booking_provider_id = ? group by booking_id, booking_updated_at having count(*) > 1`,
    [providerId],
  );
  t.deepEqual(stored, [], 'no version stored twice');

  // ---------------------------------------------------------------------------------------------
  // The user removes our access at Google: the next call is refused, the refresh too (invalid_grant).
  g.revoke(owner);
  mark = g.requests.length;
  const revoked = await call('POST', `/api/booking-providers/${providerId}/backfill`, as({ client_key: 'revoked' }));
  t.is(revoked.status, 202);
  t.like(await backfillResult(revoked.body.id), { status: 'failed' });
  t.true(
    g.requests
      .slice(mark)
      .some((r) => r.path === '/token' && r.form?.get('grant_type') === 'refresh_token' && r.status === 400),
  );
  const shown = (await call('GET', '/api/booking-providers', as())).body.items[0];
  t.like(shown, {
    id: providerId,
    status: 'invalid_credentials',
    last_backfill: { client_key: 'revoked', status: 'failed', error: { code: 'provider_refused' } },
  });
  t.regex(shown.status_reason, /revoked or has expired/);
  // Nothing reads it any more until it is connected again.
  const again = (await services.temporal.workflow.execute('bookingBackfillSweep', {
    taskQueue,
    workflowId: `${sweepId}:again`,
    args: [{ workspaceId: o.workspaceId }],
  })) as { started: number };
  t.is(again.started, 0);
  t.is(
    (await call('POST', `/api/booking-providers/${providerId}/backfill`, as({ client_key: 'later' }))).body.error.code,
    'provider_not_connected',
  );
});
