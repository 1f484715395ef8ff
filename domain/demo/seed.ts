/**
 * The shared, read-only Demo workspace: deterministic (fixed UUIDs, fixed created_at) and
 * re-runnable (every row is an upsert that only touches a row whose seeded columns differ, so a
 * second run changes nothing). Later issues add their sample rows (agents, lists, campaigns, ...)
 * to `DEMO_ROWS` below, in foreign-key order, with ids from the same `demoId()` space.
 *
 * Run it with `npm run admin -- seed-demo`; POST /api/me/workspaces/demo/join seeds it when missing.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { createHash } from 'node:crypto';
import { csvHeader, csvRecords, type ExportContactRow } from '../../lib/contacts-csv.js';
import { rollupAnalytics } from '../analytics/rollup.js';
import { renderTemplate } from '../../lib/templates.js';
import { analyse } from '../lists/import-csv.js';

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
  /** The conflict target of the upsert (default `id`). */
  key?: string[];
}

/** What an enrichment found and wrote (entity field names, as `enriched_fields` records them). */
interface DemoEnriched {
  at: string;
  email?: string;
  phone?: string;
  headline?: string;
  company?: string;
  companyDomain?: string;
}
const ENRICHABLE = ['email', 'phone', 'headline', 'company', 'companyDomain'] as const;
const enrichedFields = (e: DemoEnriched): string[] => ENRICHABLE.filter((f) => e[f]);

/**
 * The agent's discovered leads (ids `0x410 + index`; the first three came from run 0x400, the rest
 * from run 0x401): a review in progress — some new, some approved into the agent's list, some
 * rejected with a reason — and some enriched, the complete ones promoted by their enrichment.
 */
interface DemoDiscovered {
  name: string;
  title: string;
  country: string;
  score: number;
  text: string;
  posted: string;
  /** Known from discovery (otherwise only enrichment fills it). */
  company?: string;
  networkProviderId?: string;
  enriched?: DemoEnriched;
  review?: { status: 'approved' | 'rejected'; at: string; reason?: string };
}
const DEMO_DISCOVERED: DemoDiscovered[] = [
  {
    name: 'Mara Lindqvist',
    title: 'Freelance Brand Designer',
    country: 'SE',
    score: 91,
    text: 'Is there an invoicing tool that does quarterly VAT for freelancers? I lose a weekend every quarter.',
    posted: '2026-09-17T12:00:00.000Z',
    networkProviderId: 'pn-demo-0',
    enriched: {
      at: '2026-09-18T08:05:00.000Z',
      email: 'mara@lindqvist-studio.example',
      phone: '+46 70 555 01 23',
      headline: 'Brand identities for fintech and SaaS start-ups',
      company: 'Lindqvist Studio',
      companyDomain: 'lindqvist-studio.example',
    },
    review: { status: 'approved', at: '2026-09-18T09:30:00.000Z' },
  },
  {
    name: 'Jonas Becker',
    title: 'Freelance Web Developer',
    country: 'DE',
    score: 84,
    text: 'Bookkeeping as a freelancer is a second job. What do you all use?',
    posted: '2026-09-17T12:00:00.000Z',
    enriched: {
      at: '2026-09-18T08:06:00.000Z',
      email: 'jonas@becker-webdev.example',
      headline: 'Shopify and Next.js developer, Berlin',
      company: 'Becker Webdev',
    },
    review: { status: 'approved', at: '2026-09-18T09:31:00.000Z' },
  },
  {
    name: 'Camille Durand',
    title: 'Independent UX Designer',
    country: 'FR',
    score: 77,
    text: 'Switching accountants again; matching invoices to bank transactions by hand is painful.',
    posted: '2026-09-17T12:00:00.000Z',
    networkProviderId: 'pn-demo-2',
    enriched: {
      at: '2026-09-18T08:07:00.000Z',
      email: 'camille@durand-ux.example',
      phone: '+33 6 55 50 12 34',
      headline: 'UX research and design for health-tech',
      company: 'Durand UX',
      companyDomain: 'durand-ux.example',
    },
  },
  {
    name: 'Sofia Marino',
    title: 'Freelance Illustrator',
    country: 'IT',
    score: 74,
    text: 'Every January I swear I will keep my receipts organised. Every March I am in a panic.',
    posted: '2026-09-18T19:40:00.000Z',
    // Found, but no company: not complete enough to be promoted.
    enriched: { at: '2026-09-19T08:10:00.000Z', phone: '+39 347 555 0199', headline: 'Children’s book illustrator' },
  },
  {
    name: 'Pieter de Vries',
    title: 'Freelance Motion Designer',
    country: 'NL',
    score: 70,
    text: 'Any accountant in Amsterdam who understands freelancers with clients abroad? Reverse-charge VAT confuses me.',
    posted: '2026-09-18T15:05:00.000Z',
  },
  {
    name: 'Anna Kowalski',
    title: 'Freelance Copywriter',
    country: 'DE',
    score: 66,
    text: 'Looking for a simple way to send invoices and see which clients have not paid yet.',
    posted: '2026-09-18T10:22:00.000Z',
  },
  {
    name: 'Julien Martin',
    title: 'Junior Graphic Designer',
    country: 'FR',
    score: 58,
    text: 'First year freelancing on the side of my studies. How do you handle invoices?',
    posted: '2026-09-18T21:15:00.000Z',
    review: { status: 'rejected', at: '2026-09-19T09:40:00.000Z', reason: 'Too junior' },
  },
  {
    name: 'Henrik Nilsson',
    title: 'Founder',
    country: 'SE',
    score: 62,
    text: 'We built our own bookkeeping app for freelancers because nothing on the market handled quarterly taxes.',
    posted: '2026-09-18T11:00:00.000Z',
    company: 'Kontera',
    review: { status: 'rejected', at: '2026-09-19T09:41:00.000Z', reason: 'Competitor' },
  },
  {
    name: 'Emily Carter',
    title: 'Freelance Product Designer',
    country: 'US',
    score: 64,
    text: 'Quarterly estimated taxes as a 1099 designer are a nightmare. Any tool that does them for you?',
    posted: '2026-09-18T17:30:00.000Z',
    review: { status: 'rejected', at: '2026-09-19T09:42:00.000Z', reason: 'Outside our market' },
  },
  {
    name: 'Nina Hoffmann',
    title: 'Freelance Photographer',
    country: 'DE',
    score: 71,
    text: 'My bank export and my invoices never match up. Is there software that reconciles them automatically?',
    posted: '2026-09-18T13:45:00.000Z',
    review: { status: 'approved', at: '2026-09-19T09:35:00.000Z' },
  },
];

/**
 * Approved discovered leads → their contact (`0x250 + n`) and list lead (`0x260 + n`) in the agent's
 * list; n 0 and 1 are the list's earlier members.
 */
const APPROVALS: { lead: number; n: number; contactEnriched?: DemoEnriched }[] = [
  { lead: 0, n: 2 },
  {
    lead: 1,
    n: 3,
    contactEnriched: {
      at: '2026-09-18T10:15:00.000Z',
      phone: '+49 151 5550 1234',
      headline: 'Shopify and Next.js developer, Berlin',
    },
  },
  { lead: 9, n: 4 },
];

/**
 * The reviewers' judgement on the list's contacts (docs/contacts.md): fit, pins, and a title a person
 * corrected (so enrichment keeps it), by contact `n`.
 */
const JUDGEMENT: Record<number, Record<string, unknown>> = {
  0: {
    fit_score: 92,
    fit_label: 'good',
    fit_updated_at: '2026-09-19T10:02:00.000Z',
    pinned_at: '2026-09-19T10:02:30.000Z',
  },
  1: {
    fit_score: 55,
    fit_label: 'maybe',
    fit_updated_at: '2026-09-19T10:04:00.000Z',
    edited_fields: JSON.stringify(['title']),
  },
  2: { fit_score: 78, fit_label: 'good', fit_updated_at: '2026-09-19T10:05:00.000Z' },
  3: { fit_score: 20, fit_label: 'bad', fit_updated_at: '2026-09-19T10:06:00.000Z' },
};
const judged = (n: number) => ({
  fit_score: null,
  fit_label: null,
  fit_updated_at: null,
  pinned_at: null,
  edited_fields: '[]',
  ...JUDGEMENT[n],
});

/** "Pieter de Vries" → ["Pieter", "de Vries"]. */
const nameParts = (name: string): [string, string] => [
  name.slice(0, name.indexOf(' ')),
  name.slice(name.indexOf(' ') + 1),
];

/**
 * The promotion rule of domain/enrichment/enrichment.ts (first and last name, company, an email or a profile
 * URL, not rejected). Every demo lead has both names and a profile URL, so the company decides.
 */
const isComplete = (d: DemoDiscovered): boolean =>
  d.review?.status !== 'rejected' && Boolean(d.enriched?.company ?? d.company);

const FAILED_ENRICHMENT_LEAD = 4;
/** `enrichments` ids: 0x500 + discovered-lead index, then the contact's and the failed attempt. */
const ENRICHMENT_IDS = {
  discovered: DEMO_DISCOVERED.map((_, i) => demoId(0x500 + i)),
  contact: demoId(0x510),
  failed: demoId(0x511),
};

function enrichmentRow(
  id: string,
  kind: 'contact' | 'discovered-lead',
  targetId: string,
  finishedAt: string,
  result: Record<string, unknown>,
) {
  const finished = new Date(finishedAt).getTime();
  return {
    id,
    workspace_id: DEMO_WORKSPACE_ID,
    target_kind: kind,
    target_id: targetId,
    attempt: 1,
    fields_kept: '[]',
    error_code: null,
    error_message: null,
    requested_by: DEMO_USER_ID,
    ...result,
    created_at: new Date(finished - 4_000).toISOString(),
    started_at: new Date(finished - 3_000).toISOString(),
    finished_at: finishedAt,
  };
}

/** The demo rows, table by table in foreign-key order. Columns are database column names. */
export const DEMO_ROWS: SeedTable[] = [
  {
    table: 'users',
    // The system owner: no password, so nobody can sign in as it.
    rows: [
      { id: DEMO_USER_ID, email: DEMO_USER_EMAIL, name: 'Demo', password_hash: null, timezone: 'UTC', locale: 'en' },
    ],
  },
  {
    table: 'workspaces',
    rows: [{ id: DEMO_WORKSPACE_ID, owner_id: DEMO_USER_ID, name: 'Demo workspace', is_demo: true }],
  },
  {
    table: 'team_members',
    rows: [
      {
        id: DEMO_OWNER_MEMBER_ID,
        workspace_id: DEMO_WORKSPACE_ID,
        user_id: DEMO_USER_ID,
        role: 'owner',
        all_apps: true,
        app_ids: '[]',
      },
    ],
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
        description:
          'Bookkeeping for freelancers: bank sync, invoice matching and quarterly tax estimates in one place.',
        website_url: 'https://ledgerly.example',
      },
      {
        id: demoId(0x101),
        workspace_id: DEMO_WORKSPACE_ID,
        name: 'ShiftPilot',
        description:
          'Staff scheduling for restaurants and cafés, with shift swaps, availability and labour-cost forecasts.',
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
      {
        id: demoId(0x200),
        workspace_id: DEMO_WORKSPACE_ID,
        app_id: demoId(0x100),
        name: 'Freelance designers (EU)',
        description: 'Approved from the discovery agent',
      },
      {
        id: demoId(0x201),
        workspace_id: DEMO_WORKSPACE_ID,
        app_id: demoId(0x101),
        name: 'Restaurant owners',
        description: null,
      },
    ],
  },
  {
    table: 'contacts',
    rows: [
      ...[
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
        ...judged(i),
      })),
      // The people approved from the agent's discovered leads (what approval copies), one enriched after.
      ...APPROVALS.map((a) => {
        const d = DEMO_DISCOVERED[a.lead];
        const email = d.enriched?.email ?? null;
        const url = `https://pronet.example/in/demo-${a.lead}`;
        return {
          id: demoId(0x250 + a.n),
          workspace_id: DEMO_WORKSPACE_ID,
          email,
          email_normalised: email,
          profile_url: url,
          profile_url_normalised: url,
          first_name: nameParts(d.name)[0],
          last_name: nameParts(d.name)[1],
          full_name: d.name,
          title: d.title,
          headline: a.contactEnriched?.headline ?? null,
          phone: a.contactEnriched?.phone ?? null,
          company: d.enriched?.company ?? d.company ?? null,
          company_domain: d.enriched?.companyDomain ?? null,
          country: d.country,
          enriched_fields: JSON.stringify(a.contactEnriched ? enrichedFields(a.contactEnriched) : []),
          enriched_at: a.contactEnriched?.at ?? null,
          network_provider_id: null,
          ...judged(a.n),
        };
      }),
    ],
  },
  {
    table: 'leads',
    rows: [0, 1, ...APPROVALS.map((a) => a.n)].map((i) => ({
      id: demoId(0x260 + i),
      workspace_id: DEMO_WORKSPACE_ID,
      list_id: demoId(0x200),
      contact_id: demoId(0x250 + i),
      source: 'discovery',
    })),
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
        icp_filters: JSON.stringify({
          titles: ['freelance designer', 'freelance developer'],
          countries: ['Germany', 'France', 'Netherlands'],
        }),
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
        icp_filters: JSON.stringify({
          titles: ['owner', 'general manager'],
          industries: ['restaurants'],
          company_sizes: ['11-50', '51-200'],
        }),
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
      {
        id: demoId(0x310),
        agent_id: demoId(0x300),
        key: 'bookkeeping-pain',
        kind: 'post_keywords',
        name: 'Posts about bookkeeping pain',
        keywords: JSON.stringify(['bookkeeping', 'invoice', 'tax return']),
        filters: null,
        enabled: true,
      },
      {
        id: demoId(0x311),
        agent_id: demoId(0x301),
        key: 'hiring-shift-managers',
        kind: 'hiring',
        name: 'Hiring shift managers',
        keywords: JSON.stringify(['shift manager']),
        filters: null,
        enabled: true,
      },
    ],
  },
  {
    table: 'agent_sources',
    rows: [
      {
        id: demoId(0x320),
        agent_id: demoId(0x300),
        source: 'newsforum',
        enabled: true,
        config: JSON.stringify({ queries: ['bookkeeping freelancer', 'invoice software'] }),
      },
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
      {
        id: demoId(0x401),
        workspace_id: DEMO_WORKSPACE_ID,
        app_id: demoId(0x100),
        agent_id: demoId(0x300),
        signal_keys: JSON.stringify(['bookkeeping-pain']),
        trigger: 'schedule',
        status: 'completed',
        candidates: 186,
        qualified: DEMO_DISCOVERED.length - 3,
        rejected: 0,
        duplicates: 186 - (DEMO_DISCOVERED.length - 3),
        pages: 2,
        error: null,
        started_at: '2026-09-19T06:00:00.000Z',
        finished_at: '2026-09-19T06:00:05.000Z',
      },
    ],
  },
  {
    table: 'discovered_leads',
    rows: DEMO_DISCOVERED.map((d, i) => {
      const approved = d.review?.status === 'approved' ? APPROVALS.find((a) => a.lead === i)! : null;
      return {
        id: demoId(0x410 + i),
        workspace_id: DEMO_WORKSPACE_ID,
        app_id: demoId(0x100),
        agent_id: demoId(0x300),
        run_id: i < 3 ? demoId(0x400) : demoId(0x401),
        signal_key: 'bookkeeping-pain',
        evidence_key: `demo${i}`,
        source: 'newsforum',
        external_id: `demo-author-${i}`,
        dedupe_key: `profile:https://pronet.example/in/demo-${i}`,
        profile_url: `https://pronet.example/in/demo-${i}`,
        email: d.enriched?.email ?? null,
        full_name: d.name,
        first_name: nameParts(d.name)[0],
        last_name: nameParts(d.name)[1],
        title: d.title,
        headline: d.enriched?.headline ?? null,
        phone: d.enriched?.phone ?? null,
        company: d.enriched?.company ?? d.company ?? null,
        company_domain: d.enriched?.companyDomain ?? null,
        country: d.country,
        evidence: JSON.stringify({
          kind: 'post_keywords',
          id: `demo-post-${i}`,
          text: d.text,
          url: `https://newsforum.example/t/demo-${i}`,
          date: d.posted,
        }),
        score: d.score,
        reasons: JSON.stringify(['title: matches "freelance designer"', 'keywords: mentions bookkeeping or invoicing']),
        status: d.review?.status ?? 'new',
        promoted: false,
        approved_lead_id: approved ? demoId(0x260 + approved.n) : null,
        approved_list_id: approved ? demoId(0x200) : null,
        reviewed_at: d.review?.at ?? null,
        reviewed_by: d.review ? DEMO_USER_ID : null,
        reject_reason: d.review?.reason ?? null,
        enriched_fields: JSON.stringify(d.enriched ? enrichedFields(d.enriched) : []),
        enriched_at: d.enriched?.at ?? null,
        network_provider_id: d.networkProviderId ?? null,
        enrichment_promoted_at: d.enriched && isComplete(d) ? d.enriched.at : null,
      };
    }),
  },
  {
    table: 'enrichments',
    rows: [
      // One completed attempt per enriched discovered lead; it promoted the lead when it left it complete.
      ...DEMO_DISCOVERED.flatMap((d, i) =>
        d.enriched
          ? [
              enrichmentRow(ENRICHMENT_IDS.discovered[i], 'discovered-lead', demoId(0x410 + i), d.enriched.at, {
                status: 'completed',
                provider: 'local',
                found: true,
                fields_filled: JSON.stringify(enrichedFields(d.enriched)),
                credits_charged: 1,
                promoted: isComplete(d),
              }),
            ]
          : [],
      ),
      // A contact enriched after its approval (contacts are never promoted).
      ...APPROVALS.flatMap((a) =>
        a.contactEnriched
          ? [
              enrichmentRow(ENRICHMENT_IDS.contact, 'contact', demoId(0x250 + a.n), a.contactEnriched.at, {
                status: 'completed',
                provider: 'local',
                found: true,
                fields_filled: JSON.stringify(enrichedFields(a.contactEnriched)),
                credits_charged: 1,
                promoted: false,
              }),
            ]
          : [],
      ),
      // The provider was down: nothing filled, nothing charged (failEnrichment records no provider).
      enrichmentRow(
        ENRICHMENT_IDS.failed,
        'discovered-lead',
        demoId(0x410 + FAILED_ENRICHMENT_LEAD),
        '2026-09-19T08:12:00.000Z',
        {
          status: 'failed',
          provider: null,
          found: false,
          fields_filled: '[]',
          credits_charged: 0,
          promoted: false,
          error_code: 'provider_unavailable',
          error_message: 'local: unavailable: the enrichment provider did not answer (503); try again later',
        },
      ),
    ],
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

/**
 * A completed export of the list's contacts (docs/contacts.md), its file built by the export's own
 * CSV writer from the seeded rows, so a visitor can download it.
 */
const DEMO_EXPORT_ID = demoId(0x600);
const demoContacts = DEMO_ROWS.find((t) => t.table === 'contacts')!.rows as (Omit<
  ExportContactRow,
  'lists' | 'created_at' | 'updated_at'
> & { id: string })[];
const demoExportRows: ExportContactRow[] = [...demoContacts]
  .sort((a, b) => (a.id < b.id ? -1 : 1))
  .map((c) => ({ ...c, lists: 'Freelance designers (EU)', created_at: SEEDED_AT, updated_at: SEEDED_AT }));
const demoExportFile = [csvHeader(), csvRecords(demoExportRows)];
DEMO_ROWS.push(
  {
    table: 'contact_exports',
    rows: [
      {
        id: DEMO_EXPORT_ID,
        workspace_id: DEMO_WORKSPACE_ID,
        requested_by: DEMO_USER_ID,
        filters: JSON.stringify({ listId: demoId(0x200) }),
        scope_app_ids: null,
        status: 'completed',
        row_count: demoExportRows.length,
        byte_count: demoExportFile[0].length + demoExportFile[1].length,
        next_seq: 2,
        last_contact_id: demoExportRows[demoExportRows.length - 1].id,
        created_at: '2026-09-19T10:10:00.000Z',
        started_at: '2026-09-19T10:10:01.000Z',
        finished_at: '2026-09-19T10:10:02.000Z',
      },
    ],
  },
  {
    table: 'export_file_chunks',
    key: ['export_id', 'seq'],
    rows: demoExportFile.map((data, seq) => ({ export_id: DEMO_EXPORT_ID, seq, data })),
  },
);

/**
 * A finished CSV import into the "Restaurant owners" list (docs/imports.md): four people imported,
 * one row refused (an invalid email). Its preview is the import's own analysis of the same file.
 */
const DEMO_IMPORT_ID = demoId(0x700);
const DEMO_IMPORT_CSV =
  'Email,First name,Last name,Title,Company,Country\r\n' +
  'marta@trattoria-sole.example,Marta,Bianchi,Owner,Trattoria Sole,IT\r\n' +
  'jonas@kaffeehaus-linde.example,Jonas,Berg,General Manager,Kaffeehaus Linde,AT\r\n' +
  'claire@bistro-lumiere.example,Claire,Dubois,Owner,Bistro Lumière,FR\r\n' +
  'not-an-email,Pieter,Jansen,Owner,Eetcafé De Hoek,NL\r\n' +
  'sam@harbour-grill.example,Sam,Okafor,Operations Manager,Harbour Grill,IE\r\n';
const demoImportFile = Buffer.from(DEMO_IMPORT_CSV);
const demoImport = analyse(demoImportFile, { complete: true, utf8: true, bom: false });
const demoImported = DEMO_IMPORT_CSV.split('\r\n')
  .slice(1, -1)
  .map((line) => line.split(','))
  .filter(([email]) => email.includes('@'));
const demoRefused = demoImport.sample.problems;

/**
 * A company decision-maker import for ShiftPilot waiting for review (docs/company-imports.md): two
 * companies searched with their decision-makers found (one approved, one rejected, the rest pending),
 * and one company the network does not know.
 */
const DEMO_CDM_ID = demoId(0x710);
const DEMO_CDM_COMPANIES = [
  {
    name: 'Trattoria Sole',
    domain: 'trattoria-sole.example',
    industry: 'Restaurants',
    size: '11-50',
    people: [
      ['Marco', 'Bianchi', 'Co-Owner', 'founder', 'approved'],
      ['Giulia', 'Ferri', 'Restaurant Manager', 'manager', 'pending'],
    ],
  },
  {
    name: 'Harbour Grill',
    domain: 'harbour-grill.example',
    industry: 'Restaurants',
    size: '51-200',
    people: [
      ['Aoife', 'Byrne', 'General Manager', 'director', 'pending'],
      ['Liam', 'Walsh', 'Head Chef', 'manager', 'rejected'],
    ],
  },
  { name: 'Nowhere Diner', domain: null, industry: null, size: null, people: [] },
] as const;
const CDM_AT = '2026-09-20T08:00:00.000Z';
const CDM_SEARCHED = '2026-09-20T08:00:04.000Z';
const CDM_DECIDED = '2026-09-20T08:30:00.000Z';

DEMO_ROWS.push(
  {
    table: 'contacts',
    rows: demoImported.map(([email, first, last, title, company, country], i) => ({
      id: demoId(0x270 + i),
      workspace_id: DEMO_WORKSPACE_ID,
      email,
      email_normalised: email,
      first_name: first,
      last_name: last,
      full_name: `${first} ${last}`,
      title,
      company,
      country,
    })),
  },
  {
    table: 'leads',
    rows: demoImported.map((_, i) => ({
      id: demoId(0x280 + i),
      workspace_id: DEMO_WORKSPACE_ID,
      list_id: demoId(0x201),
      contact_id: demoId(0x270 + i),
      source: 'import',
    })),
  },
  {
    table: 'list_imports',
    rows: [
      {
        id: DEMO_IMPORT_ID,
        workspace_id: DEMO_WORKSPACE_ID,
        app_id: demoId(0x101),
        user_id: DEMO_USER_ID,
        status: 'completed',
        source: 'upload',
        filename: 'restaurant-owners.csv',
        size_bytes: demoImportFile.length,
        sha256: createHash('sha256').update(demoImportFile).digest('hex'),
        chunk_bytes: 256 * 1024,
        encoding: demoImport.encoding,
        bom: demoImport.bom,
        delimiter: demoImport.delimiter,
        has_header: demoImport.hasHeader,
        header_row: demoImport.headerRow,
        column_count: demoImport.columnCount,
        columns: JSON.stringify(demoImport.columns),
        sample: JSON.stringify({ ...demoImport.sample, existing_contacts: 0 }),
        suggested_mapping: JSON.stringify(demoImport.suggestedMapping),
        mapping: JSON.stringify(demoImport.suggestedMapping),
        dedupe_mode: 'update_empty',
        list_id: demoId(0x201),
        cursor_bytes: demoImportFile.length,
        cursor_row: demoImport.sample.rows_checked + 1,
        rows_read: demoImport.sample.rows_checked,
        created: demoImported.length,
        invalid: demoRefused.length,
        leads_added: demoImported.length,
        chunks: 1,
        write_ms: 4,
        committed_at: '2026-09-19T11:00:00.000Z',
        started_at: '2026-09-19T11:00:01.000Z',
        finished_at: '2026-09-19T11:00:01.000Z',
      },
    ],
  },
  {
    table: 'list_import_problems',
    key: ['list_import_id', 'row'],
    rows: demoRefused.map((p) => ({
      list_import_id: DEMO_IMPORT_ID,
      row: p.row,
      reasons: JSON.stringify(p.reasons),
      values: JSON.stringify(DEMO_IMPORT_CSV.split('\r\n')[p.row - 1].split(',')),
    })),
  },
  {
    table: 'import_file_chunks',
    key: ['list_import_id', 'seq'],
    rows: [{ list_import_id: DEMO_IMPORT_ID, seq: 0, data: demoImportFile }],
  },
  {
    table: 'cdm_imports',
    rows: [
      {
        id: DEMO_CDM_ID,
        workspace_id: DEMO_WORKSPACE_ID,
        app_id: demoId(0x101),
        list_id: demoId(0x201),
        created_by_id: DEMO_USER_ID,
        state: 'ready_for_review',
        run: 1,
        titles: JSON.stringify(['owner', 'general manager']),
        seniorities: JSON.stringify(['founder', 'director', 'manager']),
        max_per_company: 5,
        batch_size: 10,
        company_count: DEMO_CDM_COMPANIES.length,
        batch_count: 1,
        search_started_at: CDM_AT,
        search_finished_at: CDM_SEARCHED,
      },
    ],
  },
  {
    table: 'cdm_import_companies',
    rows: DEMO_CDM_COMPANIES.map((c, position) => ({
      id: demoId(0x720 + position),
      job_id: DEMO_CDM_ID,
      position,
      batch: 0,
      input_name: c.name,
      input_domain: null,
      status: c.domain ? 'done' : 'failed',
      reason: c.domain ? null : 'company_not_found',
      message: c.domain ? null : 'no company of that name on the professional network',
      resolved_name: c.domain ? c.name : null,
      resolved_domain: c.domain,
      resolved_industry: c.industry,
      resolved_size: c.size,
      resolved_key: c.domain,
      members_found: c.people.length,
      attempts: 1,
      searched_at: CDM_SEARCHED,
    })),
  },
  {
    table: 'cdm_import_members',
    rows: DEMO_CDM_COMPANIES.flatMap((c, position) =>
      c.people.map(([first, last, title, seniority, status], rank) => ({
        id: demoId(0x730 + position * 0x10 + rank),
        job_id: DEMO_CDM_ID,
        company_id: demoId(0x720 + position),
        company_position: position,
        batch: 0,
        rank,
        external_id: `demo-${first.toLowerCase()}-${last.toLowerCase()}`,
        profile_url: `https://pronet.example/in/demo-${first.toLowerCase()}-${last.toLowerCase()}`,
        full_name: `${first} ${last}`,
        first_name: first,
        last_name: last,
        title,
        seniority,
        company_name: c.name,
        company_domain: c.domain,
        status,
        decided_at: status === 'pending' ? null : CDM_DECIDED,
        decided_by: status === 'pending' ? null : DEMO_USER_ID,
      })),
    ),
  },
);

/**
 * Two sender accounts (docs/accounts.md): Ledgerly's mailbox, connected and warming up, and a network
 * profile that was disconnected. Their connector is `demo`, which no reconciliation reads.
 */
DEMO_ROWS.push({
  table: 'platform_accounts',
  rows: [
    {
      id: demoId(0x800),
      workspace_id: DEMO_WORKSPACE_ID,
      channel: 'email',
      display_name: 'Mara (Ledgerly sales)',
      time_zone: 'Europe/Berlin',
      working_hours: JSON.stringify({ days: [1, 2, 3, 4, 5], start: '09:00', end: '17:30' }),
      status: 'connected',
      connector: 'demo',
      connector_account_id: 'demo-mailbox-1',
      address: 'mara@ledgerly.example',
      connected_at: '2026-09-15T08:00:00.000Z',
      status_checked_at: '2026-09-20T08:00:00.000Z',
      signature: 'Mara Lind\nLedgerly — bookkeeping for freelancers',
      caps: JSON.stringify({ email: { daily: 40, weekly: 180 } }),
      min_gap_seconds: 120,
      jitter_seconds: 90,
      warmup_started_at: '2026-09-15T08:00:00.000Z',
    },
    {
      id: demoId(0x801),
      workspace_id: DEMO_WORKSPACE_ID,
      channel: 'network',
      display_name: 'Jonas (ShiftPilot)',
      time_zone: 'America/New_York',
      working_hours: JSON.stringify({ days: [1, 2, 3, 4], start: '08:30', end: '16:00' }),
      status: 'disconnected',
      status_reason: 'credentials_expired',
      connector: 'demo',
      connector_account_id: 'demo-profile-1',
      address: 'https://pronet.example/in/jonas-shiftpilot',
      connected_at: '2026-08-01T13:00:00.000Z',
      disconnected_at: '2026-09-19T22:10:00.000Z',
      status_checked_at: '2026-09-19T22:10:00.000Z',
      warmup_started_at: '2026-08-01T13:00:00.000Z',
      warmup_skipped_at: '2026-08-03T09:00:00.000Z',
      invite_withdrawal_days: 21,
    },
  ],
});

/**
 * Campaigns (docs/campaigns.md): Ledgerly's active email sequence from its connected mailbox (email,
 * three business days, a follow-up), fed by the bookkeeping-pain signal; and ShiftPilot's draft
 * network sequence, whose profile is disconnected, so its preflight shows what blocks activation.
 * Ids 0x900–0x92f.
 */
const DEMO_WEEKDAYS = JSON.stringify(
  Object.fromEntries(['1', '2', '3', '4', '5'].map((d) => [d, [{ start: '09:00', end: '17:00' }]])),
);
interface DemoStep {
  id: string;
  position: number;
  type: string;
  config: Record<string, unknown>;
}
const demoSteps: Record<'ledgerly' | 'shiftpilot', DemoStep[]> = {
  ledgerly: [
    {
      id: demoId(0x910),
      position: 0,
      type: 'email',
      config: {
        subject: 'Bookkeeping without the weekend, {{first_name|there}}?',
        body: 'Hi {{first_name|there}},\n\nyou mentioned invoices eating your weekends. Ledgerly matches bank lines to invoices for you and keeps a running tax estimate.\n\nWorth a 15-minute look?\n\n{{sender_name}}',
      },
    },
    { id: demoId(0x911), position: 1, type: 'wait', config: { amount: 3, unit: 'business_days' } },
    {
      id: demoId(0x912),
      position: 2,
      type: 'email',
      config: {
        subject: 'Re: bookkeeping',
        body: 'Hi {{first_name|there}}, a short nudge: happy to show how {{company|your business}} would look in Ledgerly.\n\n{{sender_name}}',
      },
    },
  ],
  shiftpilot: [
    {
      id: demoId(0x920),
      position: 0,
      type: 'invitation',
      config: { note: 'Hi {{first_name|there}}, I work on scheduling tools for restaurants. Happy to connect!' },
    },
    { id: demoId(0x921), position: 1, type: 'condition', config: { check: 'accepted', expect: true } },
    {
      id: demoId(0x922),
      position: 2,
      type: 'message',
      config: {
        body: 'Thanks for connecting, {{first_name|there}}! How do you plan shifts at {{company|your place}} today?',
      },
    },
  ],
};
const versioned = (steps: DemoStep[]) =>
  JSON.stringify(steps.map((x) => ({ ...x, messageMode: null, hasAttachment: false })));
DEMO_ROWS.push(
  {
    table: 'campaigns',
    rows: [
      {
        id: demoId(0x900),
        workspace_id: DEMO_WORKSPACE_ID,
        app_id: demoId(0x100),
        name: 'Freelancers — bookkeeping pain (email)',
        description: 'Two emails three business days apart to freelancers who posted about bookkeeping.',
        status: 'active',
        time_zone: 'Europe/Berlin',
        sending_windows: DEMO_WEEKDAYS,
        account_ids: JSON.stringify([demoId(0x800)]),
        rotation: 'round_robin',
        daily_new_lead_cap: 20,
        stop_on_reply: true,
        country_rule: JSON.stringify({ mode: 'allow', countries: ['DE', 'AT', 'CH', 'NL'] }),
        review_required: false,
        message_mode: 'template',
        exclusive_leads: true,
        step_version: 1,
        activated_at: '2026-09-16T08:00:00.000Z',
      },
      {
        id: demoId(0x901),
        workspace_id: DEMO_WORKSPACE_ID,
        app_id: demoId(0x101),
        name: 'Restaurant owners — connect and ask',
        description: null,
        status: 'draft',
        time_zone: 'America/New_York',
        sending_windows: DEMO_WEEKDAYS,
        account_ids: JSON.stringify([demoId(0x801)]),
        rotation: 'sticky',
        daily_new_lead_cap: null,
        stop_on_reply: true,
        country_rule: null,
        review_required: true,
        message_mode: 'template',
        exclusive_leads: true,
        step_version: 1,
        activated_at: null,
      },
    ],
  },
  {
    table: 'campaign_steps',
    rows: [
      ...demoSteps.ledgerly.map((x) => ({ ...x, campaign_id: demoId(0x900), config: JSON.stringify(x.config) })),
      ...demoSteps.shiftpilot.map((x) => ({ ...x, campaign_id: demoId(0x901), config: JSON.stringify(x.config) })),
    ],
  },
  {
    table: 'campaign_step_versions',
    key: ['campaign_id', 'version'],
    rows: [
      { campaign_id: demoId(0x900), version: 1, steps: versioned(demoSteps.ledgerly), created_at: SEEDED_AT },
      { campaign_id: demoId(0x901), version: 1, steps: versioned(demoSteps.shiftpilot), created_at: SEEDED_AT },
    ],
  },
  {
    table: 'campaign_signals',
    key: ['campaign_id', 'signal_id'],
    rows: [{ campaign_id: demoId(0x900), signal_id: demoId(0x310), created_at: SEEDED_AT }],
  },
);

/**
 * Campaign runtime and the inbox (docs/executor.md, docs/inbox.md, docs/follow-ups.md): Ledgerly's
 * campaign has sent its first email to three leads. Lena replied (her enrollment stopped, the
 * follow-up canceled, a reminder waits for an answer, a note); Mara opened hers and waits for the
 * follow-up; Jonas's mailbox answered out of office (the sequence goes on). One message came from
 * someone who is not a lead. Ids 0xa00–0xa5f.
 */
const LEDGERLY = demoId(0x900);
const MAILBOX = demoId(0x800);
const demoSend = (lead: 'lena' | 'mara' | 'jonas') => ({
  subject: 'Bookkeeping without the weekend, ' + { lena: 'Lena', mara: 'Mara', jonas: 'Jonas' }[lead] + '?',
  body: `Hi ${{ lena: 'Lena', mara: 'Mara', jonas: 'Jonas' }[lead]},\n\nyou mentioned invoices eating your weekends. Ledgerly matches bank lines to invoices for you and keeps a running tax estimate.\n\nWorth a 15-minute look?\n\nMara (Ledgerly sales)`,
});
const DEMO_PEOPLE = {
  lena: { lead: demoId(0x260), contact: demoId(0x250), email: 'lena@vogel-illustration.example' },
  mara: { lead: demoId(0x262), contact: demoId(0x252), email: 'mara@lindqvist-studio.example' },
  jonas: { lead: demoId(0x263), contact: demoId(0x253), email: 'jonas@becker-webdev.example' },
};
const enrollment = (id: number, who: keyof typeof DEMO_PEOPLE, status: string, extra: Record<string, unknown>) => ({
  id: demoId(id),
  workspace_id: DEMO_WORKSPACE_ID,
  campaign_id: LEDGERLY,
  lead_id: DEMO_PEOPLE[who].lead,
  contact_id: DEMO_PEOPLE[who].contact,
  status,
  step_version: 1,
  account_id: MAILBOX,
  run: 1,
  enrolled_at: '2026-09-16T08:00:00.000Z',
  current_position: null,
  current_step_id: null,
  stop_reason: null,
  replied_at: null,
  finished_at: null,
  ...extra,
});
const action = (
  id: number,
  enr: number,
  who: keyof typeof DEMO_PEOPLE,
  step: 0 | 2,
  state: string,
  at: string,
  extra: Record<string, unknown> = {},
) => ({
  id: demoId(id),
  workspace_id: DEMO_WORKSPACE_ID,
  campaign_id: LEDGERLY,
  enrollment_id: demoId(enr),
  lead_id: DEMO_PEOPLE[who].lead,
  step_id: demoId(step === 0 ? 0x910 : 0x912),
  step_position: step,
  step_version: 1,
  type: 'email',
  state,
  due_at: at,
  account_id: MAILBOX,
  content: JSON.stringify({
    recipient: DEMO_PEOPLE[who].email,
    ...(step === 0
      ? demoSend(who)
      : { subject: 'Re: bookkeeping', body: 'A short nudge: happy to show how your business would look in Ledgerly.' }),
  }),
  executed_at: state === 'executed' ? at : null,
  connector_message_id: state === 'executed' ? `demo-msg-${who}` : null,
  connector_thread_id: state === 'executed' ? `demo-thread-${who}` : null,
  attempts: state === 'executed' ? 1 : 0,
  ...extra,
});
const message = (id: number, conversation: number, m: Record<string, unknown>) => ({
  id: demoId(id),
  workspace_id: DEMO_WORKSPACE_ID,
  conversation_id: demoId(conversation),
  platform_account_id: MAILBOX,
  origin: null,
  state: null,
  sender_name: null,
  subject: null,
  attachments: '[]',
  lead_id: null,
  scheduled_action_id: null,
  historical: false,
  error_code: null,
  created_by: null,
  created_at: m.sent_at,
  ...m,
});
const conversation = (id: number, m: Record<string, unknown>) => ({
  id: demoId(id),
  workspace_id: DEMO_WORKSPACE_ID,
  platform_account_id: MAILBOX,
  channel: 'email',
  counterpart_name: null,
  contact_id: null,
  lead_id: null,
  campaign_id: null,
  last_inbound_at: null,
  last_outbound_at: null,
  read_at: null,
  ai_reply: null,
  ...m,
});
const LENA_REPLY = 'Hi Mara, yes, the VAT part sounds great. Could you show me on Thursday afternoon?';
const JONAS_OOO = 'Automatic reply: I am out of the office until 28 September with limited access to email.';
DEMO_ROWS.push(
  {
    table: 'enrollments',
    rows: [
      enrollment(0xa00, 'lena', 'replied', {
        stop_reason: 'replied',
        replied_at: '2026-09-17T10:20:00.000Z',
        finished_at: '2026-09-17T10:20:00.000Z',
      }),
      enrollment(0xa01, 'mara', 'active', { current_position: 1, current_step_id: demoId(0x911) }),
      enrollment(0xa02, 'jonas', 'active', { current_position: 1, current_step_id: demoId(0x911) }),
    ],
  },
  {
    table: 'scheduled_actions',
    rows: [
      action(0xa10, 0xa00, 'lena', 0, 'executed', '2026-09-16T09:12:00.000Z', {
        replied_at: '2026-09-17T10:20:00.000Z',
      }),
      action(0xa11, 0xa00, 'lena', 2, 'canceled', '2026-09-21T09:00:00.000Z'),
      action(0xa12, 0xa01, 'mara', 0, 'executed', '2026-09-16T09:20:00.000Z', {
        opened_at: '2026-09-16T11:02:00.000Z',
      }),
      action(0xa13, 0xa01, 'mara', 2, 'planned', '2026-09-21T09:00:00.000Z'),
      action(0xa14, 0xa02, 'jonas', 0, 'executed', '2026-09-17T09:05:00.000Z'),
      action(0xa15, 0xa02, 'jonas', 2, 'planned', '2026-09-22T09:00:00.000Z'),
    ],
  },
  {
    table: 'conversations',
    rows: [
      conversation(0xa20, {
        connector_thread_id: 'demo-thread-lena',
        counterpart: DEMO_PEOPLE.lena.email,
        counterpart_name: 'Lena Vogel',
        contact_id: DEMO_PEOPLE.lena.contact,
        lead_id: DEMO_PEOPLE.lena.lead,
        campaign_id: LEDGERLY,
        last_message_at: '2026-09-17T10:20:00.000Z',
        last_message_preview: LENA_REPLY,
        last_direction: 'in',
        last_inbound_at: '2026-09-17T10:20:00.000Z',
        last_outbound_at: '2026-09-16T09:12:00.000Z',
        unread_count: 1,
      }),
      conversation(0xa21, {
        connector_thread_id: 'demo-thread-jonas',
        counterpart: DEMO_PEOPLE.jonas.email,
        counterpart_name: 'Jonas Becker',
        contact_id: DEMO_PEOPLE.jonas.contact,
        lead_id: DEMO_PEOPLE.jonas.lead,
        campaign_id: LEDGERLY,
        last_message_at: '2026-09-17T09:06:00.000Z',
        last_message_preview: JONAS_OOO,
        last_direction: 'in',
        last_inbound_at: '2026-09-17T09:06:00.000Z',
        last_outbound_at: '2026-09-17T09:05:00.000Z',
        unread_count: 0,
        read_at: '2026-09-17T12:00:00.000Z',
      }),
      conversation(0xa22, {
        connector_thread_id: 'demo-thread-printshop',
        counterpart: 'hello@printshop.example',
        last_message_at: '2026-09-18T14:40:00.000Z',
        last_message_preview: 'Do you offer discounts for print studios with several freelancers?',
        last_direction: 'in',
        last_inbound_at: '2026-09-18T14:40:00.000Z',
        unread_count: 1,
      }),
    ],
  },
  {
    table: 'inbox_messages',
    rows: [
      message(0xa30, 0xa20, {
        connector_message_id: 'demo-msg-lena',
        direction: 'out',
        kind: 'sent',
        origin: 'campaign',
        sender: 'mara@ledgerly.example',
        subject: demoSend('lena').subject,
        body: demoSend('lena').body,
        sent_at: '2026-09-16T09:12:00.000Z',
        lead_id: DEMO_PEOPLE.lena.lead,
        scheduled_action_id: demoId(0xa10),
      }),
      message(0xa31, 0xa20, {
        connector_message_id: 'demo-msg-lena-reply',
        direction: 'in',
        kind: 'reply',
        sender: DEMO_PEOPLE.lena.email,
        body: LENA_REPLY,
        sent_at: '2026-09-17T10:20:00.000Z',
        lead_id: DEMO_PEOPLE.lena.lead,
      }),
      message(0xa32, 0xa21, {
        connector_message_id: 'demo-msg-jonas',
        direction: 'out',
        kind: 'sent',
        origin: 'campaign',
        sender: 'mara@ledgerly.example',
        subject: demoSend('jonas').subject,
        body: demoSend('jonas').body,
        sent_at: '2026-09-17T09:05:00.000Z',
        lead_id: DEMO_PEOPLE.jonas.lead,
        scheduled_action_id: demoId(0xa14),
      }),
      message(0xa33, 0xa21, {
        connector_message_id: 'demo-msg-jonas-ooo',
        direction: 'in',
        kind: 'auto_reply',
        sender: DEMO_PEOPLE.jonas.email,
        body: JONAS_OOO,
        sent_at: '2026-09-17T09:06:00.000Z',
        lead_id: DEMO_PEOPLE.jonas.lead,
      }),
      message(0xa34, 0xa22, {
        connector_message_id: 'demo-msg-printshop',
        direction: 'in',
        kind: 'reply',
        sender: 'hello@printshop.example',
        body: 'Do you offer discounts for print studios with several freelancers?',
        sent_at: '2026-09-18T14:40:00.000Z',
      }),
    ],
  },
  {
    table: 'follow_up_reminders',
    rows: [
      {
        id: demoId(0xa40),
        workspace_id: DEMO_WORKSPACE_ID,
        lead_id: DEMO_PEOPLE.lena.lead,
        kind: 'reply_waiting',
        conversation_id: demoId(0xa20),
        meeting_id: null,
        state: 'open',
        due_at: '2026-09-18T10:20:00.000Z',
        summary: LENA_REPLY,
        resolved_at: null,
        resolved_by: null,
        created_at: '2026-09-17T10:20:00.000Z',
      },
    ],
  },
  {
    table: 'lead_notes',
    rows: [
      {
        id: demoId(0xa50),
        workspace_id: DEMO_WORKSPACE_ID,
        lead_id: DEMO_PEOPLE.lena.lead,
        author_id: DEMO_USER_ID,
        body: 'Prefers Thursday afternoons; ask about the quarterly VAT export.',
        created_at: '2026-09-17T11:00:00.000Z',
      },
    ],
  },
  {
    table: 'inbox_syncs',
    key: ['account_id'],
    rows: [
      {
        account_id: MAILBOX,
        workspace_id: DEMO_WORKSPACE_ID,
        state: 'completed',
        run: 1,
        cursor: null,
        pages: 1,
        chats_seen: 3,
        messages_stored: 5,
        error_message: null,
        started_at: '2026-09-18T15:00:00.000Z',
        finished_at: '2026-09-18T15:00:03.000Z',
        updated_at: '2026-09-18T15:00:03.000Z',
      },
    ],
  },
);

/**
 * Meetings and a booking provider (docs/meetings.md): the scheduler connected by API key (its key a
 * placeholder: the Demo never calls it), Lena's booked call that was held, Mara's booked demo ahead,
 * a call with Jonas logged by hand that still needs its outcome (a follow-up), one canceled booking,
 * an unmatched booking from someone who is not a lead, and the backfill that imported them.
 * Ids 0xb00–0xb3f.
 */
const SCHEDULER = demoId(0xb00);
const booking = (
  n: number,
  who: keyof typeof DEMO_PEOPLE | null,
  title: string,
  start: string,
  status: 'scheduled' | 'canceled' = 'scheduled',
) => {
  const end = new Date(Date.parse(start) + 30 * 60_000).toISOString();
  const email = who ? DEMO_PEOPLE[who].email : 'olga@printshop.example';
  return {
    id: `demo-bk-${n}`,
    status,
    title,
    start_time: start,
    end_time: end,
    location: 'https://meet.example/ledgerly',
    attendees: [{ email, name: who ? null : 'Olga Brandt' }],
    tracking: null,
    updated_at: '2026-09-18T12:00:00.000Z',
  };
};
const BOOKINGS = {
  lena: booking(1, 'lena', 'Ledgerly walkthrough with Lena', '2026-09-24T13:00:00.000Z'),
  mara: booking(2, 'mara', 'Ledgerly demo with Mara', '2030-01-15T10:00:00.000Z'),
  canceled: booking(3, 'mara', 'Ledgerly demo (first slot)', '2026-09-23T10:00:00.000Z', 'canceled'),
  stranger: booking(4, null, 'Question about studio plans', '2026-09-25T09:00:00.000Z'),
};
const meeting = (
  id: number,
  who: keyof typeof DEMO_PEOPLE,
  b: { title: string; start_time: string; end_time: string; id?: string },
  extra: Record<string, unknown>,
) => ({
  id: demoId(id),
  workspace_id: DEMO_WORKSPACE_ID,
  lead_id: DEMO_PEOPLE[who].lead,
  contact_id: DEMO_PEOPLE[who].contact,
  title: b.title,
  starts_at: b.start_time,
  ends_at: b.end_time,
  status: 'scheduled',
  outcome: null,
  outcome_at: null,
  location: null,
  notes: null,
  source: 'booking',
  booking_provider_id: SCHEDULER,
  provider: 'scheduler',
  external_id: b.id ?? null,
  external_updated_at: '2026-09-18T12:00:00.000Z',
  created_by_user_id: null,
  canceled_at: null,
  ...extra,
});
const bookingEvent = (id: number, b: ReturnType<typeof booking>, m: Record<string, unknown>) => ({
  id: demoId(id),
  workspace_id: DEMO_WORKSPACE_ID,
  booking_provider_id: SCHEDULER,
  provider: 'scheduler',
  event_id: `demo-evt-${b.id}`,
  source: 'backfill',
  type: b.status === 'canceled' ? 'booking.canceled' : 'booking.created',
  booking_id: b.id,
  payload: JSON.stringify(b),
  title: b.title,
  starts_at: b.start_time,
  ends_at: b.end_time,
  booking_status: b.status,
  booking_updated_at: b.updated_at,
  attendee_email: b.attendees[0].email,
  attendee_name: b.attendees[0].name,
  received_at: '2026-09-18T12:00:05.000Z',
  handled_at: '2026-09-18T12:00:06.000Z',
  decided_at: null,
  decided_by_user_id: null,
  lead_id: null,
  meeting_id: null,
  effect: null,
  matched_by: null,
  ...m,
});
DEMO_ROWS.push(
  {
    table: 'booking_providers',
    rows: [
      {
        id: SCHEDULER,
        workspace_id: DEMO_WORKSPACE_ID,
        provider: 'scheduler',
        auth_kind: 'api_key',
        status: 'connected',
        status_reason: null,
        account_id: 'scheduler_demo',
        account_name: 'Ledgerly sales calendar',
        account_email: 'mara@ledgerly.example',
        credentials_sealed: 'demo',
        credential_hint: 'sch_…demo',
        connected_by_user_id: DEMO_USER_ID,
        webhook_id: null,
        webhook_secret_sealed: null,
        webhook_secret_hint: null,
        webhook_registered_at: null,
        last_verified_at: '2026-09-18T12:00:00.000Z',
      },
    ],
  },
  {
    table: 'meetings',
    rows: [
      meeting(0xb10, 'lena', BOOKINGS.lena, {
        outcome: 'held',
        outcome_at: '2026-09-24T14:00:00.000Z',
        location: BOOKINGS.lena.location,
        notes: 'Wants the VAT export; trial started.',
      }),
      meeting(0xb11, 'mara', BOOKINGS.mara, { location: BOOKINGS.mara.location }),
      meeting(0xb12, 'mara', BOOKINGS.canceled, { status: 'canceled', canceled_at: '2026-09-19T08:00:00.000Z' }),
      meeting(
        0xb13,
        'jonas',
        {
          title: 'Call with Jonas (logged by hand)',
          start_time: '2026-09-19T15:00:00.000Z',
          end_time: '2026-09-19T15:20:00.000Z',
        },
        {
          source: 'manual',
          booking_provider_id: null,
          provider: null,
          external_id: null,
          external_updated_at: null,
          created_by_user_id: DEMO_USER_ID,
        },
      ),
    ],
  },
  {
    table: 'booking_provider_events',
    rows: [
      bookingEvent(0xb20, BOOKINGS.lena, {
        state: 'matched',
        effect: 'created',
        matched_by: 'attendee_email',
        lead_id: DEMO_PEOPLE.lena.lead,
        meeting_id: demoId(0xb10),
      }),
      bookingEvent(0xb21, BOOKINGS.mara, {
        state: 'matched',
        effect: 'created',
        matched_by: 'attendee_email',
        lead_id: DEMO_PEOPLE.mara.lead,
        meeting_id: demoId(0xb11),
      }),
      bookingEvent(0xb22, BOOKINGS.canceled, {
        state: 'matched',
        effect: 'created',
        matched_by: 'attendee_email',
        lead_id: DEMO_PEOPLE.mara.lead,
        meeting_id: demoId(0xb12),
      }),
      bookingEvent(0xb23, BOOKINGS.stranger, { state: 'unmatched' }),
    ],
  },
  {
    table: 'booking_backfills',
    rows: [
      {
        id: demoId(0xb30),
        workspace_id: DEMO_WORKSPACE_ID,
        booking_provider_id: SCHEDULER,
        client_key: null,
        user_id: DEMO_USER_ID,
        since: '2026-08-18T00:00:00.000Z',
        status: 'completed',
        cursor: null,
        pages: 1,
        bookings: 4,
        created: 3,
        updated: 0,
        unchanged: 0,
        unmatched: 1,
        invalid: 0,
        error_code: null,
        error_message: null,
        started_at: '2026-09-18T12:00:00.000Z',
        finished_at: '2026-09-18T12:00:06.000Z',
      },
    ],
  },
);

/**
 * Integrations (docs/integrations.md): the partner CRM installed and synced (its cursors), a
 * Slack-style channel; one field conflict waiting for a person (Lena's title, edited in the CRM) and
 * a possible duplicate already confirmed as the CRM's existing record of Mara.
 */
const PARTNER_CRM = demoId(0xc00);
const demoIntegration = (
  id: string,
  provider: string,
  name: string,
  hint: Record<string, unknown>,
  extra: Record<string, unknown> = {},
) => ({
  id,
  workspace_id: DEMO_WORKSPACE_ID,
  provider,
  name,
  status: 'active',
  status_reason: null,
  credentials_sealed: null,
  credential_hint: JSON.stringify(hint),
  account_id: null,
  account_name: null,
  created_by_user_id: DEMO_USER_ID,
  last_verified_at: '2026-09-18T11:00:00.000Z',
  last_tested_at: '2026-09-18T11:01:00.000Z',
  last_test_ok: true,
  last_sync_at: null,
  created_at: SEEDED_AT,
  updated_at: SEEDED_AT,
  ...extra,
});
const partnerEvent = (
  n: number,
  who: keyof typeof DEMO_PEOPLE,
  kind: string,
  details: Record<string, unknown>,
  confirmed: boolean,
) => ({
  id: demoId(0xc10 + n),
  workspace_id: DEMO_WORKSPACE_ID,
  integration_id: PARTNER_CRM,
  kind,
  record_kind: 'lead',
  record_id: DEMO_PEOPLE[who].lead,
  state: confirmed ? 'confirmed' : 'pending',
  details: JSON.stringify(details),
  resolution: confirmed ? 'link_existing' : null,
  confirmed_by_user_id: confirmed ? DEMO_USER_ID : null,
  confirmed_at: confirmed ? '2026-09-19T09:00:00.000Z' : null,
  created_at: '2026-09-18T12:15:00.000Z',
  updated_at: confirmed ? '2026-09-19T09:00:00.000Z' : '2026-09-18T12:15:00.000Z',
});
DEMO_ROWS.push(
  {
    table: 'integrations',
    rows: [
      demoIntegration(
        PARTNER_CRM,
        'partner',
        'Partner CRM',
        { access_token: 'lpt_…demo' },
        { account_id: 'partner_demo', account_name: 'Ledgerly CRM', last_sync_at: '2026-09-18T12:15:00.000Z' },
      ),
      demoIntegration(demoId(0xc01), 'slack_webhook', '#sales-wins', {
        url: 'https://hooks.slack.com/…demo',
        secret: null,
      }),
    ],
  },
  {
    table: 'partner_sync_cursors',
    key: ['integration_id', 'record_kind'],
    rows: (['lead', 'reply', 'meeting'] as const).map((kind, i) => ({
      id: demoId(0xc05 + i),
      integration_id: PARTNER_CRM,
      record_kind: kind,
      cursor_at: '2026-09-18T12:00:00.000Z',
      cursor_id: demoId(0xc0f),
      pushed: [2, 1, 3][i],
      updated_at: '2026-09-18T12:15:00.000Z',
    })),
  },
  {
    table: 'partner_events',
    rows: [
      partnerEvent(
        0,
        'lena',
        'field_conflict',
        {
          partner_id: 'p_demo_lena',
          fields: [{ field: 'title', ours: 'Illustrator', theirs: 'Owner, Vogel Illustration' }],
        },
        false,
      ),
      partnerEvent(
        1,
        'mara',
        'possible_duplicate',
        {
          partner_id: 'p_demo_mara',
          match: 'email',
          partner_record: { email: DEMO_PEOPLE.mara.email, full_name: 'Mara Lindqvist' },
        },
        true,
      ),
    ],
  },
);

/**
 * A finished A/B test (docs/campaigns.md "Demo workspace", docs/tracking.md): Ledgerly's subject-line
 * test to freelance developers, completed. One email step with two variants — A a short statement, B a
 * question, the same body with one link — and a winner rule on replies (at least 5 sends each, 90 %),
 * then a follow-up two business days later. Sent in each recipient's morning (`window_time_zone`
 * recipient, the contacts' own zones) with opens and clicks tracked: some opens are Apple Mail Privacy
 * Protection prefetching at delivery and one mailbox's security gateway opens and clicks everything,
 * all classified machine (so `opened_at` / `clicked_at` stay null for them). Twelve people enrolled at
 * activation, split by the planner's hash (5 A, 7 B) under a daily cap of 6; when two more were
 * enrolled on Thursday the rule held (B 4 replies of 7, A 0 of 5: z 2.07 ≥ 1.2816), so it recorded B
 * as the winner and both got B. The campaign was completed by hand on Friday: the one enrollment still
 * waiting for its follow-up stopped. Ids 0xd00–0xd7f (contacts 0xd10+, leads 0xd20+, enrollments 0xd30+,
 * first sends 0xd40+, follow-ups 0xd50+, tracking events 0xd60–0xd7f).
 */
const AB_CAMPAIGN = demoId(0xd00);
const AB_LIST = demoId(0xd01);
const AB_STEP = demoId(0xd02);
const AB_FOLLOW_UP = demoId(0xd04);
export const DEMO_AB_TEST = {
  campaignId: AB_CAMPAIGN,
  stepId: AB_STEP,
  variantA: demoId(0xd05),
  variantB: demoId(0xd06),
};
const AB_ACTIVATED = '2026-09-15T07:00:00.000Z';
/** When the two late enrollments were planned: the rule held, and B was recorded. */
const AB_DECIDED = '2026-09-17T08:00:01.000Z';
const AB_COMPLETED = '2026-09-18T15:00:00.000Z';
const AB_BODY =
  'Hi {{first_name|there}},\n\nLedgerly syncs your bank, matches payments to invoices and keeps a running tax estimate, so the end of a quarter takes minutes, not a weekend: https://ledgerly.example/freelancers\n\n{{sender_name}}';
const AB_VARIANTS = [
  {
    id: DEMO_AB_TEST.variantA,
    name: 'Short subject',
    weight: 1,
    config: { subject: 'Ledgerly: bookkeeping for freelance developers', body: AB_BODY },
  },
  {
    id: DEMO_AB_TEST.variantB,
    name: 'Question subject',
    weight: 1,
    config: { subject: 'Still doing your books on Sundays, {{first_name|there}}?', body: AB_BODY },
  },
];
const AB_RULE = { metric: 'reply_rate', min_sends: 5, confidence: 0.9 };
const abSteps: (DemoStep & { variants: typeof AB_VARIANTS | null; winnerRule: typeof AB_RULE | null })[] = [
  {
    id: AB_STEP,
    position: 0,
    type: 'email',
    config: AB_VARIANTS[0].config,
    variants: AB_VARIANTS,
    winnerRule: AB_RULE,
  },
  {
    id: demoId(0xd03),
    position: 1,
    type: 'wait',
    config: { amount: 2, unit: 'business_days' },
    variants: null,
    winnerRule: null,
  },
  {
    id: AB_FOLLOW_UP,
    position: 2,
    type: 'email',
    config: {
      subject: 'Re: your books',
      body: 'Hi {{first_name|there}}, a short nudge: the two-minute tour is here: https://ledgerly.example/tour\n\n{{sender_name}}',
    },
    variants: null,
    winnerRule: null,
  },
];

interface AbEvent {
  kind: 'open' | 'click';
  cls: 'human' | 'machine';
  reason: string | null;
  source: string | null;
  at: string;
}
const seen = (kind: AbEvent['kind'], at: string, source: string | null = null): AbEvent => ({
  kind,
  cls: 'human',
  reason: null,
  source,
  at,
});
/** Apple Mail Privacy Protection loading the pixel at delivery. */
const prefetch = (at: string): AbEvent => ({
  kind: 'open',
  cls: 'machine',
  reason: 'proxy_prefetch',
  source: 'apple_mpp',
  at,
});
/** A security gateway fetching the pixel and following every link at delivery. */
const scanned = (kind: AbEvent['kind'], at: string): AbEvent => ({
  kind,
  cls: 'machine',
  reason: 'scanner_agent',
  source: 'security_gateway',
  at,
});
interface AbPerson {
  name: string;
  title: string;
  country: string;
  timeZone: string;
  email: string;
  variant: 'A' | 'B';
  /** The first email's send (its recipient's first morning window on the day the daily cap allowed). */
  sent: string;
  events?: AbEvent[];
  replied?: string;
  followUpEvents?: AbEvent[];
}
const AB_PEOPLE: AbPerson[] = [
  // Tuesday 15 September, 09:00 in each recipient's zone (the sender's hours permitting).
  {
    name: 'Lukas Brandt',
    title: 'Freelance Backend Developer',
    country: 'DE',
    timeZone: 'Europe/Berlin',
    email: 'lukas@brandt-backend.example',
    variant: 'A',
    sent: '2026-09-15T07:00:40.000Z',
    events: [seen('open', '2026-09-15T07:41:00.000Z')],
  },
  {
    name: 'Sara Lindgren',
    title: 'Freelance iOS Developer',
    country: 'SE',
    timeZone: 'Europe/Stockholm',
    email: 'sara@lindgren-apps.example',
    variant: 'A',
    sent: '2026-09-15T07:03:20.000Z',
    events: [prefetch('2026-09-15T07:04:05.000Z')],
    followUpEvents: [prefetch('2026-09-17T07:04:02.000Z')],
  },
  {
    name: 'Tom Whitfield',
    title: 'Freelance Frontend Developer',
    country: 'GB',
    timeZone: 'Europe/London',
    email: 'tom@whitfield.example',
    variant: 'B',
    sent: '2026-09-15T08:00:20.000Z',
    events: [seen('open', '2026-09-15T12:55:00.000Z', 'google_proxy')],
    replied: '2026-09-15T13:40:00.000Z',
  },
  {
    name: 'Inês Carvalho',
    title: 'Freelance Web Developer',
    country: 'PT',
    timeZone: 'Europe/Lisbon',
    email: 'ines@carvalho-web.example',
    variant: 'B',
    sent: '2026-09-15T08:03:15.000Z',
    events: [prefetch('2026-09-15T08:04:00.000Z'), seen('open', '2026-09-15T18:20:00.000Z', 'apple_mpp')],
  },
  {
    name: 'Matteo Ricci',
    title: 'Freelance Full-Stack Developer',
    country: 'IT',
    timeZone: 'Europe/Rome',
    email: 'matteo@ricci-dev.example',
    variant: 'A',
    sent: '2026-09-15T07:06:10.000Z',
    events: [seen('open', '2026-09-15T09:30:00.000Z'), seen('click', '2026-09-15T09:31:00.000Z')],
    followUpEvents: [seen('open', '2026-09-17T10:02:00.000Z')],
  },
  {
    name: 'Eva Novak',
    title: 'Freelance Data Engineer',
    country: 'CZ',
    timeZone: 'Europe/Prague',
    email: 'eva@novak-data.example',
    variant: 'A',
    sent: '2026-09-15T07:09:00.000Z',
  },
  // Wednesday 16 September: the other six (the daily cap of 6 new leads).
  {
    name: 'Ruben Janssen',
    title: 'Freelance DevOps Engineer',
    country: 'NL',
    timeZone: 'Europe/Amsterdam',
    email: 'ruben@janssen-ops.example',
    variant: 'B',
    sent: '2026-09-16T07:01:00.000Z',
    events: [seen('open', '2026-09-16T09:50:00.000Z')],
    replied: '2026-09-16T10:15:00.000Z',
  },
  {
    name: 'Aino Virtanen',
    title: 'Freelance Android Developer',
    country: 'FI',
    timeZone: 'Europe/Helsinki',
    email: 'aino@virtanen-apps.example',
    variant: 'B',
    sent: '2026-09-16T07:04:10.000Z',
    events: [prefetch('2026-09-16T07:05:00.000Z')],
  },
  {
    name: 'Clara Weiss',
    title: 'Freelance Shopify Developer',
    country: 'AT',
    timeZone: 'Europe/Vienna',
    email: 'clara@weiss-shops.example',
    variant: 'B',
    sent: '2026-09-16T07:07:05.000Z',
    events: [seen('open', '2026-09-16T14:20:00.000Z'), seen('click', '2026-09-16T14:22:00.000Z')],
    replied: '2026-09-16T14:50:00.000Z',
  },
  {
    name: 'Pablo Ortega',
    title: 'Freelance Python Developer',
    country: 'ES',
    timeZone: 'Europe/Madrid',
    email: 'pablo@ortega-agency.example',
    variant: 'B',
    sent: '2026-09-16T07:10:05.000Z',
    events: [scanned('open', '2026-09-16T07:10:20.000Z'), scanned('click', '2026-09-16T07:10:21.000Z')],
    followUpEvents: [scanned('open', '2026-09-18T07:10:19.000Z'), scanned('click', '2026-09-18T07:10:20.000Z')],
  },
  {
    name: 'Niamh Kelly',
    title: 'Freelance WordPress Developer',
    country: 'IE',
    timeZone: 'Europe/Dublin',
    email: 'niamh@kelly-sites.example',
    variant: 'A',
    sent: '2026-09-16T08:01:30.000Z',
    events: [seen('open', '2026-09-16T16:45:00.000Z')],
  },
  {
    name: 'Jakub Nowak',
    title: 'Freelance Game Developer',
    country: 'PL',
    timeZone: 'Europe/Warsaw',
    email: 'jakub@nowak-games.example',
    variant: 'B',
    sent: '2026-09-16T07:13:05.000Z',
    events: [prefetch('2026-09-16T07:14:00.000Z'), seen('open', '2026-09-17T06:55:00.000Z', 'apple_mpp')],
    replied: '2026-09-17T07:20:00.000Z',
  },
  // Thursday 17 September: enrolled after the rule chose B, so both get B.
  {
    name: 'Léa Fontaine',
    title: 'Freelance React Developer',
    country: 'FR',
    timeZone: 'Europe/Paris',
    email: 'lea@fontaine-react.example',
    variant: 'B',
    sent: '2026-09-17T08:00:30.000Z',
    events: [seen('open', '2026-09-17T11:50:00.000Z')],
    replied: '2026-09-17T12:30:00.000Z',
  },
  {
    name: 'Dimitris Pappas',
    title: 'Freelance Embedded Developer',
    country: 'GR',
    timeZone: 'Europe/Athens',
    email: 'dimitris@pappas-embedded.example',
    variant: 'B',
    sent: '2026-09-17T08:06:00.000Z',
  },
];
/** The winner as recorded: the rule's test on the sends and replies at AB_DECIDED (test/api/demo-ab-test.test.ts recomputes it). */
const AB_EVIDENCE = { rule: AB_RULE, z: 2.07, rates: { [DEMO_AB_TEST.variantA]: 0, [DEMO_AB_TEST.variantB]: 0.5714 } };

/** `at` plus n business days (Monday–Friday), the wait step's unit. */
const addBusinessDays = (at: string, n: number) => {
  const d = new Date(at);
  while (n > 0) {
    d.setUTCDate(d.getUTCDate() + 1);
    if (d.getUTCDay() !== 0 && d.getUTCDay() !== 6) n--;
  }
  return d.toISOString();
};
const abFirstHuman = (events: AbEvent[] | undefined, kind: AbEvent['kind']) =>
  events?.find((e) => e.kind === kind && e.cls === 'human')?.at ?? null;
const abRun = AB_PEOPLE.map((p, i) => {
  const [first, last] = nameParts(p.name);
  const values = {
    first_name: first,
    last_name: last,
    full_name: p.name,
    title: p.title,
    country: p.country,
    email: p.email,
    sender_name: 'Mara (Ledgerly sales)',
  };
  const render = (config: Record<string, unknown>) => ({
    recipient: p.email,
    subject: renderTemplate(String(config.subject), values).text,
    body: renderTemplate(String(config.body), values).text,
  });
  const followUpAt = addBusinessDays(p.sent, 2);
  // The follow-up went out unless a reply stopped the sequence first or the campaign was completed before it was due.
  const followUpSent = !p.replied && followUpAt < AB_COMPLETED;
  return { p, i, first, last, render, followUpAt, followUpSent };
});
const abAction = (
  id: number,
  r: (typeof abRun)[number],
  step: DemoStep,
  state: string,
  at: string,
  content: Record<string, unknown>,
  events: AbEvent[] | undefined,
  extra: Record<string, unknown>,
) => ({
  id: demoId(id),
  workspace_id: DEMO_WORKSPACE_ID,
  campaign_id: AB_CAMPAIGN,
  enrollment_id: demoId(0xd30 + r.i),
  lead_id: demoId(0xd20 + r.i),
  step_id: step.id,
  step_position: step.position,
  step_version: 1,
  type: 'email',
  state,
  due_at: at,
  account_id: MAILBOX,
  content: JSON.stringify(content),
  executed_at: state === 'executed' ? at : null,
  connector_message_id: state === 'executed' ? `demo-msg-ab-${r.i}-${step.position}` : null,
  connector_thread_id: state === 'executed' ? `demo-thread-ab-${r.i}` : null,
  attempts: state === 'executed' ? 1 : 0,
  opened_at: abFirstHuman(events, 'open'),
  clicked_at: abFirstHuman(events, 'click'),
  replied_at: null,
  ...extra,
});
const abEvents = abRun.flatMap((r) => [
  ...(r.p.events ?? []).map((e) => ({ e, action: 0xd40 + r.i })),
  ...(r.followUpSent ? (r.p.followUpEvents ?? []) : []).map((e) => ({ e, action: 0xd50 + r.i })),
]);
if (abEvents.length > 0x20) throw new Error('demo seed: the A/B tracking events overflow their id block');
DEMO_ROWS.push(
  {
    table: 'lead_lists',
    rows: [
      {
        id: AB_LIST,
        workspace_id: DEMO_WORKSPACE_ID,
        app_id: demoId(0x100),
        name: 'Freelance developers (EU)',
        description: 'Added by hand for the subject-line test',
      },
    ],
  },
  {
    table: 'contacts',
    rows: abRun.map(({ p, i, first, last }) => ({
      id: demoId(0xd10 + i),
      workspace_id: DEMO_WORKSPACE_ID,
      email: p.email,
      email_normalised: p.email,
      first_name: first,
      last_name: last,
      full_name: p.name,
      title: p.title,
      company: null,
      country: p.country,
      time_zone: p.timeZone,
    })),
  },
  {
    table: 'leads',
    rows: abRun.map(({ i }) => ({
      id: demoId(0xd20 + i),
      workspace_id: DEMO_WORKSPACE_ID,
      list_id: AB_LIST,
      contact_id: demoId(0xd10 + i),
      source: 'manual',
    })),
  },
  {
    table: 'campaigns',
    rows: [
      {
        id: AB_CAMPAIGN,
        workspace_id: DEMO_WORKSPACE_ID,
        app_id: demoId(0x100),
        name: 'Freelance developers — subject line A/B test (email)',
        description:
          'Which first subject gets more replies: a short statement or a question? Sent in each recipient’s morning, opens and clicks tracked.',
        status: 'completed',
        time_zone: 'Europe/Berlin',
        window_time_zone: 'recipient',
        sending_windows: DEMO_WEEKDAYS,
        account_ids: JSON.stringify([MAILBOX]),
        rotation: 'round_robin',
        daily_new_lead_cap: 6,
        stop_on_reply: true,
        country_rule: null,
        review_required: false,
        message_mode: 'template',
        exclusive_leads: true,
        track_opens: true,
        track_clicks: true,
        step_version: 1,
        activated_at: AB_ACTIVATED,
        completed_at: AB_COMPLETED,
      },
    ],
  },
  {
    table: 'campaign_steps',
    rows: abSteps.map(({ winnerRule, variants, ...x }) => ({
      ...x,
      campaign_id: AB_CAMPAIGN,
      config: JSON.stringify(x.config),
      variants: variants ? JSON.stringify(variants) : null,
      winner_rule: winnerRule ? JSON.stringify(winnerRule) : null,
    })),
  },
  {
    table: 'campaign_step_versions',
    key: ['campaign_id', 'version'],
    rows: [
      {
        campaign_id: AB_CAMPAIGN,
        version: 1,
        // As snapshotVersion writes them: variants and winnerRule only on a step with variants.
        steps: JSON.stringify(
          abSteps.map(({ variants, winnerRule, ...x }) => ({
            ...x,
            messageMode: null,
            hasAttachment: false,
            ...(variants ? { variants, winnerRule } : {}),
          })),
        ),
        created_at: SEEDED_AT,
      },
    ],
  },
  {
    table: 'enrollments',
    rows: abRun.map((r) => ({
      id: demoId(0xd30 + r.i),
      workspace_id: DEMO_WORKSPACE_ID,
      campaign_id: AB_CAMPAIGN,
      lead_id: demoId(0xd20 + r.i),
      contact_id: demoId(0xd10 + r.i),
      status: r.p.replied ? 'replied' : r.followUpSent ? 'completed' : 'stopped',
      step_version: 1,
      account_id: MAILBOX,
      run: 1,
      enrolled_at: r.p.sent < AB_DECIDED ? AB_ACTIVATED : '2026-09-17T08:00:00.000Z',
      current_position: null,
      current_step_id: null,
      stop_reason: r.p.replied ? 'replied' : r.followUpSent ? null : 'campaign_completed',
      replied_at: r.p.replied ?? null,
      finished_at: r.p.replied ?? (r.followUpSent ? r.followUpAt : '2026-09-18T15:00:05.000Z'),
    })),
  },
  {
    table: 'scheduled_actions',
    rows: abRun.flatMap((r) => {
      const variant = AB_VARIANTS[r.p.variant === 'A' ? 0 : 1];
      return [
        abAction(0xd40 + r.i, r, abSteps[0], 'executed', r.p.sent, r.render(variant.config), r.p.events, {
          variant_id: variant.id,
          replied_at: r.p.replied ?? null,
        }),
        abAction(
          0xd50 + r.i,
          r,
          abSteps[2],
          r.followUpSent ? 'executed' : 'canceled',
          r.followUpAt,
          r.render(abSteps[2].config),
          r.followUpSent ? r.p.followUpEvents : undefined,
          { variant_id: null },
        ),
      ];
    }),
  },
  {
    table: 'step_winners',
    key: ['step_id'],
    rows: [
      {
        step_id: AB_STEP,
        campaign_id: AB_CAMPAIGN,
        workspace_id: DEMO_WORKSPACE_ID,
        variant_id: DEMO_AB_TEST.variantB,
        chosen_by: 'auto',
        user_id: null,
        evidence: JSON.stringify(AB_EVIDENCE),
        chosen_at: AB_DECIDED,
      },
    ],
  },
  {
    table: 'tracking_events',
    rows: abEvents.map(({ e, action }, n) => ({
      id: demoId(0xd60 + n),
      workspace_id: DEMO_WORKSPACE_ID,
      campaign_id: AB_CAMPAIGN,
      action_id: demoId(action),
      kind: e.kind,
      link_index: e.kind === 'click' ? 0 : null,
      class: e.cls,
      reason: e.reason,
      source: e.source,
      occurred_at: e.at,
    })),
  },
);

const JSON_COLUMNS = new Set([
  'app_ids',
  'icp_filters',
  'config',
  'filters',
  'signal_keys',
  'evidence',
  'reasons',
  'candidate',
  'enriched_fields',
  'edited_fields',
  'fields_filled',
  'fields_kept',
  'scope_app_ids',
  'columns',
  'sample',
  'suggested_mapping',
  'mapping',
  'values',
  'titles',
  'seniorities',
  'working_hours',
  'caps',
  'sending_windows',
  'account_ids',
  'country_rule',
  'steps',
  'content',
  'attachments',
  'ai_reply',
  'payload',
  'variants',
  'winner_rule',
]);
const TIMESTAMPED = new Set([
  'users',
  'workspaces',
  'team_members',
  'subscriptions',
  'apps',
  'lead_lists',
  'discovery_agents',
  'agent_signals',
  'agent_sources',
  'discovered_leads',
  'contacts',
  'leads',
  'list_imports',
  'cdm_imports',
  'cdm_import_companies',
  'cdm_import_members',
  'platform_accounts',
  'campaigns',
  'campaign_steps',
  'enrollments',
  'scheduled_actions',
  'conversations',
  'booking_providers',
  'meetings',
  'booking_backfills',
]);

/**
 * `insert ... on conflict (id) do update ... where <seeded columns differ>`: a no-op on unchanged
 * rows, so `updated_at` moves only when the seed itself changed.
 */
async function upsert(
  em: EntityManager,
  table: string,
  row: Record<string, unknown>,
  key: string[] = ['id'],
): Promise<number> {
  const cols = Object.keys(row);
  const stamped = TIMESTAMPED.has(table);
  const insertCols = stamped ? [...cols, 'created_at', 'updated_at'] : cols;
  const values = stamped ? [...Object.values(row), SEEDED_AT, SEEDED_AT] : Object.values(row);
  const q = (c: string) => `"${c}"`;
  const data = cols.filter((c) => !key.includes(c));
  const sql =
    `insert into ${q(table)} (${insertCols.map(q).join(', ')}) values (${insertCols.map((c) => (JSON_COLUMNS.has(c) || (table === 'agent_signals' && c === 'keywords') ? '?::jsonb' : '?')).join(', ')}) ` +
    `on conflict (${key.map(q).join(', ')}) do update set ${[...data.map((c) => `${q(c)} = excluded.${q(c)}`), ...(stamped ? ['"updated_at" = now()'] : [])].join(', ')} ` +
    `where (${data.map((c) => `${q(table)}.${q(c)}`).join(', ')}) is distinct from (${data.map((c) => `excluded.${q(c)}`).join(', ')})`;
  const res = await em.execute(sql, values, 'run');
  return (res as { affectedRows?: number }).affectedRows ?? 0;
}

/** Seeds (or repairs) the demo workspace. Returns how many rows were inserted or changed. */
export async function seedDemo(em: EntityManager): Promise<{ workspaceId: string; changed: number }> {
  return em.transactional(async (tx) => {
    // One seeder at a time (API joins racing with the CLI).
    await tx.execute('select pg_advisory_xact_lock(hashtext(?))', ['seed:demo']);
    const squatter = await tx.execute<{ id: string }[]>('select id from users where email = ? and id <> ?', [
      DEMO_USER_EMAIL,
      DEMO_USER_ID,
    ]);
    if (squatter.length)
      throw new Error(`cannot seed the demo workspace: another account (${squatter[0].id}) uses ${DEMO_USER_EMAIL}`);
    let changed = 0;
    for (const { table, rows, key } of DEMO_ROWS) for (const row of rows) changed += await upsert(tx, table, row, key);
    // Its analytics (a repair too): the scheduled rollup looks back 48 hours only, the Demo's facts are older.
    await rollupAnalytics(tx, {
      from: new Date(SEEDED_AT),
      to: new Date(Date.now() + 3_600_000),
      workspaceId: DEMO_WORKSPACE_ID,
    });
    return { workspaceId: DEMO_WORKSPACE_ID, changed };
  });
}
