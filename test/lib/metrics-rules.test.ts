// The alert rules and the dashboard in deploy/ against the metrics the processes really export:
// `promtool check rules` (Debian's promtool, fetched once per machine by scripts/promtool.ts; without
// it, the YAML's shape is checked here), every metric a rule or a panel queries present in the
// exposition of the API and of the run's worker, and `promtool check metrics` on the exposition.
import test from 'ava';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { repoRoot } from '../../lib/config.js';
import {
  countImportRows,
  countSend,
  countWebhookDelivery,
  observeImport,
  observeRequest,
  registry,
} from '../../lib/metrics.js';
import { promtoolBinary } from '../../scripts/promtool.js';

const rulesFile = join(repoRoot, 'deploy/prometheus/alerts.yml');
const dashboardFile = join(repoRoot, 'deploy/grafana/outreach.json');

interface Rule {
  alert?: string;
  record?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
const rules = (): Rule[] =>
  (parse(readFileSync(rulesFile, 'utf8')) as { groups: { name: string; rules: Rule[] }[] }).groups.flatMap(
    (g) => g.rules,
  );
const panelExprs = (): string[] =>
  (JSON.parse(readFileSync(dashboardFile, 'utf8')) as { panels: { targets?: { expr: string }[] }[] }).panels.flatMap(
    (p) => (p.targets ?? []).map((x) => x.expr),
  );

/** Prometheus' own series (from the scrape, not from an exposition). */
const BUILT_IN = new Set(['up', 'scrape_duration_seconds', 'scrape_samples_scraped']);
const KEYWORDS = new Set([
  'and',
  'or',
  'unless',
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'bool',
  'offset',
  'inf',
  'nan',
]);

/** The metric names a PromQL expression selects: identifiers left once strings, matchers, ranges, groupings and calls are removed. */
function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const names = [...bare.matchAll(/\b([a-zA-Z_:][a-zA-Z0-9_:]*)\b(?!\s*\()/g)].map((m) => m[1]);
  return [...new Set(names.filter((n) => !KEYWORDS.has(n.toLowerCase()) && !/^\d/.test(n)))];
}

/** Metric families in an exposition, with the series names a histogram adds. */
function exposed(text: string): Set<string> {
  const out = new Set<string>();
  for (const m of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    out.add(m[1]);
    if (m[2] === 'histogram' || m[2] === 'summary') for (const s of ['_bucket', '_sum', '_count']) out.add(m[1] + s);
  }
  return out;
}

test('metricNames reads the selectors of an expression', (t) => {
  t.deepEqual(
    metricNames(
      'sum by (le, operation) (rate(http_request_duration_seconds_bucket{status_class="5xx"}[5m])) / on(job) up > 0.5 and x_total offset 5m',
    ),
    ['http_request_duration_seconds_bucket', 'up', 'x_total'],
  );
});

test('the alert rules pass promtool check rules (or, without promtool, have the shape it checks)', (t) => {
  const promtool = promtoolBinary((msg) => t.log(msg));
  if (promtool) {
    const r = spawnSync(promtool, ['check', 'rules', rulesFile], { encoding: 'utf8' });
    t.is(r.status, 0, `${r.stdout}\n${r.stderr}`);
    t.regex(r.stdout, /SUCCESS: \d+ rules found/);
  } else {
    t.log('promtool unavailable (not Debian, or apt-get download failed): checking the YAML shape only');
  }
  const all = rules();
  t.true(all.length >= 6);
  for (const r of all) {
    t.truthy(r.alert, 'every rule is an alert');
    t.is(typeof r.expr, 'string', r.alert);
    if (r.for) t.regex(r.for, /^\d+[smh]$/, r.alert);
    t.truthy(r.labels?.severity, r.alert);
    t.truthy(r.annotations?.summary, r.alert);
  }
  const alerts = all.map((r) => r.alert);
  for (const a of [
    'OutreachSendsFailing',
    'OutreachOutboxLag',
    'OutreachWorkflowFailures',
    'OutreachWebhookDeliveriesFailing',
    'OutreachApiErrors',
    'OutreachApiSlow',
  ])
    t.true(alerts.includes(a), a);
});

test('every metric a rule or a panel queries is in the exposition of the API and of the worker', async (t) => {
  const names = exposed(await registry.metrics());
  // The run's worker (scripts/test.ts serves its /metrics): what a worker process really exports.
  const workerUrl = process.env.TEST_WORKER_METRICS_URL;
  if (workerUrl) {
    const r = await fetch(workerUrl);
    t.is(r.status, 200);
    const worker = exposed(await r.text());
    for (const n of [
      'outreach_sends_total',
      'outreach_activity_failures_total',
      'outreach_workflow_failures_total',
      'outreach_webhook_deliveries_total',
    ])
      t.true(worker.has(n), `worker exports ${n}`);
    for (const n of worker) names.add(n);
  } else t.log('TEST_WORKER_METRICS_URL unset (not under npm test): the in-process exposition only');
  const queried = [...rules().map((r) => r.expr), ...panelExprs()];
  t.true(queried.length > 15);
  const missing = [...new Set(queried.flatMap(metricNames))].filter((n) => !names.has(n) && !BUILT_IN.has(n));
  t.deepEqual(missing, [], 'queried but not exported');
  // And every business metric is on the dashboard.
  const onDashboard = new Set(panelExprs().flatMap(metricNames));
  for (const n of names) {
    if (!n.startsWith('outreach_') || /_(sum|count)$/.test(n)) continue;
    const family = n.replace(/_bucket$/, '');
    t.true(
      onDashboard.has(n) || onDashboard.has(`${family}_bucket`) || [...onDashboard].some((d) => d.startsWith(family)),
      `${n} on the dashboard`,
    );
  }
});

test('promtool check metrics finds nothing to lint in the exposition', async (t) => {
  const promtool = promtoolBinary((msg) => t.log(msg));
  if (!promtool) return t.pass('promtool unavailable');
  // A sample in every family, so that each is linted with its series.
  observeRequest('getHealth', 200, 0.01);
  countSend('email', 'executed');
  countWebhookDelivery({ success: true, errorClass: null, durationMs: 20 });
  countImportRows({ created: 1, updated: 0, duplicate: 0, invalid: 0 });
  observeImport('completed', 3);
  const text = await registry.metrics();
  const r = spawnSync(promtool, ['check', 'metrics'], { input: text, encoding: 'utf8' });
  const findings = `${r.stdout}${r.stderr}`.split('\n').filter(Boolean);
  // Only our own families: prom-client's nodejs_*_total gauges are its naming, not ours.
  t.deepEqual(
    findings.filter((l) => !/^nodejs_/.test(l)),
    [],
  );
});
