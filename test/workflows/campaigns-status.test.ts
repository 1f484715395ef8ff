// A campaign built and driven through its own routes runs on the executor: pausing holds a running
// enrollment before its send, and resuming (PATCH status active) wakes it at once through the
// campaign_resumed signal rather than at the 5-minute recheck (docs/campaigns.md, docs/executor.md).
import test from 'ava';
import type { EnrollmentState } from '../../workflows/enrollments.js';
import { enrollmentWorkflowIds } from '../../lib/workflow-ids.js';
import { waitFor } from '../../scripts/children.js';
import { api, call, closeApi } from '../helpers/api.js';
import { createOwner } from '../helpers/billing.js';
import { ALL_WEEK, campaignOwner, fastAccount } from '../helpers/campaigns.js';
test.after.always(closeApi);

test('campaign routes → executor: a paused campaign holds its enrollment; PATCH status active resumes it at once', async (t) => {
  const u = await createOwner();
  const o = await campaignOwner(u);
  const account = await fastAccount(u, 'email');
  const as = (body?: unknown) => ({ token: u.accessToken, ...(body === undefined ? {} : { body }) });
  const c = (
    await call(
      'POST',
      `/api/apps/${o.app.id}/campaigns`,
      as({
        name: 'Routes',
        time_zone: 'Europe/Paris',
        sending_windows: ALL_WEEK,
        account_ids: [account.id],
        exclusive_leads: false,
      }),
    )
  ).body;
  t.truthy(c.id, JSON.stringify(c));
  t.is(
    (
      await call(
        'POST',
        `/api/campaigns/${c.id}/steps`,
        as({ type: 'email', config: { subject: 'Hi {{first_name|there}}', body: 'Hello {{first_name|there}}' } }),
      )
    ).status,
    201,
  );
  t.like((await call('PATCH', `/api/campaigns/${c.id}/status`, as({ status: 'active' }))).body, { status: 'active' });
  t.like((await call('PATCH', `/api/campaigns/${c.id}/status`, as({ status: 'paused' }))).body, { status: 'paused' });

  const [lead] = await o.leads(1);
  const r = await call('POST', `/api/campaigns/${c.id}/leads`, as({ lead_ids: [lead.leadId] }));
  t.is(r.status, 200, r.text);
  const handle = (await api()).services.temporal.workflow.getHandle(
    enrollmentWorkflowIds.enrollment(c.id, lead.leadId),
  );
  await waitFor(
    'campaign_paused',
    async () => (await handle.query<EnrollmentState>('state').catch(() => null))?.reason === 'campaign_paused',
    60_000,
  );
  // Resumed at once, typically while the workflow still records the waiting reason (a resume then must not be lost).
  const resumedAt = Date.now();
  t.like((await call('PATCH', `/api/campaigns/${c.id}/status`, as({ status: 'active' }))).body, {
    status: 'active',
    paused_at: null,
  });
  t.like(await handle.result(), { status: 'completed' });
  t.true(Date.now() - resumedAt < 60_000, 'woken by the signal, not the 5-minute recheck');
});
