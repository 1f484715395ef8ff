import test from 'ava';
import { App } from '../../db/entities/App.js';
import { Campaign } from '../../db/entities/Campaign.js';
import { CampaignStepAttachment } from '../../db/entities/CampaignStepAttachment.js';
import { CampaignStepVersion } from '../../db/entities/CampaignStepVersion.js';
import { Enrollment } from '../../db/entities/Enrollment.js';
import { Workspace } from '../../db/entities/Workspace.js';
import { DEMO_USER_ID, DEMO_WORKSPACE_ID } from '../../domain/demo/seed.js';
import { addContactToList } from '../../domain/lists/lists.js';
import { ownActor } from '../../domain/workspaces.js';
import { findTool, allTools } from '../../domain/tools/index.js';
import { runTool } from '../../domain/tools/registry.js';
import { resolveActor } from '../../domain/workspaces.js';
import { AppError } from '../../domain/errors.js';
import { api, call, closeApi, createTestApp, createUser, type TestUser } from '../helpers/api.js';
import { createOwner, em } from '../helpers/billing.js';
import { addTeamMember } from '../helpers/db.js';
test.after.always(closeApi);

const as = (u: TestUser, body?: unknown, headers: Record<string, string> = {}) => ({
  token: u.accessToken,
  headers,
  ...(body === undefined ? {} : { body }),
});
const NO_SUCH_ID = '0190f5d2-7c1a-7b3e-9a10-000000000000';

async function campaign(u: TestUser, appId: string, body: Record<string, unknown> = {}) {
  const r = await call(
    'POST',
    `/api/apps/${appId}/campaigns`,
    as(u, { name: `c ${Math.random()}`, time_zone: 'Europe/Berlin', ...body }),
  );
  if (r.status !== 201) throw new Error(`campaign creation failed: ${r.status} ${r.text}`);
  return r.body as { id: string; [k: string]: any };
}

async function step(u: TestUser, campaignId: string, body: Record<string, unknown>) {
  const r = await call('POST', `/api/campaigns/${campaignId}/steps`, as(u, body));
  if (r.status !== 201) throw new Error(`step creation failed: ${r.status} ${r.text}`);
  return r.body as { id: string; position: number; step_version: number; [k: string]: any };
}

const EMAIL = {
  type: 'email',
  config: { subject: 'Hi {{first_name|there}}', body: 'Hello {{first_name}} at {{company|your company}}' },
};
const INVITE = { type: 'invitation', config: { note: 'Hi {{first_name|there}}' } };
const WAIT = { type: 'wait', config: { amount: 2, unit: 'business_days' } };

async function account(u: TestUser, channel: 'email' | 'network', connect = true) {
  const r = await call(
    'POST',
    '/api/platform-accounts',
    as(u, { channel, display_name: `${channel} sender`, time_zone: 'Europe/Berlin' }),
  );
  if (r.status !== 201) throw new Error(`account failed: ${r.status} ${r.text}`);
  if (connect) {
    const c = await call(
      'POST',
      `/api/platform-accounts/${r.body.id}/connect`,
      as(u, { credentials: { email: `s${Math.random()}@acme.example`, password: 'pw-secret-value' } }),
    );
    if (c.status !== 200) throw new Error(`connect failed: ${c.status} ${c.text}`);
  }
  return r.body.id as string;
}

async function upload(
  u: TestUser,
  campaignId: string,
  stepId: string,
  data: Buffer,
  filename = 'deck.pdf',
  type = 'application/pdf',
  headers: Record<string, string> = {},
) {
  const { base } = await api();
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(data)], { type }), filename);
  const res = await fetch(`${base}/api/campaigns/${campaignId}/steps/${stepId}/attachment`, {
    method: 'POST',
    headers: { authorization: `Bearer ${u.accessToken}`, ...headers },
    body: form,
  });
  const text = await res.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: res.status, body, text };
}

test('create: 201 draft with defaults and the canonical time zone; GET one; list by product with status filter and pages', async (t) => {
  const u = await createOwner();
  const app = await createTestApp(u);
  const c = await campaign(u, app.id, { name: '  Q3 CFOs  ', time_zone: 'america/new_york' });
  t.like(c, {
    app_id: app.id,
    name: 'Q3 CFOs',
    status: 'draft',
    time_zone: 'America/New_York',
    rotation: 'round_robin',
    daily_new_lead_cap: null,
    stop_on_reply: true,
    country_rule: null,
    review_required: false,
    message_mode: 'template',
    exclusive_leads: true,
    step_version: 1,
    step_count: 0,
    activated_at: null,
  });
  t.deepEqual(c.sending_windows['1'], [{ start: '09:00', end: '17:00' }]);
  t.is(c.sending_windows['6'], undefined);
  t.deepEqual(c.account_ids, []);
  const acc = await account(u, 'email', false);
  const full = await campaign(u, app.id, {
    sending_windows: { '6': [{ start: '10:00', end: '12:00' }] },
    account_ids: [acc.toUpperCase()],
    rotation: 'sticky',
    daily_new_lead_cap: 25,
    stop_on_reply: false,
    country_rule: { mode: 'block', countries: ['de', 'FR'] },
    review_required: true,
    message_mode: 'ai_review',
    exclusive_leads: false,
  });
  t.like(full, {
    rotation: 'sticky',
    daily_new_lead_cap: 25,
    stop_on_reply: false,
    review_required: true,
    message_mode: 'ai_review',
    exclusive_leads: false,
  });
  t.deepEqual(full.account_ids, [acc]);
  t.deepEqual(full.country_rule, { mode: 'block', countries: ['DE', 'FR'] });
  t.deepEqual(full.sending_windows, { '6': [{ start: '10:00', end: '12:00' }] });

  t.deepEqual((await call('GET', `/api/campaigns/${c.id}`, as(u))).body, c);
  const all = await call('GET', `/api/apps/${app.id}/campaigns`, as(u));
  t.is(all.status, 200);
  t.deepEqual(
    all.body.items.map((x: any) => x.id),
    [c.id, full.id],
  );
  const p1 = await call('GET', `/api/apps/${app.id}/campaigns?limit=1`, as(u));
  t.is(p1.body.items.length, 1);
  const p2 = await call('GET', `/api/apps/${app.id}/campaigns?limit=1&cursor=${p1.body.next_cursor}`, as(u));
  t.deepEqual(
    p2.body.items.map((x: any) => x.id),
    [full.id],
  );
  t.is(p2.body.next_cursor, null);
  await call('PATCH', `/api/campaigns/${full.id}/status`, as(u, { status: 'archived' }));
  t.deepEqual(
    (await call('GET', `/api/apps/${app.id}/campaigns?status=archived`, as(u))).body.items.map((x: any) => x.id),
    [full.id],
  );
  t.deepEqual(
    (await call('GET', `/api/apps/${app.id}/campaigns?status=draft`, as(u))).body.items.map((x: any) => x.id),
    [c.id],
  );
  t.is((await call('GET', `/api/apps/${app.id}/campaigns?status=nope`, as(u))).body.error.code, 'invalid_query');
});

test('create and update validation: time zone, windows, accounts of the workspace, required fields', async (t) => {
  const u = await createOwner();
  const app = await createTestApp(u);
  const base = `/api/apps/${app.id}/campaigns`;
  const missingTz = await call('POST', base, as(u, { name: 'x' }));
  t.is(missingTz.status, 400);
  t.is(missingTz.body.error.code, 'invalid_body');
  const badTz = await call('POST', base, as(u, { name: 'x', time_zone: 'Mars/Olympus' }));
  t.is(badTz.status, 400);
  t.is(badTz.body.error.code, 'invalid_time_zone');
  const badWindow = await call(
    'POST',
    base,
    as(u, { name: 'x', time_zone: 'UTC', sending_windows: { '1': [{ start: '17:00', end: '09:00' }] } }),
  );
  t.is(badWindow.status, 400);
  t.is(badWindow.body.error.code, 'invalid_body');
  t.is((await call('POST', base, as(u, { name: 'x', time_zone: 'UTC', sending_windows: { '8': [] } }))).status, 400);
  const other = await createOwner();
  const foreign = await account(other, 'email', false);
  const badAcc = await call('POST', base, as(u, { name: 'x', time_zone: 'UTC', account_ids: [foreign] }));
  t.is(badAcc.status, 400);
  t.is(badAcc.body.error.code, 'invalid_account');
  t.is(badAcc.body.error.details[0].path, 'account_ids.0');

  const c = await campaign(u, app.id);
  const up = await call(
    'PUT',
    `/api/campaigns/${c.id}`,
    as(u, { name: 'Renamed', daily_new_lead_cap: 10, time_zone: 'asia/tokyo' }),
  );
  t.is(up.status, 200, up.text);
  t.like(up.body, { name: 'Renamed', daily_new_lead_cap: 10, time_zone: 'Asia/Tokyo', step_version: 1 });
  t.like((await call('PUT', `/api/campaigns/${c.id}`, as(u, { daily_new_lead_cap: null }))).body, {
    daily_new_lead_cap: null,
    name: 'Renamed',
  });
  const allDay = await call(
    'PUT',
    `/api/campaigns/${c.id}`,
    as(u, { sending_windows: { '7': [{ start: '00:00', end: '24:00' }] } }),
  );
  t.deepEqual(allDay.body.sending_windows, { '7': [{ start: '00:00', end: '24:00' }] });
  t.is(
    (
      await call(
        'PUT',
        `/api/campaigns/${c.id}`,
        as(u, { sending_windows: { '7': [{ start: '24:00', end: '24:00' }] } }),
      )
    ).status,
    400,
  );
  t.is((await call('PUT', `/api/campaigns/${c.id}`, as(u, {}))).status, 400);
  t.is(
    (await call('PUT', `/api/campaigns/${c.id}`, as(u, { time_zone: 'Nowhere/Town' }))).body.error.code,
    'invalid_time_zone',
  );
  t.is(
    (await call('PUT', `/api/campaigns/${c.id}`, as(u, { account_ids: [foreign] }))).body.error.code,
    'invalid_account',
  );
  await call('PATCH', `/api/campaigns/${c.id}/status`, as(u, { status: 'archived' }));
  const archived = await call('PUT', `/api/campaigns/${c.id}`, as(u, { name: 'again' }));
  t.is(archived.status, 409);
  t.is(archived.body.error.code, 'campaign_archived');
});

test('plan limit: the free plan allows one campaign (archived ones do not count), on create and duplicate', async (t) => {
  const u = await createUser();
  const app = await createTestApp(u);
  const first = await campaign(u, app.id);
  const second = await call('POST', `/api/apps/${app.id}/campaigns`, as(u, { name: 'two', time_zone: 'UTC' }));
  t.is(second.status, 403);
  t.is(second.body.error.code, 'plan_limit_reached');
  const dup = await call('POST', `/api/campaigns/${first.id}/duplicate`, as(u, {}));
  t.is(dup.status, 403);
  t.is(dup.body.error.code, 'plan_limit_reached');
  await call('PATCH', `/api/campaigns/${first.id}/status`, as(u, { status: 'archived' }));
  t.is((await call('POST', `/api/apps/${app.id}/campaigns`, as(u, { name: 'two', time_zone: 'UTC' }))).status, 201);
});

test('status: every documented transition, 409 invalid_transition for the others, and activation refused while preflight finds blockers', async (t) => {
  const u = await createOwner();
  const app = await createTestApp(u);
  const email = await account(u, 'email');
  const ready = async () => {
    const c = await campaign(u, app.id, { account_ids: [email] });
    await step(u, c.id, EMAIL);
    return c.id;
  };
  const patch = (id: string, status: string) => call('PATCH', `/api/campaigns/${id}/status`, as(u, { status }));
  // Valid paths.
  const a = await ready();
  const act = await patch(a, 'active');
  t.is(act.status, 200, act.text);
  t.truthy(act.body.activated_at);
  const paused = await patch(a, 'paused');
  t.like(paused.body, { status: 'paused' });
  t.truthy(paused.body.paused_at);
  const resumed = await patch(a, 'active');
  t.like(resumed.body, { status: 'active', paused_at: null, activated_at: act.body.activated_at });
  t.like((await patch(a, 'completed')).body, { status: 'completed' });
  t.like((await patch(a, 'archived')).body, { status: 'archived' });
  const b = await ready();
  await patch(b, 'active');
  await patch(b, 'paused');
  t.like((await patch(b, 'completed')).body, { status: 'completed' });
  for (const from of ['draft', 'active', 'paused']) {
    const id = await ready();
    if (from !== 'draft') await patch(id, 'active');
    if (from === 'paused') await patch(id, 'paused');
    t.like((await patch(id, 'archived')).body, { status: 'archived' }, from);
  }
  // Invalid ones.
  const invalid: [string, string[]][] = [
    ['draft', ['draft', 'paused', 'completed']],
    ['active', ['active', 'draft']],
    ['paused', ['paused', 'draft']],
    ['completed', ['active', 'paused', 'draft', 'completed']],
    ['archived', ['active', 'paused', 'draft', 'completed', 'archived']],
  ];
  for (const [from, tos] of invalid) {
    const id = await ready();
    const path: Record<string, string[]> = {
      draft: [],
      active: ['active'],
      paused: ['active', 'paused'],
      completed: ['active', 'completed'],
      archived: ['archived'],
    };
    for (const s of path[from]) t.is((await patch(id, s)).status, 200);
    for (const to of tos) {
      const r = await patch(id, to);
      t.is(r.status, 409, `${from} → ${to}`);
      t.is(r.body.error.code, 'invalid_transition');
      t.like(r.body.error.details, { from, to });
    }
  }
  // Preflight blockers refuse activation.
  const empty = await campaign(u, app.id);
  const refused = await patch(empty.id, 'active');
  t.is(refused.status, 409);
  t.is(refused.body.error.code, 'preflight_failed');
  t.deepEqual(refused.body.error.details.blockers.map((b: any) => b.code).sort(), ['no_accounts', 'no_steps']);
  t.is((await call('GET', `/api/campaigns/${empty.id}`, as(u))).body.status, 'draft');
  t.is((await patch(empty.id, 'bogus')).status, 400);
});

test('preflight: blockers and warnings for draft settings and for a stored campaign with overrides', async (t) => {
  const u = await createOwner();
  const app = await createTestApp(u);
  const url = `/api/apps/${app.id}/campaigns/preflight`;
  const nothing = await call('POST', url, as(u, {}));
  t.is(nothing.status, 200, nothing.text);
  t.false(nothing.body.ready);
  t.deepEqual(nothing.body.problems.map((p: any) => p.code).sort(), ['no_accounts', 'no_steps', 'no_time_zone']);

  const email = await account(u, 'email');
  const pending = await account(u, 'network', false);
  const draft = await call(
    'POST',
    url,
    as(u, {
      time_zone: 'Europe/Berlin',
      sending_windows: {},
      account_ids: [email, pending],
      steps: [
        { type: 'condition', config: { check: 'replied', expect: false } },
        EMAIL,
        INVITE,
        { type: 'message', config: { body: 'Hi {{first_name}}, {{nope}}' } },
      ],
    }),
  );
  t.is(draft.status, 200, draft.text);
  const codes = draft.body.problems.map((p: any) => `${p.severity}:${p.code}`).sort();
  t.deepEqual(codes, [
    'blocker:condition_without_send',
    'blocker:invalid_template',
    'blocker:no_connected_account',
    'blocker:window_never_opens',
    'warning:account_not_connected',
    'warning:template_variables',
    'warning:template_variables',
  ]);
  t.like(
    draft.body.problems.find((p: any) => p.code === 'no_connected_account'),
    { details: { channel: 'network' } },
  );
  t.like(
    draft.body.problems.find((p: any) => p.code === 'account_not_connected'),
    { account_id: pending },
  );
  t.deepEqual(draft.body.problems.find((p: any) => p.code === 'template_variables').details.variables, ['first_name']);
  t.is(draft.body.blockers, 4);
  t.is(draft.body.warnings, 3);

  const c = await campaign(u, app.id, { account_ids: [email] });
  await step(u, c.id, EMAIL);
  const stored = await call('POST', url, as(u, { campaign_id: c.id }));
  t.true(stored.body.ready, stored.text);
  t.deepEqual(
    stored.body.problems.map((p: any) => p.code),
    ['template_variables'],
  );
  t.truthy(stored.body.problems[0].step_id);
  const override = await call('POST', url, as(u, { campaign_id: c.id, account_ids: [] }));
  t.false(override.body.ready);
  // Accounts near their caps: use the email account's daily cap up to 80 %.
  const e = await em();
  const caps = (await call('GET', `/api/platform-accounts/${email}/usage`, as(u))).body;
  const daily = (caps.actions ?? caps.usage ?? caps.items).find((x: any) => x.action === 'email').caps.daily;
  await e.getConnection().execute(
    `insert into account_usage (account_id, action, day, count) values (?, 'email', (now() at time zone 'Europe/Berlin')::date, ?)
       on conflict (account_id, action, day) do update set count = excluded.count`,
    [email, daily],
  );
  const near = await call('POST', url, as(u, { campaign_id: c.id }));
  t.true(near.body.ready);
  t.like(
    near.body.problems.find((p: any) => p.code === 'account_near_cap'),
    { severity: 'warning', account_id: email, details: { action: 'email', today: daily } },
  );
  // A campaign of another product of the workspace is not found here; a foreign account is 400.
  const app2 = await createTestApp(u, 'Other');
  t.is((await call('POST', `/api/apps/${app2.id}/campaigns/preflight`, as(u, { campaign_id: c.id }))).status, 404);
  const other = await createOwner();
  t.is(
    (await call('POST', url, as(u, { account_ids: [await account(other, 'email', false)] }))).body.error.code,
    'invalid_account',
  );
  t.is((await call('POST', url, as(u, { time_zone: 'Bad/Zone' }))).body.error.code, 'invalid_time_zone');
});

test('steps: add (append or at a position), list, replace, delete; every change bumps the version and snapshots the whole list', async (t) => {
  const u = await createOwner();
  const app = await createTestApp(u);
  const c = await campaign(u, app.id);
  const s1 = await step(u, c.id, EMAIL);
  t.like(s1, {
    position: 0,
    type: 'email',
    message_mode: null,
    effective_message_mode: 'template',
    attachment: null,
    step_version: 2,
  });
  const s2 = await step(u, c.id, WAIT);
  t.like(s2, { position: 1, effective_message_mode: null, step_version: 3 });
  const s0 = await step(u, c.id, { ...INVITE, position: 0, message_mode: 'ai' });
  t.like(s0, { position: 0, message_mode: 'ai', effective_message_mode: 'ai', step_version: 4 });
  const list = await call('GET', `/api/campaigns/${c.id}/steps`, as(u));
  t.is(list.status, 200);
  t.like(list.body, { campaign_id: c.id, step_version: 4, message_mode: 'template' });
  t.deepEqual(
    list.body.items.map((s: any) => [s.id, s.position]),
    [
      [s0.id, 0],
      [s1.id, 1],
      [s2.id, 2],
    ],
  );
  t.is((await call('GET', `/api/campaigns/${c.id}`, as(u))).body.step_count, 3);

  const replaced = await call(
    'PUT',
    `/api/campaigns/${c.id}/steps/${s2.id}`,
    as(u, { type: 'condition', config: { check: 'accepted', expect: true } }),
  );
  t.is(replaced.status, 200, replaced.text);
  t.like(replaced.body, {
    id: s2.id,
    position: 2,
    type: 'condition',
    config: { check: 'accepted', expect: true },
    step_version: 5,
  });
  const del = await call('DELETE', `/api/campaigns/${c.id}/steps/${s0.id}`, as(u));
  t.deepEqual(del.body, { id: s0.id, deleted: true, step_version: 6 });
  t.deepEqual(
    (await call('GET', `/api/campaigns/${c.id}/steps`, as(u))).body.items.map((s: any) => [s.id, s.position]),
    [
      [s1.id, 0],
      [s2.id, 1],
    ],
  );
  t.is((await call('DELETE', `/api/campaigns/${c.id}/steps/${s0.id}`, as(u))).status, 404);

  const e = await em();
  const versions = await e.find(CampaignStepVersion, { campaign: c.id }, { orderBy: { version: 'asc' } });
  t.deepEqual(
    versions.map((v) => v.version),
    [1, 2, 3, 4, 5, 6],
  );
  t.deepEqual(versions[0].steps, []);
  t.deepEqual(
    versions[3].steps.map((s) => [s.id, s.position, s.type, s.messageMode]),
    [
      [s0.id, 0, 'invitation', 'ai'],
      [s1.id, 1, 'email', null],
      [s2.id, 2, 'wait', null],
    ],
  );
  t.deepEqual(
    versions[5].steps.map((s) => [s.id, s.position, s.type]),
    [
      [s1.id, 0, 'email'],
      [s2.id, 1, 'condition'],
    ],
  );
  t.is((await e.findOneOrFail(Campaign, c.id)).stepVersion, 6);

  // Concurrent edits make consecutive versions.
  await Promise.all(Array.from({ length: 6 }, () => step(u, c.id, WAIT)));
  const after = await (await em()).find(CampaignStepVersion, { campaign: c.id }, { orderBy: { version: 'asc' } });
  t.deepEqual(
    after.map((v) => v.version),
    [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12],
  );
  t.is(after[after.length - 1].steps.length, 8);
});

test('steps: config validation, templates checked on save (400 invalid_template), limits of completed and archived campaigns', async (t) => {
  const u = await createOwner();
  const app = await createTestApp(u);
  const c = await campaign(u, app.id);
  const url = `/api/campaigns/${c.id}/steps`;
  const badTpl = await call(
    'POST',
    url,
    as(u, { type: 'email', config: { subject: 'Hi {{frist_name}}', body: 'Hello {{first_name}' } }),
  );
  t.is(badTpl.status, 400);
  t.is(badTpl.body.error.code, 'invalid_template');
  t.deepEqual(
    badTpl.body.error.details.map((d: any) => [d.path, d.code]),
    [
      ['config.subject', 'unknown_variable'],
      ['config.body', 'unbalanced_braces'],
    ],
  );
  for (const body of [
    { type: 'email', config: { subject: 'x' } },
    { type: 'wait', config: { amount: 0, unit: 'hours' } },
    { type: 'wait', config: { amount: 400, unit: 'business_days' } },
    { type: 'condition', config: { check: 'bounced', expect: true } },
    { type: 'wait', config: { amount: 1, unit: 'hours' }, message_mode: 'ai' },
    { type: 'teleport', config: {} },
    { type: 'invitation', config: { note: 'x'.repeat(301) } },
  ]) {
    const r = await call('POST', url, as(u, body));
    t.is(r.status, 400, JSON.stringify(body));
    t.is(r.body.error.code, 'invalid_body');
  }
  t.is((await call('POST', url, as(u, { type: 'invitation', config: {} }))).status, 201);
  const s = await step(u, c.id, EMAIL);
  const badPut = await call('PUT', `${url}/${s.id}`, as(u, { type: 'message', config: { body: '{{ceo}}' } }));
  t.is(badPut.body.error.code, 'invalid_template');
  t.is((await call('PUT', `${url}/${NO_SUCH_ID}`, as(u, EMAIL))).status, 404);
  t.is((await (await em()).findOneOrFail(Campaign, c.id)).stepVersion, 3, 'refused changes make no version');

  await call('PUT', `/api/campaigns/${c.id}`, as(u, {}));
  const email = await account(u, 'email');
  await call('PUT', `/api/campaigns/${c.id}`, as(u, { account_ids: [email] }));
  await call('DELETE', `${url}/${(await call('GET', url, as(u))).body.items[0].id}`, as(u));
  t.is((await call('PATCH', `/api/campaigns/${c.id}/status`, as(u, { status: 'active' }))).status, 200);
  t.is((await call('POST', url, as(u, WAIT))).status, 201, 'an active campaign’s steps can change (versions)');
  await call('PATCH', `/api/campaigns/${c.id}/status`, as(u, { status: 'completed' }));
  const done = await call('POST', url, as(u, WAIT));
  t.is(done.status, 409);
  t.is(done.body.error.code, 'campaign_completed');
  await call('PATCH', `/api/campaigns/${c.id}/status`, as(u, { status: 'archived' }));
  t.is((await call('PUT', `${url}/${s.id}`, as(u, EMAIL))).body.error.code, 'campaign_archived');
});

test('reorder: the full permutation reorders and bumps the version; missing, unknown and repeated ids are 400 invalid_order', async (t) => {
  const u = await createOwner();
  const app = await createTestApp(u);
  const c = await campaign(u, app.id);
  const a = await step(u, c.id, EMAIL);
  const b = await step(u, c.id, WAIT);
  const d = await step(u, c.id, INVITE);
  const url = `/api/campaigns/${c.id}/steps/reorder`;
  const r = await call('PUT', url, as(u, { step_ids: [d.id, a.id, b.id.toUpperCase()] }));
  t.is(r.status, 200, r.text);
  t.is(r.body.step_version, 5);
  t.deepEqual(
    r.body.items.map((s: any) => [s.id, s.position]),
    [
      [d.id, 0],
      [a.id, 1],
      [b.id, 2],
    ],
  );
  for (const [ids, why] of [
    [[d.id, a.id], 'missing'],
    [[d.id, a.id, b.id, NO_SUCH_ID], 'unknown'],
    [[d.id, a.id, a.id], 'repeated'],
    [[d.id, a.id, b.id, b.id], 'repeated at the end'],
    [[], 'empty'],
  ] as const) {
    const bad = await call('PUT', url, as(u, { step_ids: ids }));
    t.is(bad.status, 400, why);
    t.is(bad.body.error.code, 'invalid_order', why);
    t.true(bad.body.error.details.length > 0);
  }
  t.is((await (await em()).findOneOrFail(Campaign, c.id)).stepVersion, 5);
  t.is((await call('PUT', url, as(u, { step_ids: ['x'] }))).body.error.code, 'invalid_body');
});

test('message mode: campaign-wide (with or without resetting steps) and per step', async (t) => {
  const u = await createOwner();
  const app = await createTestApp(u);
  const c = await campaign(u, app.id);
  const a = await step(u, c.id, EMAIL);
  const w = await step(u, c.id, WAIT);
  const url = `/api/campaigns/${c.id}/steps/message-mode`;
  const one = await call('PUT', url, as(u, { message_mode: 'ai_review', step_id: a.id }));
  t.is(one.status, 200, one.text);
  t.like(one.body, { step_version: 4, message_mode: 'template' });
  t.like(one.body.items[0], { message_mode: 'ai_review', effective_message_mode: 'ai_review' });
  const wide = await call('PUT', url, as(u, { message_mode: 'ai' }));
  t.like(wide.body, { step_version: 5, message_mode: 'ai' });
  t.like(wide.body.items[0], { message_mode: 'ai_review' });
  t.is((await call('GET', `/api/campaigns/${c.id}`, as(u))).body.message_mode, 'ai');
  const reset = await call('PUT', url, as(u, { message_mode: 'template', reset_steps: true }));
  t.like(reset.body, { step_version: 6, message_mode: 'template' });
  t.like(reset.body.items[0], { message_mode: null, effective_message_mode: 'template' });
  const inherit = await call('PUT', url, as(u, { message_mode: 'ai', step_id: a.id }));
  t.like(inherit.body.items[0], { message_mode: 'ai' });
  t.like((await call('PUT', url, as(u, { message_mode: null, step_id: a.id }))).body.items[0], { message_mode: null });
  const wait = await call('PUT', url, as(u, { message_mode: 'ai', step_id: w.id }));
  t.is(wait.status, 400);
  t.is(wait.body.error.code, 'invalid_step');
  t.is((await call('PUT', url, as(u, { message_mode: null }))).body.error.code, 'invalid_body');
  t.is((await call('PUT', url, as(u, { message_mode: 'ai', step_id: NO_SUCH_ID }))).status, 404);
});

test('affected-counts: active and paused enrollments before, on and after the step', async (t) => {
  const u = await createOwner();
  const app = await createTestApp(u);
  const c = await campaign(u, app.id);
  const s0 = await step(u, c.id, INVITE);
  const s1 = await step(u, c.id, WAIT);
  const s2 = await step(u, c.id, EMAIL);
  const list = (await call('POST', `/api/apps/${app.id}/lists`, as(u, { name: 'L' }))).body;
  const e = await em();
  const actor = await ownActor(e, { userId: u.id, kind: 'pat' });
  // position: null (not started), 0, 1, 1, 2, 2 (paused), 1 (completed: not counted), 0 (removed: not counted)
  const states: [number | null, string][] = [
    [null, 'active'],
    [0, 'active'],
    [1, 'active'],
    [1, 'active'],
    [2, 'active'],
    [2, 'paused'],
    [1, 'completed'],
    [0, 'removed'],
  ];
  for (const [i, [pos, status]] of states.entries()) {
    const { lead } = await addContactToList(e, actor, list.id, {
      email: `p${i}-${Math.random()}@example.test`,
      firstName: 'P',
    });
    e.create(Enrollment, {
      workspace: e.getReference(Workspace, actor.workspaceId),
      campaign: c.id,
      lead,
      contact: lead.contact,
      status,
      stepVersion: 4,
      currentPosition: pos,
    } as never);
  }
  await e.flush();
  const counts = async (id: string) =>
    (await call('GET', `/api/campaigns/${c.id}/steps/${id}/affected-counts`, as(u))).body;
  const mid = await counts(s1.id);
  t.like(mid, {
    step_id: s1.id,
    position: 1,
    step_version: 4,
    total: 6,
    before: 2,
    on: 2,
    after: 2,
    by_status: { active: 5, paused: 1 },
  });
  t.deepEqual(mid.rule, { before: 'new_version', on: 'finishes_as_planned', after: 'untouched' });
  t.like(await counts(s0.id), { before: 1, on: 1, after: 4 });
  t.like(await counts(s2.id), { before: 4, on: 2, after: 0 });
  t.is((await call('GET', `/api/campaigns/${c.id}/steps/${NO_SUCH_ID}/affected-counts`, as(u))).status, 404);
  // A step of another campaign is not found under this one.
  const c2 = await campaign(u, app.id);
  t.is((await call('GET', `/api/campaigns/${c2.id}/steps/${s0.id}/affected-counts`, as(u))).status, 404);
});

test('attachments: upload on email and message steps (replacing), size limit 413, delete; refused on other steps', async (t) => {
  const u = await createOwner();
  const app = await createTestApp(u);
  const c = await campaign(u, app.id);
  const s = await step(u, c.id, EMAIL);
  const w = await step(u, c.id, WAIT);
  const r = await upload(u, c.id, s.id, Buffer.from('%PDF-1.4 hello'), '../deck.pdf');
  t.is(r.status, 200, r.text);
  t.deepEqual(r.body.attachment, { filename: 'deck.pdf', content_type: 'application/pdf', size_bytes: 14 });
  t.is(r.body.step_version, 4);
  const again = await upload(u, c.id, s.id, Buffer.from('a,b\n1,2\n'), 'data.csv', 'text/csv');
  t.deepEqual(again.body.attachment, { filename: 'data.csv', content_type: 'text/csv', size_bytes: 8 });
  const e = await em();
  const row = await e.findOneOrFail(CampaignStepAttachment, { step: s.id });
  t.is(Buffer.from(row.data).toString(), 'a,b\n1,2\n');
  const versions = await e.find(CampaignStepVersion, { campaign: c.id }, { orderBy: { version: 'desc' }, limit: 1 });
  t.true(versions[0].steps[0].hasAttachment);

  const big = await upload(u, c.id, s.id, Buffer.alloc(5 * 1024 * 1024 + 1, 1));
  t.is(big.status, 413);
  t.is(big.body.error.code, 'file_too_large');
  t.is((await upload(u, c.id, s.id, Buffer.alloc(0))).body.error.code, 'invalid_file');
  const onWait = await upload(u, c.id, w.id, Buffer.from('x'));
  t.is(onWait.status, 409);
  t.is(onWait.body.error.code, 'attachment_not_supported');
  t.is((await upload(u, c.id, NO_SUCH_ID, Buffer.from('x'))).status, 404);
  // An email step with an attachment cannot become a wait step while it has it.
  t.is(
    (await call('PUT', `/api/campaigns/${c.id}/steps/${s.id}`, as(u, WAIT))).body.error.code,
    'attachment_not_supported',
  );

  // Duplicate copies steps and attachment bytes, in draft, without signal links.
  const dup = await call('POST', `/api/campaigns/${c.id}/duplicate`, as(u, {}));
  t.is(dup.status, 201, dup.text);
  t.like(dup.body, { status: 'draft', step_count: 2, step_version: 1, name: `${c.name} (copy)` });
  const dupSteps = (await call('GET', `/api/campaigns/${dup.body.id}/steps`, as(u))).body.items;
  t.deepEqual(
    dupSteps.map((x: any) => x.type),
    ['email', 'wait'],
  );
  t.not(dupSteps[0].id, s.id);
  t.deepEqual(dupSteps[0].attachment, { filename: 'data.csv', content_type: 'text/csv', size_bytes: 8 });
  t.is(
    Buffer.from((await (await em()).findOneOrFail(CampaignStepAttachment, { step: dupSteps[0].id })).data).toString(),
    'a,b\n1,2\n',
  );
  t.is((await call('POST', `/api/campaigns/${c.id}/duplicate`, as(u, { name: 'Named' }))).body.name, 'Named');

  const del = await call('DELETE', `/api/campaigns/${c.id}/steps/${s.id}/attachment`, as(u));
  t.is(del.status, 200, del.text);
  t.is(del.body.attachment, null);
  t.is(await (await em()).count(CampaignStepAttachment, { step: s.id }), 0);
  t.is((await call('DELETE', `/api/campaigns/${c.id}/steps/${s.id}/attachment`, as(u))).status, 404);
});

test('signals: link signals of agents of the same product, replace, unlink; others are 400 invalid_signal', async (t) => {
  const u = await createOwner();
  const app = await createTestApp(u);
  const c = await campaign(u, app.id);
  const agent = (await call('POST', `/api/apps/${app.id}/agents`, as(u, { name: 'Scout' }))).body;
  const sigs = (
    await call(
      'PUT',
      `/api/agents/${agent.id}/signals`,
      as(u, {
        signals: [
          { kind: 'hiring', name: 'Hiring' },
          { kind: 'funding', name: 'Funding' },
        ],
      }),
    )
  ).body;
  t.is(sigs.length, 2);
  const url = `/api/campaigns/${c.id}/signals`;
  t.deepEqual((await call('GET', url, as(u))).body, { campaign_id: c.id, signals: [] });
  const set = await call('PUT', url, as(u, { signal_ids: [sigs[0].id, sigs[1].id] }));
  t.is(set.status, 200, set.text);
  t.deepEqual(set.body.signals.map((s: any) => s.id).sort(), [sigs[0].id, sigs[1].id].sort());
  t.like(set.body.signals[0], { agent_id: agent.id, agent_name: 'Scout' });
  const one = await call('PUT', url, as(u, { signal_ids: [sigs[1].id] }));
  t.deepEqual(
    one.body.signals.map((s: any) => s.id),
    [sigs[1].id],
  );
  t.deepEqual((await call('GET', url, as(u))).body, one.body);
  // A signal of another product's agent.
  const app2 = await createTestApp(u, 'Other');
  const agent2 = (await call('POST', `/api/apps/${app2.id}/agents`, as(u, { name: 'Other' }))).body;
  const sig2 = (
    await call('PUT', `/api/agents/${agent2.id}/signals`, as(u, { signals: [{ kind: 'hiring', name: 'H' }] }))
  ).body[0];
  const bad = await call('PUT', url, as(u, { signal_ids: [sigs[0].id, sig2.id] }));
  t.is(bad.status, 400);
  t.is(bad.body.error.code, 'invalid_signal');
  t.is(bad.body.error.details[0].path, 'signal_ids.1');
  t.deepEqual(
    (await call('GET', url, as(u))).body.signals.map((s: any) => s.id),
    [sigs[1].id],
  );
  t.deepEqual((await call('PUT', url, as(u, { signal_ids: [] }))).body.signals, []);
  // Archived campaigns keep their links read-only.
  const archivedC = await campaign(u, app.id);
  await call('PATCH', `/api/campaigns/${archivedC.id}/status`, as(u, { status: 'archived' }));
  const ro = await call('PUT', `/api/campaigns/${archivedC.id}/signals`, as(u, { signal_ids: [sigs[0].id] }));
  t.is(ro.status, 409);
  t.is(ro.body.error.code, 'campaign_archived');
  // Duplicated campaigns do not copy links.
  await call('PUT', url, as(u, { signal_ids: [sigs[0].id] }));
  const dup = (await call('POST', `/api/campaigns/${c.id}/duplicate`, as(u, {}))).body;
  t.deepEqual((await call('GET', `/api/campaigns/${dup.id}/signals`, as(u))).body.signals, []);
});

test('ownership: another workspace’s ids are 404 on every id-taking route; a member without the product 403; the Demo 403 demo_read_only', async (t) => {
  const owner = await createOwner();
  const app = await createTestApp(owner);
  const c = await campaign(owner, app.id);
  const s = await step(owner, c.id, EMAIL);
  const routes = (cid: string, sid: string, appId: string): [string, string, unknown][] => [
    ['GET', `/api/apps/${appId}/campaigns`, undefined],
    ['POST', `/api/apps/${appId}/campaigns`, { name: 'x', time_zone: 'UTC' }],
    ['POST', `/api/apps/${appId}/campaigns/preflight`, {}],
    ['GET', `/api/campaigns/${cid}`, undefined],
    ['PUT', `/api/campaigns/${cid}`, { name: 'x' }],
    ['POST', `/api/campaigns/${cid}/duplicate`, {}],
    ['PATCH', `/api/campaigns/${cid}/status`, { status: 'archived' }],
    ['GET', `/api/campaigns/${cid}/signals`, undefined],
    ['PUT', `/api/campaigns/${cid}/signals`, { signal_ids: [] }],
    ['GET', `/api/campaigns/${cid}/steps`, undefined],
    ['POST', `/api/campaigns/${cid}/steps`, WAIT],
    ['PUT', `/api/campaigns/${cid}/steps/reorder`, { step_ids: [sid] }],
    ['PUT', `/api/campaigns/${cid}/steps/message-mode`, { message_mode: 'ai' }],
    ['PUT', `/api/campaigns/${cid}/steps/${sid}`, WAIT],
    ['DELETE', `/api/campaigns/${cid}/steps/${sid}`, undefined],
    ['GET', `/api/campaigns/${cid}/steps/${sid}/affected-counts`, undefined],
    ['DELETE', `/api/campaigns/${cid}/steps/${sid}/attachment`, undefined],
  ];
  const stranger = await createOwner();
  for (const [method, path, body] of routes(c.id, s.id, app.id)) {
    const r = await call(method, path, as(stranger, body));
    t.is(r.status, 404, `${method} ${path}`);
    t.is(r.body.error.code, 'not_found');
  }
  t.is((await upload(stranger, c.id, s.id, Buffer.from('x'))).status, 404);
  // A step id of the stranger's own campaign under the owner's campaign id, and vice versa.
  const sapp = await createTestApp(stranger);
  const sc = await campaign(stranger, sapp.id);
  const ss = await step(stranger, sc.id, EMAIL);
  t.is((await call('PUT', `/api/campaigns/${sc.id}/steps/${s.id}`, as(stranger, WAIT))).status, 404);
  t.is((await call('GET', `/api/campaigns/${c.id}/steps/${ss.id}/affected-counts`, as(owner))).status, 404);

  // A member of the owner's team who was not given the product.
  const member = await createUser();
  const otherApp = await createTestApp(owner, 'Other');
  await addTeamMember(owner.id, member.id, { appIds: [otherApp.id] });
  const acting = { 'x-acting-as': owner.id };
  for (const [method, path, body] of routes(c.id, s.id, app.id)) {
    const r = await call(method, path, as(member, body, acting));
    t.is(r.status, 403, `${method} ${path}`);
    t.is(r.body.error.code, 'not_assigned');
  }
  t.is((await upload(member, c.id, s.id, Buffer.from('x'), 'a.pdf', 'application/pdf', acting)).status, 403);
  t.is((await call('GET', `/api/apps/${otherApp.id}/campaigns`, as(member, undefined, acting))).status, 200);

  // The Demo workspace: reads work, writes are refused.
  const visitor = await createUser();
  await call('POST', '/api/me/workspaces/demo/join', as(visitor));
  const e = await em();
  const demoApp = await e.findOneOrFail(App, { workspace: DEMO_WORKSPACE_ID }, { orderBy: { id: 'asc' } });
  const dc = e.create(Campaign, {
    workspace: e.getReference(Workspace, DEMO_WORKSPACE_ID),
    app: demoApp,
    name: `demo ${Math.random()}`,
    timeZone: 'UTC',
    sendingWindows: {},
  } as never) as { id: string };
  await e.flush();
  t.teardown(async () => void (await (await em()).nativeDelete(Campaign, { id: dc.id })));
  const inDemo = { 'x-acting-as': DEMO_USER_ID };
  t.is((await call('GET', `/api/campaigns/${dc.id}`, as(visitor, undefined, inDemo))).status, 200);
  t.is((await call('GET', `/api/campaigns/${dc.id}/steps`, as(visitor, undefined, inDemo))).status, 200);
  t.is(
    (await call('POST', `/api/apps/${demoApp.id}/campaigns/preflight`, as(visitor, { campaign_id: dc.id }, inDemo)))
      .status,
    200,
  );
  for (const [method, path, body] of routes(dc.id, NO_SUCH_ID, demoApp.id)) {
    if (method === 'GET' || path.endsWith('/preflight')) continue;
    const r = await call(method, path, as(visitor, body, inDemo));
    t.is(r.status, 403, `${method} ${path}`);
    t.is(r.body.error.code, 'demo_read_only');
  }
  t.is(
    (await upload(visitor, dc.id, NO_SUCH_ID, Buffer.from('x'), 'a.pdf', 'application/pdf', inDemo)).body.error.code,
    'demo_read_only',
  );
});

test('Operator tools: campaigns read and change through the domain rules (risks, transitions, ownership)', async (t) => {
  const { services } = await api();
  const u = await createOwner();
  const app = await createTestApp(u);
  const email = await account(u, 'email');
  const e = services.orm.em.fork();
  const ctx = {
    em: e,
    jobs: services.jobs,
    config: services.config,
    providers: services,
    actor: await resolveActor(e as never, { userId: u.id, kind: 'session' }, undefined),
  };
  const names = allTools()
    .filter((x) => x.domain === 'campaigns')
    .map((x) => [x.name, x.risk]);
  t.deepEqual(Object.fromEntries(names), {
    list_campaigns: 'read',
    get_campaign: 'read',
    create_campaign: 'change',
    update_campaign: 'change',
    add_campaign_step: 'change',
    update_campaign_step: 'change',
    get_step_variants: 'read',
    choose_variant_winner: 'change',
    clear_variant_winner: 'change',
    activate_campaign: 'change',
    pause_campaign: 'change',
    resume_campaign: 'change',
  });
  const created = (await runTool(findTool('create_campaign')!, ctx, {
    app_id: app.id,
    name: 'Via tool',
    time_zone: 'Europe/Paris',
    account_ids: [email],
  })) as any;
  t.like(created, { status: 'draft', time_zone: 'Europe/Paris' });
  const refused = await t.throwsAsync(runTool(findTool('activate_campaign')!, ctx, { campaign_id: created.id }));
  t.true(refused instanceof AppError && refused.code === 'preflight_failed');
  const added = (await runTool(findTool('add_campaign_step')!, ctx, { campaign_id: created.id, step: EMAIL })) as any;
  t.is(added.step_version, 2);
  const edited = (await runTool(findTool('update_campaign_step')!, ctx, {
    campaign_id: created.id,
    step_id: added.step.id,
    step: { type: 'email', config: { subject: 'S', body: 'B' } },
  })) as any;
  t.is(edited.step_version, 3);
  t.like(await runTool(findTool('update_campaign')!, ctx, { campaign_id: created.id, daily_new_lead_cap: 5 }), {
    daily_new_lead_cap: 5,
  });
  t.like(await runTool(findTool('activate_campaign')!, ctx, { campaign_id: created.id }), { status: 'active' });
  t.like(await runTool(findTool('pause_campaign')!, ctx, { campaign_id: created.id }), { status: 'paused' });
  t.like(await runTool(findTool('resume_campaign')!, ctx, { campaign_id: created.id }), { status: 'active' });
  const bad = await t.throwsAsync(runTool(findTool('resume_campaign')!, ctx, { campaign_id: created.id }));
  t.true(bad instanceof AppError && bad.code === 'invalid_transition');
  const got = (await runTool(findTool('get_campaign')!, ctx, { campaign_id: created.id })) as any;
  t.is(got.steps.length, 1);
  t.deepEqual(
    ((await runTool(findTool('list_campaigns')!, ctx, { app_id: app.id })) as any).campaigns.map((c: any) => c.id),
    [created.id],
  );
  const other = await createOwner();
  const oe = services.orm.em.fork();
  const otherCtx = {
    em: oe,
    jobs: services.jobs,
    config: services.config,
    providers: services,
    actor: await resolveActor(oe as never, { userId: other.id, kind: 'session' }, undefined),
  };
  const nf = await t.throwsAsync(runTool(findTool('get_campaign')!, otherCtx, { campaign_id: created.id }));
  t.true(nf instanceof AppError && nf.status === 404);
});

test('steps: 409 step_limit_reached past 50; attachment forms without a file are 400 missing_file', async (t) => {
  const u = await createOwner();
  const app = await createTestApp(u);
  const c = await campaign(u, app.id);
  const e = await em();
  const { CampaignStep } = await import('../../db/entities/CampaignStep.js');
  for (let i = 0; i < 50; i++)
    e.create(CampaignStep, {
      campaign: c.id,
      position: i,
      type: 'wait',
      config: { amount: 1, unit: 'hours' },
    } as never);
  await e.flush();
  const r = await call('POST', `/api/campaigns/${c.id}/steps`, as(u, WAIT));
  t.is(r.status, 409);
  t.is(r.body.error.code, 'step_limit_reached');

  const c2 = await campaign(u, app.id);
  const s = await step(u, c2.id, { type: 'message', config: { body: 'Hi {{first_name|there}}' } });
  const { base } = await api();
  const form = new FormData();
  form.append('file', 'just text, no filename');
  const res = await fetch(`${base}/api/campaigns/${c2.id}/steps/${s.id}/attachment`, {
    method: 'POST',
    headers: { authorization: `Bearer ${u.accessToken}` },
    body: form,
  });
  t.is(res.status, 400);
  t.is(((await res.json()) as any).error.code, 'missing_file');
  const ok = await upload(u, c2.id, s.id, Buffer.from('hello'), 'note.txt', 'text/plain');
  t.is(ok.status, 200, ok.text);
  t.like(ok.body, { type: 'message', attachment: { filename: 'note.txt', content_type: 'text/plain', size_bytes: 5 } });
});

test('the Demo workspace shows seeded campaigns: an active email sequence with a linked signal, a draft whose preflight names its blocker', async (t) => {
  const { seedDemo, demoId } = await import('../../domain/demo/seed.js');
  await seedDemo(await em());
  const visitor = await createUser();
  await call('POST', '/api/me/workspaces/demo/join', as(visitor));
  const inDemo = { 'x-acting-as': DEMO_USER_ID };
  const active = await call('GET', `/api/campaigns/${demoId(0x900)}`, as(visitor, undefined, inDemo));
  t.is(active.status, 200, active.text);
  t.like(active.body, { status: 'active', step_count: 3, step_version: 1, time_zone: 'Europe/Berlin' });
  const steps = (await call('GET', `/api/campaigns/${demoId(0x900)}/steps`, as(visitor, undefined, inDemo))).body;
  t.deepEqual(
    steps.items.map((s: any) => s.type),
    ['email', 'wait', 'email'],
  );
  t.deepEqual(
    (await call('GET', `/api/campaigns/${demoId(0x900)}/signals`, as(visitor, undefined, inDemo))).body.signals.map(
      (s: any) => s.id,
    ),
    [demoId(0x310)],
  );
  const pre = await call(
    'POST',
    `/api/apps/${demoId(0x101)}/campaigns/preflight`,
    as(visitor, { campaign_id: demoId(0x901) }, inDemo),
  );
  t.is(pre.status, 200, pre.text);
  t.false(pre.body.ready);
  t.deepEqual(
    pre.body.problems.filter((p: any) => p.severity === 'blocker').map((p: any) => p.code),
    ['no_connected_account'],
  );
  t.is((await seedDemo(await em())).changed, 0, 'the seed is re-runnable');
});

test('steps: a wait takes a whole number of minutes, hours or business days, each up to a year', async (t) => {
  const u = await createOwner();
  const app = await createTestApp(u);
  const c = await campaign(u, app.id);
  const url = `/api/campaigns/${c.id}/steps`;
  const minutes = await step(u, c.id, { type: 'wait', config: { amount: 30, unit: 'minutes' } });
  t.deepEqual(minutes.config, { amount: 30, unit: 'minutes' });
  t.deepEqual((await step(u, c.id, { type: 'wait', config: { amount: 525_600, unit: 'minutes' } })).config, {
    amount: 525_600,
    unit: 'minutes',
  });
  t.deepEqual((await step(u, c.id, { type: 'wait', config: { amount: 8760, unit: 'hours' } })).config, {
    amount: 8760,
    unit: 'hours',
  });
  t.deepEqual((await step(u, c.id, { type: 'wait', config: { amount: 365, unit: 'business_days' } })).config, {
    amount: 365,
    unit: 'business_days',
  });
  // The version's snapshot keeps the unit as given (the executor reads it there).
  const version = await (
    await em()
  ).findOneOrFail(CampaignStepVersion, { campaign: c.id, version: minutes.step_version });
  t.deepEqual(version.steps[0].config, { amount: 30, unit: 'minutes' });
  const put = await call(
    'PUT',
    `${url}/${minutes.id}`,
    as(u, { type: 'wait', config: { amount: 90, unit: 'minutes' } }),
  );
  t.is(put.status, 200, put.text);
  t.deepEqual(put.body.config, { amount: 90, unit: 'minutes' });
  for (const config of [
    { amount: 0, unit: 'minutes' },
    { amount: 525_601, unit: 'minutes' },
    { amount: 1.5, unit: 'hours' },
    { amount: 8761, unit: 'hours' },
    { amount: 366, unit: 'business_days' },
    { amount: 10, unit: 'seconds' },
    { amount: 10, unit: 'minutes', extra: true },
  ]) {
    const r = await call('POST', url, as(u, { type: 'wait', config }));
    t.is(r.status, 400, JSON.stringify(config));
    t.is(r.body.error.code, 'invalid_body');
  }
  // The Operator's add_campaign_step takes the same schema.
  const em0 = (await api()).services.orm.em.fork();
  const ctx = {
    em: em0,
    jobs: (await api()).services.jobs,
    config: (await api()).services.config,
    providers: (await api()).services,
    actor: await resolveActor(em0 as never, { userId: u.id, kind: 'session' }, undefined),
  };
  const added = (await runTool(findTool('add_campaign_step')!, ctx, {
    campaign_id: c.id,
    step: { type: 'wait', config: { amount: 45, unit: 'minutes' } },
  })) as { step: { config: unknown } };
  t.deepEqual(added.step.config, { amount: 45, unit: 'minutes' });
});

test('preflight: {{sender_name}} always has a value (the account’s display name): no template_variables warning for it', async (t) => {
  const u = await createOwner();
  const app = await createTestApp(u);
  const email = await account(u, 'email');
  const url = `/api/apps/${app.id}/campaigns/preflight`;
  const sender = {
    type: 'email',
    config: { subject: 'From {{sender_name}}', body: 'Hello {{first_name|there}}, {{sender_name}} here' },
  };
  const mixed = { type: 'email', config: { subject: 'Hi', body: 'Hello {{first_name}}, {{sender_name}} here' } };
  const r = await call(
    'POST',
    url,
    as(u, { time_zone: 'Europe/Berlin', account_ids: [email], steps: [sender, mixed] }),
  );
  t.is(r.status, 200, r.text);
  t.true(r.body.ready, r.text);
  const warnings = r.body.problems.filter((p: any) => p.code === 'template_variables');
  t.is(warnings.length, 1, r.text);
  t.like(warnings[0], { details: { field: 'body', variables: ['first_name'] } });
  t.notRegex(warnings[0].message, /sender_name/);

  // A stored campaign whose only variable without fallback is {{sender_name}}: nothing to warn about.
  const c = await campaign(u, app.id, { account_ids: [email] });
  await step(u, c.id, sender);
  const stored = await call('POST', url, as(u, { campaign_id: c.id }));
  t.is(stored.status, 200, stored.text);
  t.deepEqual(stored.body.problems, []);
  t.like(stored.body, { ready: true, blockers: 0, warnings: 0 });
});
