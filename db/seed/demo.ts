/**
 * The shared, read-only Demo workspace: deterministic (fixed UUIDs, fixed created_at) and
 * re-runnable (every row is an upsert that only touches a row whose seeded columns differ, so a
 * second run changes nothing). Later issues add their sample rows (agents, lists, campaigns, ...)
 * to `DEMO_ROWS` below, in foreign-key order, with ids from the same `demoId()` space.
 *
 * Run it with `npm run admin -- seed-demo`; POST /api/me/workspaces/demo/join seeds it when missing.
 */
import type { EntityManager } from '@mikro-orm/postgresql';

/** Fixed ids: `de300000-0000-4000-8000-<12 hex>` (valid v4 form). */
export const demoId = (n: number) => `de300000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;

export const DEMO_USER_ID = demoId(1);
export const DEMO_WORKSPACE_ID = demoId(2);
export const DEMO_OWNER_MEMBER_ID = demoId(3);
export const DEMO_USER_EMAIL = 'demo@demo.outreach.invalid';
const SEEDED_AT = '2026-01-05T09:00:00.000Z';

interface SeedTable {
  table: string;
  rows: Record<string, unknown>[];
}

/** The demo rows, table by table in foreign-key order. Columns are database column names. */
export const DEMO_ROWS: SeedTable[] = [
  {
    table: 'users',
    // The system owner: no password, so nobody can sign in as it.
    rows: [{ id: DEMO_USER_ID, email: DEMO_USER_EMAIL, name: 'Demo', password_hash: null, timezone: 'UTC', locale: 'en' }],
  },
  {
    table: 'workspaces',
    rows: [{ id: DEMO_WORKSPACE_ID, owner_id: DEMO_USER_ID, name: 'Demo workspace', is_demo: true }],
  },
  {
    table: 'team_members',
    rows: [{ id: DEMO_OWNER_MEMBER_ID, workspace_id: DEMO_WORKSPACE_ID, user_id: DEMO_USER_ID, role: 'owner', all_apps: true, app_ids: '[]' }],
  },
  {
    table: 'subscriptions',
    // The demo shows what a paid workspace looks like (writes are refused anyway).
    rows: [{ id: demoId(4), workspace_id: DEMO_WORKSPACE_ID, plan: 'pro', status: 'active', current_period_end: null }],
  },
  {
    table: 'apps',
    rows: [
      {
        id: demoId(0x100),
        workspace_id: DEMO_WORKSPACE_ID,
        name: 'Ledgerly',
        description: 'Bookkeeping for freelancers: bank sync, invoice matching and quarterly tax estimates in one place.',
        website_url: 'https://ledgerly.example',
      },
      {
        id: demoId(0x101),
        workspace_id: DEMO_WORKSPACE_ID,
        name: 'ShiftPilot',
        description: 'Staff scheduling for restaurants and cafés, with shift swaps, availability and labour-cost forecasts.',
        website_url: 'https://shiftpilot.example',
      },
      {
        id: demoId(0x102),
        workspace_id: DEMO_WORKSPACE_ID,
        name: 'Clinicflow',
        description: 'Patient intake and appointment reminders for small physiotherapy and dental clinics.',
        website_url: 'https://clinicflow.example',
      },
      {
        id: demoId(0x103),
        workspace_id: DEMO_WORKSPACE_ID,
        name: 'Forklift Academy',
        description: 'Online safety certification courses for warehouse teams, tracked per site and per operator.',
        website_url: null,
      },
    ],
  },
  {
    table: 'lead_lists',
    rows: [
      { id: demoId(0x200), workspace_id: DEMO_WORKSPACE_ID, app_id: demoId(0x100), name: 'Freelance designers (EU)', description: 'Approved from the discovery agent' },
      { id: demoId(0x201), workspace_id: DEMO_WORKSPACE_ID, app_id: demoId(0x101), name: 'Restaurant owners', description: null },
    ],
  },
  {
    table: 'contacts',
    rows: [
      ['Lena', 'Vogel', 'Freelance Illustrator', 'DE', 'lena@vogel-illustration.example'],
      ['Tomás', 'Reyes', 'Freelance Product Designer', 'NL', null],
    ].map(([first, last, title, country, email], i) => ({
      id: demoId(0x250 + i),
      workspace_id: DEMO_WORKSPACE_ID,
      email,
      email_normalised: email,
      profile_url: `https://pronet.example/in/demo-contact-${i}`,
      profile_url_normalised: `https://pronet.example/in/demo-contact-${i}`,
      first_name: first,
      last_name: last,
      full_name: `${first} ${last}`,
      title,
      company: null,
      company_domain: null,
      country,
    })),
  },
  {
    table: 'leads',
    rows: [0, 1].map((i) => ({ id: demoId(0x260 + i), workspace_id: DEMO_WORKSPACE_ID, list_id: demoId(0x200), contact_id: demoId(0x250 + i), source: 'discovery' })),
  },
  {
    table: 'discovery_agents',
    rows: [
      {
        id: demoId(0x300),
        workspace_id: DEMO_WORKSPACE_ID,
        app_id: demoId(0x100),
        name: 'Freelancers complaining about bookkeeping',
        status: 'active',
        b2b: false,
        icp_description: 'Independent designers and developers in Europe who invoice clients and do their own books.',
        icp_filters: JSON.stringify({ titles: ['freelance designer', 'freelance developer'], countries: ['Germany', 'France', 'Netherlands'] }),
        config: JSON.stringify({ schedule: 'daily' }),
        list_id: demoId(0x200),
        max_signals: 200,
        require_current_employer: false,
        keywords: 'invoicing, bookkeeping, quarterly taxes, freelance accounting',
      },
      {
        id: demoId(0x301),
        workspace_id: DEMO_WORKSPACE_ID,
        app_id: demoId(0x101),
        name: 'Restaurants hiring shift managers',
        status: 'paused',
        b2b: true,
        icp_description: 'Owners and general managers of restaurants with 10–200 staff.',
        icp_filters: JSON.stringify({ titles: ['owner', 'general manager'], industries: ['restaurants'], company_sizes: ['11-50', '51-200'] }),
        config: null,
        list_id: demoId(0x201),
        max_signals: 100,
        require_current_employer: true,
        keywords: null,
      },
    ],
  },
  {
    table: 'agent_signals',
    rows: [
      { id: demoId(0x310), agent_id: demoId(0x300), key: 'bookkeeping-pain', kind: 'post_keywords', name: 'Posts about bookkeeping pain', keywords: JSON.stringify(['bookkeeping', 'invoice', 'tax return']), filters: null, enabled: true },
      { id: demoId(0x311), agent_id: demoId(0x301), key: 'hiring-shift-managers', kind: 'hiring', name: 'Hiring shift managers', keywords: JSON.stringify(['shift manager']), filters: null, enabled: true },
    ],
  },
  {
    table: 'agent_sources',
    rows: [
      { id: demoId(0x320), agent_id: demoId(0x300), source: 'newsforum', enabled: true, config: JSON.stringify({ queries: ['bookkeeping freelancer', 'invoice software'] }) },
      { id: demoId(0x321), agent_id: demoId(0x301), source: 'pronet', enabled: true, config: JSON.stringify({}) },
    ],
  },

  {
    table: 'discovery_runs',
    rows: [
      {
        id: demoId(0x400),
        workspace_id: DEMO_WORKSPACE_ID,
        app_id: demoId(0x100),
        agent_id: demoId(0x300),
        signal_keys: JSON.stringify(['bookkeeping-pain']),
        trigger: 'schedule',
        status: 'completed',
        candidates: 240,
        qualified: 3,
        rejected: 2,
        duplicates: 235,
        pages: 2,
        error: null,
        started_at: '2026-09-18T06:00:00.000Z',
        finished_at: '2026-09-18T06:00:04.000Z',
      },
    ],
  },
  {
    table: 'discovered_leads',
    rows: [
      ['Mara Lindqvist', 'Freelance Brand Designer', 'SE', 91, 'Is there an invoicing tool that does quarterly VAT for freelancers? I lose a weekend every quarter.'],
      ['Jonas Becker', 'Freelance Web Developer', 'DE', 84, 'Bookkeeping as a freelancer is a second job. What do you all use?'],
      ['Camille Durand', 'Independent UX Designer', 'FR', 77, 'Switching accountants again; matching invoices to bank transactions by hand is painful.'],
    ].map(([name, title, country, score, text], i) => ({
      id: demoId(0x410 + i),
      workspace_id: DEMO_WORKSPACE_ID,
      app_id: demoId(0x100),
      agent_id: demoId(0x300),
      run_id: demoId(0x400),
      signal_key: 'bookkeeping-pain',
      evidence_key: `demo${i}`,
      source: 'newsforum',
      external_id: `demo-author-${i}`,
      dedupe_key: `profile:https://pronet.example/in/demo-${i}`,
      profile_url: `https://pronet.example/in/demo-${i}`,
      email: null,
      full_name: name,
      first_name: String(name).split(' ')[0],
      last_name: String(name).split(' ')[1],
      title,
      company: null,
      company_domain: null,
      country,
      evidence: JSON.stringify({ kind: 'post_keywords', id: `demo-post-${i}`, text, url: `https://newsforum.example/t/demo-${i}`, date: '2026-09-17T12:00:00.000Z' }),
      score,
      reasons: JSON.stringify(['title: matches "freelance designer"', 'keywords: mentions bookkeeping or invoicing']),
      status: 'new',
      promoted: false,
    })),
  },
  {
    table: 'rejected_profiles',
    rows: [
      ['Peter Hall', 'CFO', 'country', 'country: GB is not one of Germany, France, Netherlands'],
      ['Ines Costa', 'Accountant', 'title', 'title: "Accountant" does not match the ICP titles'],
    ].map(([name, title, reason, detail], i) => ({
      id: demoId(0x420 + i),
      workspace_id: DEMO_WORKSPACE_ID,
      app_id: demoId(0x100),
      agent_id: demoId(0x300),
      run_id: demoId(0x400),
      signal_key: 'bookkeeping-pain',
      dedupe_key: `profile:https://pronet.example/in/demo-rejected-${i}`,
      candidate: JSON.stringify({ fullName: name, title, profileUrl: `https://pronet.example/in/demo-rejected-${i}` }),
      score: 30 - i * 10,
      primary_reason: reason,
      reasons: JSON.stringify([detail]),
      promoted_at: null,
      promoted_lead_id: null,
      created_at: '2026-09-18T06:00:03.000Z',
    })),
  },
];

const JSON_COLUMNS = new Set(['app_ids', 'icp_filters', 'config', 'filters', 'signal_keys', 'evidence', 'reasons', 'candidate']);
const TIMESTAMPED = new Set(['users', 'workspaces', 'team_members', 'subscriptions', 'apps', 'lead_lists', 'discovery_agents', 'agent_signals', 'agent_sources', 'discovered_leads', 'contacts', 'leads']);

/**
 * `insert ... on conflict (id) do update ... where <seeded columns differ>`: a no-op on unchanged
 * rows, so `updated_at` moves only when the seed itself changed.
 */
async function upsert(em: EntityManager, table: string, row: Record<string, unknown>): Promise<number> {
  const cols = Object.keys(row);
  const stamped = TIMESTAMPED.has(table);
  const insertCols = stamped ? [...cols, 'created_at', 'updated_at'] : cols;
  const values = stamped ? [...Object.values(row), SEEDED_AT, SEEDED_AT] : Object.values(row);
  const q = (c: string) => `"${c}"`;
  const data = cols.filter((c) => c !== 'id');
  const sql =
    `insert into ${q(table)} (${insertCols.map(q).join(', ')}) values (${insertCols.map((c) => (JSON_COLUMNS.has(c) || (table === 'agent_signals' && c === 'keywords') ? '?::jsonb' : '?')).join(', ')}) ` +
    `on conflict ("id") do update set ${[...data.map((c) => `${q(c)} = excluded.${q(c)}`), ...(stamped ? ['"updated_at" = now()'] : [])].join(', ')} ` +
    `where (${data.map((c) => `${q(table)}.${q(c)}`).join(', ')}) is distinct from (${data.map((c) => `excluded.${q(c)}`).join(', ')})`;
  const res = await em.execute(sql, values, 'run');
  return (res as { affectedRows?: number }).affectedRows ?? 0;
}

/** Seeds (or repairs) the demo workspace. Returns how many rows were inserted or changed. */
export async function seedDemo(em: EntityManager): Promise<{ workspaceId: string; changed: number }> {
  return em.transactional(async (tx) => {
    // One seeder at a time (API joins racing with the CLI).
    await tx.execute('select pg_advisory_xact_lock(hashtext(?))', ['seed:demo']);
    const squatter = await tx.execute<{ id: string }[]>('select id from users where email = ? and id <> ?', [DEMO_USER_EMAIL, DEMO_USER_ID]);
    if (squatter.length) throw new Error(`cannot seed the demo workspace: another account (${squatter[0].id}) uses ${DEMO_USER_EMAIL}`);
    let changed = 0;
    for (const { table, rows } of DEMO_ROWS) for (const row of rows) changed += await upsert(tx, table, row);
    return { workspaceId: DEMO_WORKSPACE_ID, changed };
  });
}
