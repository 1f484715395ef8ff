// The business metrics after a scripted campaign on the sandbox network: the run's worker (its
// /metrics, served on the port scripts/test.ts gave it) counts the send and the webhook delivery,
// and the API's /metrics reads the enrollment from PostgreSQL.
import test from 'ava';
import { waitFor } from '../../scripts/children.js';
import { enrollmentWorkflowIds } from '../../lib/workflow-ids.js';
import { resetDatabaseGaugesClock } from '../../lib/metrics.js';
import { api, call, closeApi } from '../helpers/api.js';
import { campaignWithAccount } from '../helpers/campaigns.js';
import { startReceiver } from '../helpers/receiver.js';
test.after.always(closeApi);

const workerUrl = process.env.TEST_WORKER_METRICS_URL;

/** A sample's value in an exposition (0 when absent). */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = m[2] ? m[2].split(',') : [];
    if (want.every((w) => have.includes(w)) && have.length === want.length) return Number(m[3]);
  }
  return 0;
}
const scrapeWorker = async () => (await fetch(workerUrl!)).text();

test('after a campaign send: the worker counts the send and its webhook delivery, the API the enrollment', async (t) => {
  if (!workerUrl) return t.pass('TEST_WORKER_METRICS_URL unset: run under npm test');
  const { u, o, campaign } = await campaignWithAccount('network', [
    { type: 'invitation', config: { note: 'Hi {{first_name}}' } },
  ]);
  const rx = await startReceiver();
  t.teardown(rx.close);
  const sub = await call('POST', '/api/webhooks/outbound', {
    token: u.accessToken,
    body: { url: rx.url, events: ['action.executed'], active: true },
  });
  t.is(sub.status, 201, sub.text);

  // Counters are the worker's since it started (other files send too): compare with a baseline.
  const before = await scrapeWorker();
  const [lead] = await o.leads(1);
  const r = await call('POST', `/api/campaigns/${campaign.id}/leads`, {
    token: u.accessToken,
    body: { lead_ids: [lead.leadId] },
  });
  t.is(r.status, 200, r.text);
  const { services } = await api();
  await services.temporal.workflow.getHandle(enrollmentWorkflowIds.enrollment(campaign.id, lead.leadId)).result();
  await waitFor('the action.executed delivery', async () => rx.requests.length >= 1, 30_000);

  const sent = { channel: 'invitation', outcome: 'executed' };
  let after = '';
  await waitFor(
    'the worker to count the delivery',
    async () => {
      after = await scrapeWorker();
      return (
        sample(after, 'outreach_webhook_deliveries_total', { outcome: 'success' }) >
        sample(before, 'outreach_webhook_deliveries_total', { outcome: 'success' })
      );
    },
    10_000,
  );
  t.true(sample(after, 'outreach_sends_total', sent) >= sample(before, 'outreach_sends_total', sent) + 1);
  t.true(
    sample(after, 'outreach_webhook_delivery_duration_seconds_count') >=
      sample(before, 'outreach_webhook_delivery_duration_seconds_count') + 1,
  );
  // The worker's families are there even before their first sample (the rules query them).
  for (const family of [
    'outreach_activity_failures_total',
    'outreach_workflow_failures_total',
    'outreach_governor_refusals_total',
    'outreach_import_rows_total',
  ]) {
    t.regex(after, new RegExp(`^# TYPE ${family} counter$`, 'm'));
  }

  resetDatabaseGaugesClock();
  const apiText = (await call('GET', '/metrics')).text;
  t.true(sample(apiText, 'outreach_enrollments', { status: 'completed' }) >= 1);
  t.true(sample(apiText, 'outreach_outbox_lag_seconds') >= 0);
});
