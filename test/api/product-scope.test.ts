// Product scope inside a workspace (domain/access.ts, docs/team.md "Product scope"), through real
// HTTP: a member given only product P2 cannot read, answer or draft in P1's inbox, touch P1 leads'
// follow-ups and notes, enrich a P1 contact or mark a P1 lead replied (403 `not_assigned`, nothing
// changes); ids of another workspace used as filters are 404 (or the Operator's 403 app_not_owned).
import test from 'ava';
import { uuidv7 } from '../../lib/ids.js';
import { call, closeApi } from '../helpers/api.js';
import { em } from '../helpers/billing.js';
import { createOwnerWithProducts } from '../helpers/scope.js';
test.after.always(closeApi);

const as = (token: string, body?: unknown, actingAs?: string) => ({
  token,
  headers: (actingAs ? { 'x-acting-as': actingAs } : {}) as Record<string, string>,
  ...(body === undefined ? {} : { body }),
});

async function conversation(
  workspaceId: string,
  accountId: string,
  lead: { leadId: string; contactId: string; email: string },
) {
  const id = uuidv7();
  await (
    await em()
  ).execute(
    `insert into conversations (id, workspace_id, platform_account_id, channel, connector_thread_id, counterpart, contact_id, lead_id, last_message_at, last_message_preview, last_direction, unread_count, created_at, updated_at)
     values (?, ?, ?, 'email', ?, ?, ?, ?, now(), 'Sounds good', 'in', 1, now(), now())`,
    [id, workspaceId, accountId, `thr-${id}`, lead.email, lead.contactId, lead.leadId],
  );
  return id;
}

test('a member given P2 only: P1’s inbox, follow-ups, notes, enrichment and mark-replied are 403 not_assigned and change nothing; P2’s work', async (t) => {
  const f = await createOwnerWithProducts();
  const { member, p1, p2, account, workspaceId } = f;
  const c1 = await conversation(workspaceId, account.id, p1.lead);
  const c2 = await conversation(workspaceId, account.id, p2.lead);
  // The member acts in the owner's workspace (X-Acting-As).
  const mem = (body?: unknown) => as(member.accessToken, body, f.owner.id);

  const list = await call('GET', '/api/inbox/conversations', mem());
  t.is(list.status, 200, list.text);
  const ids = list.body.items.map((c: { id: string }) => c.id);
  t.true(ids.includes(c2));
  t.false(ids.includes(c1), 'P1’s conversation is not listed');
  t.like((await call('GET', '/api/inbox/unread-count', mem())).body, { conversations: 1 });
  t.like(await call('GET', `/api/inbox/conversations/${c1}`, mem()), {
    status: 403,
    body: { error: { code: 'not_assigned' } },
  });
  t.is((await call('GET', `/api/inbox/conversations/${c2}`, mem())).status, 200);

  const messages = async () =>
    Number(
      (
        await (
          await em()
        ).execute<{ n: number }[]>(`select count(*)::int as n from inbox_messages where conversation_id = ?`, [c1])
      )[0].n,
    );
  const before = await messages();
  t.like(await call('POST', `/api/inbox/conversations/${c1}/reply`, mem({ body: 'Hello from the wrong product' })), {
    status: 403,
    body: { error: { code: 'not_assigned' } },
  });
  t.like(await call('POST', `/api/inbox/conversations/${c1}/ai-reply`, mem({})), {
    status: 403,
    body: { error: { code: 'not_assigned' } },
  });
  t.like(await call('POST', `/api/inbox/conversations/${c1}/read`, mem()), { status: 403 });
  t.is(await messages(), before, 'no reply queued');
  t.like(await call('GET', `/api/inbox/conversations/${c1}/messages/live`, mem()), { status: 403 });

  t.like(await call('GET', `/api/follow-ups?lead_id=${p1.lead.leadId}`, mem()), {
    status: 403,
    body: { error: { code: 'not_assigned' } },
  });
  t.is((await call('GET', `/api/follow-ups?lead_id=${p2.lead.leadId}`, mem())).status, 200);
  t.like(await call('GET', `/api/follow-ups/leads/${p1.lead.leadId}/notes`, mem()), { status: 403 });
  t.like(await call('POST', `/api/follow-ups/leads/${p1.lead.leadId}/notes`, mem({ body: 'A note' })), { status: 403 });
  t.like(await call('POST', `/api/follow-ups/leads/${p1.lead.leadId}/dismiss`, mem()), { status: 403 });
  t.is(
    Number(
      (
        await (
          await em()
        )
          .execute<{ n: number }[]>(`select count(*)::int as n from lead_notes where lead_id = ?`, [p1.lead.leadId])
          .catch(() => [{ n: 0 }])
      )[0].n,
    ),
    0,
  );
  t.is((await call('POST', `/api/follow-ups/leads/${p2.lead.leadId}/notes`, mem({ body: 'A note' }))).status, 201);

  const ledger = async () =>
    Number(
      (
        await (
          await em()
        ).execute<{ n: number }[]>(`select count(*)::int as n from credit_ledger where workspace_id = ?`, [workspaceId])
      )[0].n,
    );
  const charged = await ledger();
  t.like(await call('POST', `/api/enrichment/contacts/${p1.lead.contactId}`, mem({})), {
    status: 403,
    body: { error: { code: 'not_assigned' } },
  });
  t.is(await ledger(), charged, 'no credits charged');

  t.like(await call('POST', `/api/leads/${p1.lead.leadId}/mark-replied`, mem()), {
    status: 403,
    body: { error: { code: 'not_assigned' } },
  });
  t.like(await call('GET', `/api/agent/threads?app_id=${p1.appId}`, mem()), {
    status: 403,
    body: { error: { code: 'not_assigned' } },
  });
});

test('ids of another workspace used as filters are 404 (the Operator’s product filter 403 app_not_owned), never an empty 200', async (t) => {
  const f = await createOwnerWithProducts();
  const other = await createOwnerWithProducts();
  const o = other.owner.accessToken;
  t.like(await call('GET', `/api/inbox/conversations?account_id=${f.account.id}`, as(o)), {
    status: 404,
    body: { error: { code: 'not_found' } },
  });
  t.like(await call('GET', `/api/inbox/unread-count?account_id=${f.account.id}`, as(o)), { status: 404 });
  t.like(await call('GET', `/api/inbox/conversations?lead_id=${f.p1.lead.leadId}`, as(o)), { status: 404 });
  t.like(await call('GET', `/api/follow-ups?lead_id=${f.p1.lead.leadId}`, as(o)), {
    status: 404,
    body: { error: { code: 'not_found' } },
  });
  t.like(await call('GET', `/api/agent/threads?app_id=${f.p1.appId}`, as(o)), {
    status: 403,
    body: { error: { code: 'app_not_owned' } },
  });
  t.like(await call('POST', `/api/leads/${f.p1.lead.leadId}/mark-replied`, as(o)), { status: 404 });
  // The owner's own filters still answer.
  t.is((await call('GET', `/api/inbox/conversations?account_id=${f.account.id}`, as(f.owner.accessToken))).status, 200);
});
