// A duplicated campaign works like its original (issue 24): its version-1 snapshot names every copied
// step by id, example generation answers, and a lead enrolled in the copy is sent its first message by
// the executor (real Temporal, sandbox connector, a fast sender account).
import test from 'ava';
import { CampaignStepVersion } from '../../db/entities/CampaignStepVersion.js';
import { ScheduledAction } from '../../db/entities/ScheduledAction.js';
import { waitFor } from '../../scripts/children.js';
import { api, call, closeApi, type TestUser } from '../helpers/api.js';
import { createOwner, em } from '../helpers/billing.js';
import { ALL_WEEK, campaignOwner, fastAccount } from '../helpers/campaigns.js';
test.after.always(closeApi);

const as = (u: TestUser, body?: unknown) => ({ token: u.accessToken, ...(body === undefined ? {} : { body }) });

async function ok<T = any>(
  r: Promise<{ status: number; text: string; body: T }>,
  status: number,
  what: string,
): Promise<T> {
  const res = await r;
  if (res.status !== status) throw new Error(`${what}: ${res.status} ${res.text}`);
  return res.body;
}

async function upload(u: TestUser, campaignId: string, stepId: string, data: Buffer, filename: string, type: string) {
  const { base } = await api();
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(data)], { type }), filename);
  const res = await fetch(`${base}/api/campaigns/${campaignId}/steps/${stepId}/attachment`, {
    method: 'POST',
    headers: { authorization: `Bearer ${u.accessToken}` },
    body: form,
  });
  return { status: res.status, text: await res.text() };
}

test('a duplicate of a three-step campaign with an attachment has a complete snapshot, generates examples and sends to an enrolled lead', async (t) => {
  const u = await createOwner();
  const o = await campaignOwner(u);
  const account = await fastAccount(u, 'email');

  // The original, built through the API: email (with an attachment), wait, email.
  const src = await ok(
    call(
      'POST',
      `/api/apps/${o.app.id}/campaigns`,
      as(u, { name: 'Original', time_zone: 'Europe/Paris', sending_windows: ALL_WEEK, account_ids: [account.id] }),
    ),
    201,
    'create campaign',
  );
  const steps = [
    {
      type: 'email',
      config: {
        subject: 'Hi {{first_name|there}}',
        body: 'Hello {{first_name|there}} at {{company|your company}}, from {{sender_name}}',
      },
    },
    { type: 'wait', config: { amount: 48, unit: 'hours' } },
    { type: 'email', config: { subject: 'Following up', body: 'Any thoughts, {{first_name|there}}?' } },
  ];
  const srcSteps: { id: string }[] = [];
  for (const s of steps)
    srcSteps.push(await ok(call('POST', `/api/campaigns/${src.id}/steps`, as(u, s)), 201, `add ${s.type} step`));
  const up = await upload(u, src.id, srcSteps[0].id, Buffer.from('%PDF-1.4 deck'), 'deck.pdf', 'application/pdf');
  t.is(up.status, 200, up.text);

  const copy = await ok(call('POST', `/api/campaigns/${src.id}/duplicate`, as(u, {})), 201, 'duplicate');
  t.like(copy, { status: 'draft', step_count: 3, step_version: 1 });
  const copySteps: { id: string; type: string; attachment: unknown }[] = (
    await ok(call('GET', `/api/campaigns/${copy.id}/steps`, as(u)), 200, 'list copy steps')
  ).items;
  t.deepEqual(
    copySteps.map((s) => s.type),
    ['email', 'wait', 'email'],
  );
  t.deepEqual(copySteps[0].attachment, { filename: 'deck.pdf', content_type: 'application/pdf', size_bytes: 13 });
  for (const s of copySteps)
    t.false(
      srcSteps.some((x) => x.id === s.id),
      'the copy’s steps have ids of their own',
    );

  // Version 1 of the copy names every step by id, in order, with the attachment flag.
  const version = await (await em()).findOneOrFail(CampaignStepVersion, { campaign: copy.id, version: 1 });
  t.deepEqual(
    version.steps.map((s) => [s.id, s.position, s.type, s.hasAttachment]),
    copySteps.map((s, i) => [s.id, i, s.type, i === 0]),
  );

  // Example messages for the copy's first step (this answered 500 when the snapshot lacked step ids).
  const examples = await call(
    'POST',
    `/api/campaigns/${copy.id}/message-review/examples/generate`,
    as(u, { step_id: copySteps[0].id, count: 1 }),
  );
  t.is(examples.status, 200, examples.text);
  t.is(examples.body.step_id, copySteps[0].id);
  t.is(examples.body.items.length, 1);

  // Activate the copy and enroll a lead through the API: its first email goes out.
  await ok(call('PATCH', `/api/campaigns/${copy.id}/status`, as(u, { status: 'active' })), 200, 'activate copy');
  const [lead] = await o.leads(1);
  const enrolled = await ok(
    call('POST', `/api/campaigns/${copy.id}/leads`, as(u, { lead_ids: [lead.leadId] })),
    200,
    'enroll',
  );
  t.like(enrolled, { enrolled: 1, skipped: 0 });

  const first = async () =>
    (await em()).findOne(ScheduledAction, { campaign: copy.id, leadId: lead.leadId, stepPosition: 0 });
  await waitFor('the copy’s first send executed', async () => (await first())?.state === 'executed', 60_000);
  const action = (await first())!;
  t.like(action, { type: 'email', state: 'executed', stepId: copySteps[0].id });
  const e = await em();
  t.is(
    (await e.execute(`select count(*)::int as n from sandbox_messages where idempotency_key = ?`, [action.id]))[0].n,
    1,
  );
  const enrollment = (
    await e.execute<{ status: string }[]>(`select status from enrollments where campaign_id = ? and lead_id = ?`, [
      copy.id,
      lead.leadId,
    ])
  )[0];
  t.not(enrollment.status, 'failed');
});
