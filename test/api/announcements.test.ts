// Announcements (docs/notifications.md): published by support staff (domain calls here; the CLI in
// test/scripts/admin-announcements.test.ts), seen by audience (the plan of the workspace one acts
// in) and window, until dismissed; dismissal per person and idempotent; the call-to-action click
// recorded once per person; 404 for an announcement the caller cannot see.
import test from 'ava';
import { randomUUID } from 'node:crypto';
import {
  publishAnnouncement,
  unpublishAnnouncement,
  type NewAnnouncement,
} from '../../domain/notifications/announcements.js';
import { uuidv7 } from '../../lib/ids.js';
import { call, closeApi, createUser, type Res, type TestUser } from '../helpers/api.js';
import { createOwner, em, setUserPlan } from '../helpers/billing.js';
import { addTeamMember } from '../helpers/db.js';
test.after.always(closeApi);

const as = (u: TestUser, owner?: TestUser) => ({
  token: u.accessToken,
  headers: (owner ? { 'x-acting-as': owner.id } : {}) as Record<string, string>,
});
/** The caller's live announcements, walked page by page (other tests publish too), as ids. */
async function visibleIds(u: TestUser, owner?: TestUser): Promise<string[]> {
  const out: string[] = [];
  let cursor: string | null = null;
  do {
    const r: Res = await call(
      'GET',
      `/api/me/announcements?limit=200${cursor ? `&cursor=${cursor}` : ''}`,
      as(u, owner),
    );
    if (r.status !== 200) throw new Error(r.text);
    out.push(...r.body.items.map((a: { id: string }) => a.id));
    cursor = r.body.next_cursor;
  } while (cursor);
  return out;
}
const HOUR = 3_600_000;
const publish = async (over: Partial<NewAnnouncement> = {}) =>
  publishAnnouncement(await em(), { title: `News ${randomUUID().slice(0, 8)}`, body: 'Something new.', ...over });

test('audience by plan and window: live ones for the workspace’s plan only; scheduled, ended and unpublished ones are not seen (404 on their routes)', async (t) => {
  const free = await createUser();
  const pro = await createOwner();
  const forAll = await publish({
    title: 'For everyone',
    body: 'Hello all',
    ctaLabel: 'Read more',
    ctaUrl: 'https://example.com/news',
  });
  const forPro = await publish({ title: 'Pro only', body: 'New pro feature', plans: ['pro'] });
  const forFree = await publish({ title: 'Upgrade', body: 'Try pro', plans: ['free', 'starter'] });
  const later = await publish({ title: 'Tomorrow', body: 'Soon', startsAt: new Date(Date.now() + 24 * HOUR) });
  const short = await publish({
    title: 'Short',
    body: 'Brief',
    startsAt: new Date(Date.now() - 2 * HOUR),
    endsAt: new Date(Date.now() + HOUR),
  });
  const gone = await publish({ title: 'Gone', body: 'Taken down' });
  await unpublishAnnouncement(await em(), gone);

  const freeSees = await visibleIds(free);
  const proSees = await visibleIds(pro);
  t.true(freeSees.includes(forAll) && freeSees.includes(forFree) && freeSees.includes(short));
  t.false(freeSees.includes(forPro));
  t.true(proSees.includes(forAll) && proSees.includes(forPro) && proSees.includes(short));
  t.false(proSees.includes(forFree));
  for (const id of [later, gone]) {
    t.false(freeSees.includes(id) || proSees.includes(id));
    t.is((await call('POST', `/api/me/announcements/${id}/dismiss`, as(pro))).status, 404);
    t.is((await call('POST', `/api/me/announcements/${id}/cta-click`, as(pro))).status, 404);
  }
  t.is((await call('POST', `/api/me/announcements/${forPro}/dismiss`, as(free))).status, 404, 'not for the free plan');
  t.is((await call('POST', `/api/me/announcements/${uuidv7()}/dismiss`, as(free))).status, 404);

  const view = (await call('GET', '/api/me/announcements?limit=200', as(free))).body.items.find(
    (a: { id: string }) => a.id === forAll,
  );
  t.like(view, {
    title: 'For everyone',
    body: 'Hello all',
    cta: { label: 'Read more', url: 'https://example.com/news' },
    plans: null,
    ends_at: null,
    cta_clicked_at: null,
  });
  t.like(
    (await call('GET', '/api/me/announcements?limit=200', as(pro))).body.items.find(
      (a: { id: string }) => a.id === forPro,
    ),
    { plans: ['pro'], cta: null },
  );

  // The window ends: the short one disappears; a plan change moves the audience.
  await (await em()).execute(`update announcements set ends_at = now() - interval '1 second' where id = ?`, [short]);
  t.false((await visibleIds(free)).includes(short));
  await setUserPlan(free.id, 'pro');
  const upgraded = await visibleIds(free);
  t.true(upgraded.includes(forPro));
  t.false(upgraded.includes(forFree));
});

test('dismiss is per person and idempotent: the first time stays; a teammate still sees it; acting in a team uses that workspace’s plan', async (t) => {
  const owner = await createOwner(); // pro
  const member = await createUser(); // own workspace: free
  await addTeamMember(owner.id, member.id);
  const id = await publish({ title: 'Pro tip', body: 'Use tasks', plans: ['pro'] });
  t.false((await visibleIds(member)).includes(id), 'the member’s own workspace is on free');
  t.true((await visibleIds(member, owner)).includes(id), 'acting in the pro workspace');

  const d1 = await call('POST', `/api/me/announcements/${id}/dismiss`, as(member, owner));
  t.is(d1.status, 200, d1.text);
  t.like(d1.body, { id, already_dismissed: false });
  const d2 = await call('POST', `/api/me/announcements/${id}/dismiss`, as(member, owner));
  t.like(d2.body, { id, already_dismissed: true, dismissed_at: d1.body.dismissed_at });
  t.false((await visibleIds(member, owner)).includes(id));
  t.true((await visibleIds(owner)).includes(id), 'the owner has not dismissed it');
  t.is(
    (await call('POST', `/api/me/announcements/${id}/dismiss`, as(member))).status,
    404,
    'not for the member’s own plan',
  );
});

test('cta-click is recorded once per person (a second click records nothing and says so); no call to action → 409', async (t) => {
  const u = await createUser();
  const other = await createUser();
  const id = await publish({
    title: 'Webinar',
    body: 'Join us',
    ctaLabel: 'Register',
    ctaUrl: 'https://example.com/webinar',
  });
  const c1 = await call('POST', `/api/me/announcements/${id}/cta-click`, as(u));
  t.is(c1.status, 200, c1.text);
  t.like(c1.body, { id, recorded: true, cta_url: 'https://example.com/webinar' });
  const c2 = await call('POST', `/api/me/announcements/${id}/cta-click`, as(u));
  t.like(c2.body, { id, recorded: false, clicked_at: c1.body.clicked_at });
  t.like((await call('POST', `/api/me/announcements/${id}/cta-click`, as(other))).body, { recorded: true });
  const [counts] = (await (
    await em()
  ).execute(
    `select count(*) filter (where cta_clicked_at is not null)::int as clicks from announcement_receipts where announcement_id = ?`,
    [id],
  )) as { clicks: number }[];
  t.is(counts.clicks, 2);
  // Clicked, then dismissed: the click stays, and it can still be clicked (nothing new recorded).
  t.like(
    (await call('GET', '/api/me/announcements?limit=200', as(u))).body.items.find((a: { id: string }) => a.id === id),
    { cta_clicked_at: c1.body.clicked_at },
  );
  await call('POST', `/api/me/announcements/${id}/dismiss`, as(u));
  t.like((await call('POST', `/api/me/announcements/${id}/cta-click`, as(u))).body, { recorded: false });

  const plain = await publish({ title: 'Plain', body: 'No link' });
  const none = await call('POST', `/api/me/announcements/${plain}/cta-click`, as(u));
  t.is(none.status, 409);
  t.is(none.body.error.code, 'no_call_to_action');
  t.is((await call('POST', '/api/me/announcements/x/cta-click', as(u))).body.error.code, 'invalid_id');
});

test('publishing checks its input: both CTA parts, https, known plans, a window that ends after it starts and in the future', async (t) => {
  const e = await em();
  const bad: Parameters<typeof publishAnnouncement>[1][] = [
    { title: ' ', body: 'x' },
    { title: 'x', body: '' },
    { title: 'x', body: 'y', ctaLabel: 'Go' },
    { title: 'x', body: 'y', ctaUrl: 'https://example.com' },
    { title: 'x', body: 'y', ctaLabel: 'Go', ctaUrl: 'ftp://example.com' },
    { title: 'x', body: 'y', ctaLabel: 'Go', ctaUrl: 'not a url' },
    { title: 'x', body: 'y', plans: ['gold'] },
    { title: 'x', body: 'y', startsAt: new Date(Date.now() + HOUR), endsAt: new Date(Date.now() + HOUR / 2) },
    { title: 'x', body: 'y', startsAt: new Date(Date.now() - 3 * HOUR), endsAt: new Date(Date.now() - HOUR) },
    { title: 'x'.repeat(201), body: 'y' },
  ];
  for (const input of bad)
    await t.throwsAsync(publishAnnouncement(e, input), undefined, JSON.stringify(input).slice(0, 80));
});
