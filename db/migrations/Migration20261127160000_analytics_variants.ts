import { Migration } from '@mikro-orm/migrations';

// The A/B variant as a dimension of the all-dimensions rollups (docs/analytics.md), so that
// `GET /api/analytics/steps` can break a step down by variant. Rows rolled up before this carry the
// zero uuid (no variant): the scheduled rollup recomputes its 48-hour lookback with variants, and the
// `analyticsRollup` workflow run with an explicit window rebuilds any older range.
const ZERO = '00000000-0000-0000-0000-000000000000';
const KEY = '"workspace_id", "{t}", "app_id", "campaign_id", "step_id", "agent_id", "signal_key", "source"';
const METRICS = [
  'discovered',
  'approved',
  'rejected',
  'enrolled',
  'contacted',
  'sent',
  'opened',
  'accepted',
  'replied',
  'failed',
  'bounced',
  'replied_leads',
  'meetings',
];

export class Migration20261127160000_analytics_variants extends Migration {
  override async up(): Promise<void> {
    for (const [table, t] of [
      ['analytics_hours', 'hour'],
      ['analytics_days', 'day'],
    ]) {
      this.addSql(`alter table "${table}" add column "variant_id" uuid not null default '${ZERO}';`);
      this.addSql(`alter table "${table}" alter column "variant_id" drop default;`);
      this.addSql(
        `alter table "${table}" drop constraint "${table}_pkey", add constraint "${table}_pkey" primary key (${KEY.replace('{t}', t).replace('"step_id"', '"step_id", "variant_id"')});`,
      );
    }
  }

  override async down(): Promise<void> {
    // The variants of a step summed back into one row per key.
    for (const [table, t] of [
      ['analytics_hours', 'hour'],
      ['analytics_days', 'day'],
    ]) {
      const key = KEY.replace('{t}', t);
      this.addSql(
        `create temporary table ${table}_summed as select ${key}, ${METRICS.map((m) => `sum("${m}")::int as "${m}"`).join(', ')} from ${table} group by ${key};`,
      );
      this.addSql(`delete from ${table};`);
      this.addSql(
        `alter table "${table}" drop constraint "${table}_pkey", drop column "variant_id", add constraint "${table}_pkey" primary key (${key});`,
      );
      this.addSql(
        `insert into "${table}" (${key}, ${METRICS.map((m) => `"${m}"`).join(', ')}) select * from ${table}_summed;`,
      );
      this.addSql(`drop table ${table}_summed;`);
    }
  }
}
