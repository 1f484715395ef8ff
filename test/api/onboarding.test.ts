// Onboarding progress (docs/ideas-views-onboarding.md): derived from the workspace's rows in one
// statement, each step done at its earliest row's time; undone when the rows go; another workspace's
// rows never count; the Operator tool reads the same.
import test from 'ava';
import { findTool } from '../../domain/tools/index.js';
import { runTool } from '../../domain/tools/registry.js';
import { resolveActor } from '../../domain/workspaces.js';
import { uuidv7 } from '../../lib/ids.js';
import { api, call, closeApi, createTestApp, createUser, type TestUser } from '../helpers/api.js';
import { createOwner, em, workspaceIdOf } from '../helpers/billing.js';
import { campaignOwner, fastAccount, seedCampaign } from '../helpers/campaigns.js';
import { addTeamMember } from '../helpers/db.js';
test.after.always(closeApi);

const progress = async (u: TestUser, owner?: TestUser) => {
  const r = await call('GET', '/api/onboarding/progress', {
    token: u.accessToken,
    headers: (owner ? { 'x-acting-as': owner.id } : {}) as Record<string, string>,
  });
  if (r.status !== 200) throw new Error(r.text);
  return r.body as {
    steps: { step: string; label: string; done: boolean; done_at: string | null }[];
    completed: number;
    total: number;
    percent: number;
    next_step: string | null;
  };
};
const step = (p: Awaited<ReturnType<typeof progress>>, name: string) => p.steps.find((s) => s.step === name)!;

test('each step is derived from the rows: done at the earliest one’s time, undone when they go; percent and next step follow', async (t) => {
  const u = await createOwner();
  const ws = await workspaceIdOf(u.id);
  const e = await em();
  let p = await progress(u);
  t.deepEqual(
    p.steps.map((s) => s.step),
    ['product_created', 'agent_created', 'account_connected', 'list_imported', 'campaign_activated', 'first_reply'],
  );
  t.like(p, { completed: 0, total: 6, percent: 0, next_step: 'product_created' });
  t.true(p.steps.every((s) => !s.done && s.done_at === null));

  const o = await campaignOwner(u); // a product and an empty list
  p = await progress(u);
  t.like(step(p, 'product_created'), { done: true });
  t.like(step(p, 'list_imported'), { done: false, done_at: null }, 'an empty list is not a list with leads');
  const [{ created_at: appAt }] = (await e.execute(`select created_at from apps where id = ?`, [o.app.id])) as {
    created_at: Date;
  }[];
  t.is(step(p, 'product_created').done_at, new Date(appAt).toISOString());
  // A second product later does not move the time: the earliest row counts.
  await createTestApp(u, 'Second');
  t.is(step(await progress(u), 'product_created').done_at, new Date(appAt).toISOString());

  await call('POST', `/api/apps/${o.app.id}/agents`, { token: u.accessToken, body: { name: 'Scout' } });
  const [lead] = await o.leads(1);
  const account = await fastAccount(u, 'email');
  p = await progress(u);
  t.like(p, { completed: 4, percent: 67, next_step: 'campaign_activated' });
  t.true(['agent_created', 'list_imported', 'account_connected'].every((s) => step(p, s).done));

  // A disconnected account undoes its step until one is connected again.
  await e.execute(`update platform_accounts set status = 'disconnected' where id = ?`, [account.id]);
  t.like(step(await progress(u), 'account_connected'), { done: false, done_at: null });
  await e.execute(`update platform_accounts set status = 'connected' where id = ?`, [account.id]);

  const { id: campaignId } = await seedCampaign(ws, {
    appId: o.app.id,
    accountIds: [account.id],
    steps: [],
    status: 'draft',
  });
  t.false(step(await progress(u), 'campaign_activated').done, 'a draft campaign was never activated');
  const activatedAt = new Date('2026-03-04T05:06:07.000Z');
  await e.execute(`update campaigns set status = 'active', activated_at = ? where id = ?`, [activatedAt, campaignId]);
  t.like(step(await progress(u), 'campaign_activated'), { done: true, done_at: activatedAt.toISOString() });

  // The first reply: an enrollment marked replied, or a lead's reply in the inbox, whichever is first.
  await e.execute(
    `insert into enrollments (id, workspace_id, campaign_id, lead_id, contact_id, status, step_version, run, enrolled_at, replied_at, created_at, updated_at)
     values (?, ?, ?, ?, ?, 'replied', 1, 1, now(), ?, now(), now())`,
    [uuidv7(), ws, campaignId, lead.leadId, lead.contactId, new Date('2026-04-01T10:00:00.000Z')],
  );
  p = await progress(u);
  t.like(p, { completed: 6, percent: 100, next_step: null });
  t.is(step(p, 'first_reply').done_at, '2026-04-01T10:00:00.000Z');

  // Deleting the products undoes everything that hung off them.
  await e.execute(`delete from apps where workspace_id = ?`, [ws]);
  p = await progress(u);
  t.like(step(p, 'product_created'), { done: false });
  t.like(step(p, 'campaign_activated'), { done: false });
  t.like(step(p, 'first_reply'), { done: false });
  t.like(step(p, 'account_connected'), { done: true }, 'accounts belong to the workspace, not a product');
});

test('another workspace’s rows never count; a member sees the workspace they act in; the Operator tool reads the same', async (t) => {
  const owner = await createOwner();
  await createTestApp(owner);
  const member = await createUser();
  await addTeamMember(owner.id, member.id);
  t.true(step(await progress(member, owner), 'product_created').done);
  t.false(step(await progress(member), 'product_created').done, 'the member’s own workspace has no product');
  const stranger = await createUser();
  t.is((await progress(stranger)).completed, 0);
  const forbidden = await call('GET', '/api/onboarding/progress', {
    token: stranger.accessToken,
    headers: { 'x-acting-as': owner.id },
  });
  t.is(forbidden.status, 403);
  t.is(forbidden.body.error.code, 'not_assigned');

  const { services } = await api();
  const ctx = {
    em: await em(),
    jobs: services.jobs,
    config: services.config,
    providers: services,
    actor: await resolveActor(await em(), { userId: owner.id, kind: 'session' }, undefined),
  };
  const viaTool = (await runTool(findTool('get_onboarding_progress')!, ctx, {})) as {
    completed: number;
    next_step: string;
  };
  t.like(viaTool, { completed: 1, next_step: 'agent_created' });
});

test('one statement, answered from indexes: no sequential scan of leads, messages or enrollments', async (t) => {
  const u = await createUser();
  const ws = await workspaceIdOf(u.id);
  const { onboardingProgress } = await import('../../domain/onboarding/onboarding.js');
  const e = await em();
  // Count the statements the function sends (each em.execute is one round trip).
  let statements = 0;
  const original = e.execute.bind(e);
  (e as unknown as { execute: (...a: unknown[]) => unknown }).execute = (...args: unknown[]) => {
    statements++;
    return (original as (...a: unknown[]) => unknown)(...args);
  };
  await onboardingProgress(e, { workspaceId: ws });
  t.is(statements, 1);
  const text = await (
    await em()
  ).transactional(async (tx) => {
    await tx.execute('set local enable_seqscan = off');
    return JSON.stringify(
      await tx.execute(
        `explain (format json) select (select min(sent_at) from inbox_messages where workspace_id = ? and kind = 'reply' and lead_id is not null and not historical), (select min(replied_at) from enrollments where workspace_id = ? and replied_at is not null)`,
        [ws, ws],
      ),
    );
  });
  t.regex(text, /inbox_messages_first_reply_index/);
  t.regex(text, /enrollments_replied_index/);
});
