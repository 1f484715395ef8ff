// Credits are held before a paid provider call (docs/plans-and-credits.md, "Holds"): 50 concurrent
// enrichments against 3 credits through the real API and worker. The provider is asked at most 3
// times (counted from the workflows' histories: one `fetchEnrichment` per provider call), exactly 3
// are charged, and the other 47 requests are refused at once with 402 `insufficient_credits`.
import test from 'ava';
import { WorkflowNotFoundError } from '@temporalio/client';
import { Contact } from '../../db/entities/Contact.js';
import { creditBalance, debitCredits, grantCredits } from '../../domain/billing/credits.js';
import { loadConfig } from '../../lib/config.js';
import { CorpusPeople } from '../../lib/enrichment/local.js';
import { normaliseProfileUrl } from '../../lib/normalise.js';
import { enrichmentWorkflowIds } from '../../lib/workflow-ids.js';
import { api, call, closeApi, createUser } from '../helpers/api.js';
import { em, workspaceIdOf } from '../helpers/billing.js';
test.after.always(closeApi);

const people = new CorpusPeople(loadConfig().sources.corpus);

/** Sets the workspace's balance to exactly `n`. */
async function balanceOf(workspaceId: string, n: number): Promise<void> {
  const e = await em();
  const now = await creditBalance(e, workspaceId);
  if (now > n) await debitCredits(e, workspaceId, now - n, { reason: 'test: set the balance' });
  if (now < n) await grantCredits(e, workspaceId, n - now, { reason: 'test: set the balance', source: 'admin' });
}

/** `n` contacts the local provider finds (each a distinct corpus person, by profile URL). */
async function matchableContacts(workspaceId: string, n: number): Promise<string[]> {
  const e = await em();
  const rows: { id: string }[] = [];
  for (let i = 3000; rows.length < n; i++) {
    const p = people.corpus.people[i];
    if (!p.current || !p.profileUrl) continue;
    rows.push(
      e.create(Contact, {
        workspace: workspaceId,
        profileUrl: p.profileUrl,
        profileUrlNormalised: normaliseProfileUrl(p.profileUrl),
        fullName: p.fullName,
      } as never) as { id: string },
    );
  }
  await e.flush();
  return rows.map((r) => r.id);
}

/** How many times the target's workflow asked the provider (scheduled `fetchEnrichment` activities; 0 without a workflow). */
async function providerCalls(contactId: string): Promise<number> {
  const { services } = await api();
  const handle = services.temporal.workflow.getHandle(enrichmentWorkflowIds.target('contact', contactId));
  try {
    await handle.describe();
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return 0;
    throw err;
  }
  await handle.result().catch(() => undefined);
  const events = (await handle.fetchHistory()).events ?? [];
  return events.filter((ev) => ev.activityTaskScheduledEventAttributes?.activityType?.name === 'fetchEnrichment')
    .length;
}

test('3 credits, 50 concurrent enrichments: the provider is asked at most 3 times, exactly 3 are charged, 47 are refused with 402 insufficient_credits', async (t) => {
  const u = await createUser();
  const workspaceId = await workspaceIdOf(u.id);
  const contacts = await matchableContacts(workspaceId, 50);
  await balanceOf(workspaceId, 3);

  const answers = await Promise.all(
    contacts.map((id) => call('POST', `/api/enrichment/contacts/${id}`, { token: u.accessToken, body: {} })),
  );
  const started = answers.filter((r) => r.status === 202);
  const refused = answers.filter((r) => r.status === 402);
  t.true(
    answers.every((r) => r.status === 202 || r.status === 402),
    answers
      .map((r) => `${r.status} ${r.text}`)
      .filter((s) => !s.startsWith('202') && !s.startsWith('402'))
      .join('\n'),
  );

  const calls = (await Promise.all(contacts.map(providerCalls))).reduce((a, b) => a + b, 0);
  const charged: { n: number }[] = await (
    await em()
  ).execute(
    `select count(*)::int as n from credit_ledger where workspace_id = ? and idempotency_key like 'enrich:contact:%'`,
    [workspaceId],
  );
  t.log(`started ${started.length}, refused ${refused.length}, provider calls ${calls}, charged ${charged[0].n}`);

  t.true(calls <= 3, `the provider was asked ${calls} times for 3 credits`);
  t.is(charged[0].n, 3, 'exactly 3 charged');
  t.is(await creditBalance(await em(), workspaceId), 0);
  t.is(started.length, 3);
  t.is(refused.length, 47);
  for (const r of refused) {
    t.is(r.body.error.code, 'insufficient_credits');
    t.like(r.body.error.details, { required: 1 });
  }
  // Every hold became its debit: nothing is left held.
  const held: { n: number }[] = await (
    await em()
  ).execute(`select count(*)::int as n from credit_holds where workspace_id = ?`, [workspaceId]);
  t.is(held[0].n, 0);
});
