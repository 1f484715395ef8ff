// The exposition's size and the bounds on its labels (lib/metrics.ts), and the /metrics guard rule
// as the worker's metrics server applies it (the API's GET /metrics: test/api/metrics.test.ts).
import test from 'ava';
import { allOperations } from '../../api/operations.js';
import {
  countSend,
  countWebhookDelivery,
  metricsAccess,
  observeRequest,
  registry,
  statusClass,
  STATUS_CLASSES,
} from '../../lib/metrics.js';
import { startMetricsServer } from '../../lib/metrics-server.js';

/**
 * The cap on the whole exposition with every operation seen with every status class (the worst case:
 * real traffic touches fewer). Today that is about 290 KB for ~290 operations, against 1.84 MB before
 * the HTTP histogram lost its method and status labels and 7 of its 11 buckets; 400 KB leaves room for
 * ~100 more operations (about 1 KB each) while a scrape stays well under half a megabyte.
 */
const EXPOSITION_CAP_BYTES = 400 * 1024;

test.serial('the exposition stays under its cap with every operation observed with every status class', async (t) => {
  const ops = allOperations();
  t.true(ops.length > 250, `${ops.length} operations`);
  const statuses = { '2xx': 200, '3xx': 302, '4xx': 404, '5xx': 503 } as const;
  for (const op of ops) for (const cls of STATUS_CLASSES) observeRequest(op.operationId, statuses[cls], 0.1);
  observeRequest('unmatched', 404, 0.01);
  const text = await registry.metrics();
  const bytes = Buffer.byteLength(text);
  t.log(`${ops.length} operations × ${STATUS_CLASSES.length} status classes: ${Math.round(bytes / 1024)} KB`);
  t.true(bytes < EXPOSITION_CAP_BYTES, `${bytes} bytes`);
  // Operation only: no method or status label on the histogram, four buckets.
  t.regex(text, /^http_request_duration_seconds_bucket\{le="0\.05",operation="getHealth"\} \d+$/m);
  t.regex(text, /^http_requests_total\{operation="getHealth",status_class="5xx"\} 1$/m);
  t.deepEqual(
    [...new Set([...text.matchAll(/^http_request_duration_seconds_bucket\{le="([^"]+)"/gm)].map((m) => m[1]))],
    ['0.05', '0.25', '1', '5', '+Inf'],
  );
});

test('labels stay within their enums: anything else is `other`', async (t) => {
  t.is(statusClass(204), '2xx');
  t.is(statusClass(101), 'other');
  t.is(statusClass(999), 'other');
  countSend('carrier-pigeon', 'executed');
  countWebhookDelivery({ success: false, errorClass: 'something new', durationMs: 12 });
  const text = await registry.metrics();
  t.regex(text, /^outreach_sends_total\{channel="other",outcome="executed"\} 1$/m);
  t.regex(text, /^outreach_webhook_deliveries_total\{outcome="other"\} 1$/m);
  // The bounded families start at 0, so rate() and ratios see them from the first scrape.
  t.regex(text, /^outreach_sends_total\{channel="email",outcome="failed"\} 0$/m);
});

test('who may read /metrics: the token when set; without one, open except in production', (t) => {
  const dev = { production: false, metricsToken: null };
  const prod = { production: true, metricsToken: null };
  const withToken = (production: boolean) => ({ production, metricsToken: 's3cret-token' });
  t.is(metricsAccess(dev, undefined), null);
  t.regex(metricsAccess(prod, undefined) ?? '', /METRICS_TOKEN/);
  t.regex(metricsAccess(prod, 'Bearer anything') ?? '', /METRICS_TOKEN/);
  for (const production of [false, true]) {
    t.is(metricsAccess(withToken(production), undefined), 'metrics token required');
    t.is(metricsAccess(withToken(production), 'Bearer wrong'), 'metrics token required');
    t.is(metricsAccess(withToken(production), 's3cret-token'), 'metrics token required'); // the scheme is part of it
    t.is(metricsAccess(withToken(production), 'Bearer s3cret-token'), null);
  }
});

test('the worker metrics server applies the same rule and serves only GET /metrics', async (t) => {
  const open = await startMetricsServer({
    host: '127.0.0.1',
    port: 0,
    config: { production: false, metricsToken: null },
  });
  const closed = await startMetricsServer({
    host: '127.0.0.1',
    port: 0,
    config: { production: true, metricsToken: null },
  });
  const guarded = await startMetricsServer({
    host: '127.0.0.1',
    port: 0,
    config: { production: true, metricsToken: 's3cret-token' },
  });
  t.teardown(() => Promise.all([open.close(), closed.close(), guarded.close()]));

  const r = await fetch(`${open.url}/metrics`);
  t.is(r.status, 200);
  t.regex(r.headers.get('content-type') ?? '', /^text\/plain/);
  t.regex(await r.text(), /^# TYPE outreach_sends_total counter$/m);
  t.is((await fetch(`${open.url}/`)).status, 404);
  t.is((await fetch(`${open.url}/metrics`, { method: 'POST' })).status, 404);

  const c = await fetch(`${closed.url}/metrics`);
  t.is(c.status, 401);
  t.regex(((await c.json()) as { error: { message: string } }).error.message, /METRICS_TOKEN/);

  t.is((await fetch(`${guarded.url}/metrics`)).status, 401);
  t.is((await fetch(`${guarded.url}/metrics`, { headers: { authorization: 'Bearer wrong' } })).status, 401);
  t.is((await fetch(`${guarded.url}/metrics`, { headers: { authorization: 'Bearer s3cret-token' } })).status, 200);
});
