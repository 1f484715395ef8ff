// An A/B test end to end on the local mail server (docs/campaigns.md "A/B variants", docs/tracking.md):
// a campaign made through the API with two variants of its first email, open and click tracking on and
// an automatic winner rule on opens. The prospects' mail arrives through GreenMail; acting as their mail
// clients, the test loads the open pixels of variant A's messages as a person would, and has a
// privacy proxy prefetch and a link scanner click variant B's. The machine events are classified and
// counted apart, the rule picks A, and the leads enrolled afterwards all get A. A second campaign
// checks that a machine open does not satisfy an "opened" condition while a person's does.
import test from 'ava';
import { simpleParser } from 'mailparser';
import { waitFor } from '../../scripts/children.js';
import { api, call, closeApi, type TestUser } from '../helpers/api.js';
import { createOwner, em } from '../helpers/billing.js';
import { campaignOwner, mailAccount } from '../helpers/campaigns.js';
import { uniqueAddress, waitForMail } from '../helpers/mail-server.js';
test.after.always(closeApi);

const as = (u: TestUser, body?: unknown) => ({ token: u.accessToken, ...(body === undefined ? {} : { body }) });
const ALL_WEEK = Object.fromEntries(
  ['1', '2', '3', '4', '5', '6', '7'].map((d) => [d, [{ start: '00:00', end: '24:00' }]]),
);
const BROWSER = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko)';
const GOOGLE_PROXY = 'Mozilla/5.0 (Windows NT 5.1; rv:11.0) Gecko Firefox/11.0 (via ggpht.com GoogleImageProxy)';

/** The message's tracking URLs, moved onto the test API (the worker signs them with its own base URL). */
async function trackingOf(source: string) {
  const m = await simpleParser(source);
  const html = String(m.html || '');
  const base = (await api()).base;
  const onApi = (u: string) => new URL(new URL(u).pathname, base).toString();
  const pixel = /<img src="([^"]+\/open\.gif)"/.exec(html)?.[1];
  const links = [...html.matchAll(/href="([^"]+\/l\/\d+)"/g)].map((x) => x[1]);
  return { subject: m.subject ?? '', pixel: pixel ? onApi(pixel) : null, links: links.map(onApi), text: m.text ?? '' };
}

async function campaignWith(
  u: TestUser,
  appId: string,
  senderId: string,
  steps: unknown[],
  extra: Record<string, unknown> = {},
) {
  const c = await call(
    'POST',
    `/api/apps/${appId}/campaigns`,
    as(u, {
      name: 'A/B test',
      time_zone: 'Europe/Paris',
      sending_windows: ALL_WEEK,
      account_ids: [senderId],
      track_opens: true,
      track_clicks: true,
      ...extra,
    }),
  );
  if (c.status !== 201) throw new Error(c.text);
  const ids: string[] = [];
  for (const s of steps) {
    const r = await call('POST', `/api/campaigns/${c.body.id}/steps`, as(u, s));
    if (r.status !== 201) throw new Error(r.text);
    ids.push(r.body.id);
  }
  const on = await call('PATCH', `/api/campaigns/${c.body.id}/status`, as(u, { status: 'active' }));
  if (on.status !== 200) throw new Error(on.text);
  return { id: c.body.id as string, stepIds: ids };
}

test('an A/B test on the local mail server: two variants sent, machine opens and clicks counted apart, the winner picked by its rule, later sends use it', async (t) => {
  const u = await createOwner();
  const o = await campaignOwner(u);
  const sender = await mailAccount(u);
  const step = {
    type: 'email',
    config: {
      subject: 'Variant A for {{first_name}}',
      body: 'Hi {{first_name}}, see https://example.test/a and https://example.test/pricing',
    },
    variants: [
      { name: 'A' },
      {
        name: 'B',
        config: {
          subject: 'Variant B for {{first_name}}',
          body: 'Hello {{first_name}}, read https://example.test/b and https://example.test/pricing',
        },
      },
    ],
    winner_rule: { metric: 'open_rate', min_sends: 5, confidence: 0.9 },
  };
  const campaign = await campaignWith(u, o.app.id, sender.id, [step]);
  const stepView = (await call('GET', `/api/campaigns/${campaign.id}/steps`, as(u))).body.items[0];
  const [A, B] = stepView.variants.map((v: { id: string }) => v.id);
  const db = await em();
  const variantCount = async () =>
    Object.fromEntries(
      (
        await db.execute<{ variant_id: string; n: number }[]>(
          `select variant_id, count(*)::int as n from scheduled_actions where campaign_id = ? group by 1`,
          [campaign.id],
        )
      ).map((r) => [r.variant_id, r.n]),
    );

  // Enroll prospects until each variant has at least 5 (the split is by a hash of the enrollment).
  const mailboxes: { address: string; leadId: string }[] = [];
  for (let round = 0; round < 6; round++) {
    const counts = await variantCount();
    if ((counts[A] ?? 0) >= 5 && (counts[B] ?? 0) >= 5) break;
    const batch = [0, 1, 2, 3, 4, 5].map(() => ({ address: uniqueAddress('prospect', 'prospect.test') }));
    const leads = await Promise.all(
      batch.map(async (b) => ({ ...b, leadId: (await o.leads(1, { email: b.address }))[0].leadId })),
    );
    const r = await call(
      'POST',
      `/api/campaigns/${campaign.id}/leads`,
      as(u, { lead_ids: leads.map((l) => l.leadId) }),
    );
    t.is(r.status, 200, r.text);
    mailboxes.push(...leads);
    await waitFor(
      'every enrollment planned',
      async () =>
        (
          await db.execute<{ n: number }[]>(`select count(*)::int as n from scheduled_actions where campaign_id = ?`, [
            campaign.id,
          ])
        )[0].n >= mailboxes.length,
      60_000,
    );
  }
  const split = await variantCount();
  t.true(split[A] >= 5 && split[B] >= 5, JSON.stringify(split));

  // Every prospect receives their variant, tracked: a pixel and both body links through the redirect.
  const received: Record<string, Awaited<ReturnType<typeof trackingOf>>> = {};
  for (const m of mailboxes) {
    const [msg] = await waitForMail(m.address, 1, 90_000);
    received[m.address] = await trackingOf(msg.source);
    t.truthy(received[m.address].pixel, 'an open pixel');
    t.is(received[m.address].links.length, 2, 'both body links tracked');
    t.true(received[m.address].text.includes('https://example.test/pricing'), 'the text part keeps the original links');
  }
  const ofVariant = (v: string) =>
    mailboxes.filter((m) => received[m.address].subject.startsWith(`Variant ${v === A ? 'A' : 'B'}`));
  t.is(ofVariant(A).length, split[A]);
  t.is(ofVariant(B).length, split[B]);

  // Variant A's readers open it in a mail client; a click follows its redirect to the original link.
  for (const m of ofVariant(A)) {
    const r = await fetch(received[m.address].pixel!, { headers: { 'user-agent': BROWSER } });
    t.is(r.status, 200);
    t.is(r.headers.get('content-type'), 'image/gif');
  }
  const click = await fetch(received[ofVariant(A)[0].address].links[0], {
    headers: { 'user-agent': BROWSER },
    redirect: 'manual',
  });
  t.is(click.status, 302);
  t.is(click.headers.get('location'), 'https://example.test/a');
  // Variant B's: Gmail's image proxy prefetches one at delivery; a security gateway clicks every link of another at once.
  await fetch(received[ofVariant(B)[0].address].pixel!, { headers: { 'user-agent': GOOGLE_PROXY } });
  for (const l of received[ofVariant(B)[1].address].links)
    await fetch(l, { headers: { 'user-agent': BROWSER }, redirect: 'manual' });

  const view = (await call('GET', `/api/campaigns/${campaign.id}/steps/${stepView.id}/variants`, as(u))).body;
  const va = view.variants.find((v: { id: string }) => v.id === A);
  const vb = view.variants.find((v: { id: string }) => v.id === B);
  t.like(va, { sent: split[A], opened: split[A], opened_machine: 0, clicked: 1, open_rate: 1 });
  t.like(
    vb,
    { sent: split[B], opened: 0, opened_machine: 1, clicked: 0, clicked_machine: 1, open_rate: 0 },
    'machine opens and clicks shown apart, not in the rates',
  );
  t.like(view.test, { winner: A, pending: null, metric: 'open_rate' });

  // The next leads: the plan applies the rule (A wins, recorded once) and every one of them gets A.
  const later = await Promise.all(
    [0, 1, 2].map(async () => {
      const address = uniqueAddress('later', 'prospect.test');
      return { address, leadId: (await o.leads(1, { email: address }))[0].leadId };
    }),
  );
  t.is(
    (await call('POST', `/api/campaigns/${campaign.id}/leads`, as(u, { lead_ids: later.map((l) => l.leadId) }))).status,
    200,
  );
  for (const l of later) {
    const [msg] = await waitForMail(l.address, 1, 90_000);
    t.true((await simpleParser(msg.source)).subject?.startsWith('Variant A'), 'a later send uses the winner');
  }
  const won = (await call('GET', `/api/campaigns/${campaign.id}/steps/${stepView.id}/variants`, as(u))).body;
  t.like(won.winner, { variant_id: A, chosen_by: 'auto' });
  const stats = (await call('GET', `/api/campaigns/${campaign.id}/stats`, as(u))).body;
  t.like(stats.totals, { opened: split[A], opened_machine: 1, clicked: 1, clicked_machine: 1 });
  t.like(
    stats.steps[0].variants.find((v: { variant_id: string }) => v.variant_id === A),
    { name: 'A', is_winner: true, sent: split[A] + 3 },
  );
});

test('an "opened" condition moves on a person’s open only: a proxy prefetch leaves the lead at condition_not_met', async (t) => {
  const u = await createOwner();
  const o = await campaignOwner(u);
  const sender = await mailAccount(u);
  const campaign = await campaignWith(u, o.app.id, sender.id, [
    { type: 'email', config: { subject: 'First', body: 'Hi {{first_name}}' } },
    { type: 'wait', config: { amount: 1, unit: 'minutes' } },
    { type: 'condition', config: { check: 'opened', expect: true } },
    { type: 'email', config: { subject: 'Second', body: 'Following up' } },
  ]);
  // One minute is the shortest wait the API takes; the stored versions' wait becomes 18 s (0.005 h), time
  // for the opens to land before the condition is read.
  await (
    await em()
  ).execute(
    `update campaign_step_versions set steps = (select coalesce(jsonb_agg(case when s->>'type' = 'wait' then jsonb_set(s, '{config}', '{"amount": 0.005, "unit": "hours"}') else s end order by i), '[]')
        from jsonb_array_elements(steps) with ordinality as x(s, i)) where campaign_id = ?`,
    [campaign.id],
  );
  const people = await Promise.all(
    ['reader', 'proxied'].map(async (w) => {
      const address = uniqueAddress(w, 'prospect.test');
      return { address, leadId: (await o.leads(1, { email: address }))[0].leadId };
    }),
  );
  t.is(
    (await call('POST', `/api/campaigns/${campaign.id}/leads`, as(u, { lead_ids: people.map((p) => p.leadId) })))
      .status,
    200,
  );
  const [reader, proxied] = await Promise.all(
    people.map(async (p) => trackingOf((await waitForMail(p.address, 1, 90_000))[0].source)),
  );
  await fetch(reader.pixel!, { headers: { 'user-agent': BROWSER } });
  await fetch(proxied.pixel!, { headers: { 'user-agent': GOOGLE_PROXY } });

  const db = await em();
  const status = async (leadId: string) =>
    (
      await db.execute<{ status: string; stop_reason: string | null }[]>(
        `select status, stop_reason from enrollments where campaign_id = ? and lead_id = ?`,
        [campaign.id, leadId],
      )
    )[0];
  await waitFor(
    'the proxied lead’s condition read',
    async () => (await status(people[1].leadId)).status !== 'active',
    120_000,
  );
  t.like(await status(people[1].leadId), { status: 'completed', stop_reason: 'condition_not_met' });
  const second = await waitForMail(people[0].address, 2, 120_000);
  t.is((await simpleParser(second[1].source)).subject, 'Re: First', 'the reader got the follow-up (in the thread)');
});
