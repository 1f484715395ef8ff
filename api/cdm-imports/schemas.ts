import { z } from 'zod';
import { CDM_STATES } from '../../db/entities/CdmImport.js';
import { CDM_COMPANY_STATUSES, CDM_FAILURE_REASONS } from '../../db/entities/CdmImportCompany.js';
import { CDM_MEMBER_STATUSES } from '../../db/entities/CdmImportMember.js';
import { EVENT_TYPES, type DecisionOutcome, type EventOutcome } from '../../domain/cdm-imports/decisions.js';
import {
  CREDITS_PER_MEMBER,
  DEFAULT_BATCH_SIZE,
  DEFAULT_PER_COMPANY,
  MAX_BATCH_SIZE,
  MAX_COMPANIES,
  MAX_DECISIONS,
  MAX_PER_COMPANY,
  MAX_TITLES,
  type CompanyRow,
  type Counts,
  type JobWithCounts,
  type MemberRow,
} from '../../domain/cdm-imports/job.js';
import type { BatchData, Metrics } from '../../domain/cdm-imports/review.js';
import { SENIORITIES } from '../../lib/sources/types.js';
import { pageQuery, pageSchema } from '../../lib/pagination.js';
import { cdmImportWorkflowIds } from '../../lib/workflow-ids.js';
import { Timestamp, iso, text } from '../schemas.js';

export const JobParams = z.object({ jobID: z.uuid() });

// ---------------------------------------------------------------------------------------------
// Requests

const LABEL = '(?![xX][nN]--)[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?';
/** A bare domain name: labels of letters, digits and inner hyphens, an alphabetic top-level label (`www.` is dropped). */
const DomainName = z
  .string()
  .max(253)
  .regex(new RegExp(`^(?:${LABEL}\\.)+(?![xX][nN]--)[a-zA-Z]{2,63}$`), 'must be a domain name such as acme.com')
  .meta({ description: 'A bare domain name (acme.com); compared without case and without a leading www.' });

const CompanyInput = z
  .object({
    name: text({ min: 1, max: 200, trim: true })
      .optional()
      .meta({ description: 'The company’s name, compared case-insensitively' }),
    domain: DomainName.optional(),
  })
  .strict()
  .refine((c) => c.name !== undefined || c.domain !== undefined, { message: 'give a name and/or a domain' })
  .meta({ minProperties: 1, description: 'A company named by its name and/or domain (a known domain wins)' });

const Roles = z
  .object({
    titles: z
      .array(text({ min: 1, max: 100, trim: true }))
      .min(1)
      .max(MAX_TITLES)
      .optional()
      .meta({
        description:
          'A person matches a title when every word of it occurs in their title, ignoring of/and/the/for/at/in ("head sales" matches "Head of Sales")',
      }),
    seniorities: z.array(z.enum(SENIORITIES)).min(1).max(SENIORITIES.length).optional(),
  })
  .strict()
  .refine((r) => r.titles !== undefined || r.seniorities !== undefined, { message: 'give titles and/or seniorities' })
  .meta({
    minProperties: 1,
    description:
      'Who to find at each company: titles and/or seniorities (several values of one are alternatives; both together must both match)',
  });

export const PreviewBody = z
  .object({
    app_id: z.uuid().meta({ description: 'The product the import belongs to' }),
    list_id: z.uuid().meta({
      description: 'A list of that product: confirm adds the approved people to it (400 invalid_list_id otherwise)',
    }),
    companies: z
      .array(CompanyInput)
      .min(1)
      .max(MAX_COMPANIES)
      .meta({
        description: `1 to ${MAX_COMPANIES} companies, in the order to search them; repeats of an entry are dropped`,
      }),
    roles: Roles,
    max_per_company: z
      .number()
      .int()
      .min(1)
      .max(MAX_PER_COMPANY)
      .optional()
      .meta({ description: `People kept per company, most senior first (default ${DEFAULT_PER_COMPANY})` }),
    batch_size: z
      .number()
      .int()
      .min(1)
      .max(MAX_BATCH_SIZE)
      .optional()
      .meta({ description: `Companies per batch (default ${DEFAULT_BATCH_SIZE})` }),
  })
  .strict();

export const BatchPreviewBody = z
  .object({
    batch: z
      .number()
      .int()
      .min(0)
      .max(MAX_COMPANIES - 1)
      .optional()
      .meta({
        description:
          'A batch to show again (0-based; 422 batch_out_of_range past the last). Without it: the next batch not yet shown',
      }),
  })
  .strict();

const Ids = z.array(z.uuid()).max(MAX_DECISIONS);
export const ApprovalBody = z
  .object({
    decision: z.enum(['approve', 'reject']),
    member_ids: Ids.optional().meta({ description: 'People of this import' }),
    company_ids: Ids.optional().meta({
      description: 'Companies of this import: every person found there who is not added yet',
    }),
  })
  .strict()
  .refine((b) => !!(b.member_ids?.length || b.company_ids?.length), { message: 'give member_ids and/or company_ids' })
  // In prose, not as an anyOf: openapi-generator's python makes a wrapper without the fields of it.
  .meta({ description: 'At least one id in member_ids or company_ids (400 invalid_body otherwise).' });

export const EventsBody = z
  .object({
    events: z
      .array(
        z
          .object({
            id: z
              .string()
              .regex(
                /^[A-Za-z0-9][A-Za-z0-9._:-]{0,99}$/,
                'letters, digits, . _ : - (1 to 100, starting with a letter or digit)',
              )
              .meta({
                description:
                  'The client’s id of the event (e.g. a UUID it minted): unique per workspace; a repeated id is ignored',
              }),
            job_id: z.uuid(),
            type: z.enum(EVENT_TYPES),
            target_id: z.uuid().meta({ description: 'The person (member.*) or the company (company.*)' }),
            occurred_at: z.iso
              .datetime({ offset: true })
              .optional()
              .meta({ description: 'When the reviewer decided (kept for the record)' }),
          })
          .strict(),
      )
      .min(1)
      .max(MAX_DECISIONS),
  })
  .strict();

export const RowsQuery = z.object({
  ...pageQuery,
  status: z.enum(CDM_MEMBER_STATUSES).optional(),
  company_id: z.uuid().optional(),
  batch: z
    .string()
    .regex(/^[0-9]{1,3}$/, 'must be an integer')
    .transform(Number)
    .optional()
    .meta({ jsonSchema: { type: 'integer', minimum: 0, maximum: 999 } }),
});
export const OutcomesQuery = z.object({
  ...pageQuery,
  status: z.enum(CDM_COMPANY_STATUSES).optional(),
  batch: RowsQuery.shape.batch,
});
export const PageOnlyQuery = z.object(pageQuery);

// ---------------------------------------------------------------------------------------------
// Responses

const CompanyStatusCounts = z.object(
  Object.fromEntries(CDM_COMPANY_STATUSES.map((s) => [s, z.number().int().nonnegative()])) as Record<
    (typeof CDM_COMPANY_STATUSES)[number],
    z.ZodNumber
  >,
);
const MemberStatusCounts = z.object(
  Object.fromEntries(CDM_MEMBER_STATUSES.map((s) => [s, z.number().int().nonnegative()])) as Record<
    (typeof CDM_MEMBER_STATUSES)[number],
    z.ZodNumber
  >,
);
const ErrorView = z.object({ code: z.string(), message: z.string() }).nullable();

export const ProgressView = z.object({
  job_id: z.uuid(),
  state: z.enum(CDM_STATES),
  run: z.number().int().positive(),
  percent: z
    .number()
    .int()
    .min(0)
    .max(100)
    .meta({ description: 'Companies searched (done, failed or duplicate) out of all, rounded down' }),
  companies: CompanyStatusCounts.extend({ total: z.number().int().nonnegative() }),
  members: MemberStatusCounts.extend({ found: z.number().int().nonnegative() }).meta({
    description: 'People found, by review status',
  }),
  batches: z.object({
    total: z.number().int().nonnegative(),
    searched: z.number().int().nonnegative().meta({ description: 'Batches with no company left to search' }),
    next_to_preview: z
      .number()
      .int()
      .nonnegative()
      .nullable()
      .meta({ description: 'What batch-preview shows next (null: every batch was shown)' }),
  }),
  credits_charged: z.number().int().nonnegative(),
  error: ErrorView.meta({
    description: 'Why the last confirm stopped (insufficient_credits, list_deleted, start_failed)',
  }),
  updated_at: Timestamp,
});

export const JobView = z.object({
  id: z.uuid(),
  app_id: z.uuid(),
  list_id: z.uuid().nullable().meta({ description: 'Null once the list was deleted' }),
  state: z.enum(CDM_STATES),
  run: z
    .number()
    .int()
    .positive()
    .meta({ description: 'Workflow runs started: 1, then one per retry and per confirm' }),
  roles: z.object({ titles: z.array(z.string()), seniorities: z.array(z.enum(SENIORITIES)) }),
  max_per_company: z.number().int(),
  batch_size: z.number().int(),
  company_count: z.number().int(),
  duplicates_removed: z
    .number()
    .int()
    .nonnegative()
    .meta({ description: 'Entries of the request that repeated an earlier one' }),
  batch_count: z.number().int(),
  credits_per_member: z.number().int(),
  workflow_id: z.string(),
  created_by: z.uuid().nullable(),
  progress: ProgressView,
  created_at: Timestamp,
  updated_at: Timestamp,
  search_started_at: Timestamp.nullable(),
  search_finished_at: Timestamp.nullable(),
  confirm_started_at: Timestamp.nullable(),
  completed_at: Timestamp.nullable(),
});

const asDate = (d: Date | string | null | undefined): string | null => (d ? new Date(d).toISOString() : null);

export function toProgressView({ job, counts }: JobWithCounts): z.infer<typeof ProgressView> {
  const total = job.companyCount;
  const searched = total - counts.companies.pending;
  const found = Object.values(counts.members).reduce((a, b) => a + b, 0);
  return {
    job_id: job.id,
    state: job.state as z.infer<typeof ProgressView>['state'],
    run: job.run,
    percent: total ? Math.floor((searched * 100) / total) : 100,
    companies: { total, ...counts.companies },
    members: { found, ...counts.members },
    batches: {
      total: job.batchCount,
      searched: counts.batchesSearched,
      next_to_preview: job.reviewCursor < job.batchCount ? job.reviewCursor : null,
    },
    credits_charged: job.creditsCharged,
    error: job.errorCode ? { code: job.errorCode, message: job.errorMessage ?? '' } : null,
    updated_at: job.updatedAt.toISOString(),
  };
}

export const toJobView = (j: JobWithCounts): z.infer<typeof JobView> => ({
  id: j.job.id,
  app_id: j.job.app.id,
  list_id: j.job.list?.id ?? null,
  state: j.job.state as z.infer<typeof JobView>['state'],
  run: j.job.run,
  roles: { titles: j.job.titles, seniorities: j.job.seniorities as z.infer<typeof JobView>['roles']['seniorities'] },
  max_per_company: j.job.maxPerCompany,
  batch_size: j.job.batchSize,
  company_count: j.job.companyCount,
  duplicates_removed: j.job.duplicatesRemoved,
  batch_count: j.job.batchCount,
  credits_per_member: CREDITS_PER_MEMBER,
  workflow_id: cdmImportWorkflowIds.job(j.job.id),
  created_by: j.job.createdBy?.id ?? null,
  progress: toProgressView(j),
  created_at: j.job.createdAt.toISOString(),
  updated_at: j.job.updatedAt.toISOString(),
  search_started_at: iso(j.job.searchStartedAt),
  search_finished_at: iso(j.job.searchFinishedAt),
  confirm_started_at: iso(j.job.confirmStartedAt),
  completed_at: iso(j.job.completedAt),
});

export const MemberView = z.object({
  id: z.uuid(),
  job_id: z.uuid(),
  company_id: z.uuid(),
  batch: z.number().int().nonnegative(),
  status: z.enum(CDM_MEMBER_STATUSES),
  full_name: z.string(),
  first_name: z.string().nullable(),
  last_name: z.string().nullable(),
  title: z.string().nullable(),
  seniority: z.enum(SENIORITIES).nullable(),
  headline: z.string().nullable(),
  profile_url: z.string().nullable(),
  email: z.string().nullable(),
  country: z.string().nullable(),
  company: z.object({ name: z.string().nullable(), domain: z.string().nullable() }),
  source_id: z.string().meta({ description: 'The professional network’s id of the person' }),
  decided_at: Timestamp.nullable(),
  decided_by: z.uuid().nullable(),
  lead_id: z.uuid().nullable().meta({ description: 'Once added: the lead (list membership) it became' }),
  contact_id: z.uuid().nullable(),
  added_at: Timestamp.nullable(),
});

export const toMemberView = (m: MemberRow): z.infer<typeof MemberView> => ({
  id: m.id,
  job_id: m.job_id,
  company_id: m.company_id,
  batch: m.batch,
  status: m.status,
  full_name: m.full_name,
  first_name: m.first_name,
  last_name: m.last_name,
  title: m.title,
  seniority: m.seniority && (SENIORITIES as readonly string[]).includes(m.seniority) ? m.seniority : null,
  headline: m.headline,
  profile_url: m.profile_url,
  email: m.email,
  country: m.country,
  company: { name: m.company_name, domain: m.company_domain },
  source_id: m.external_id,
  decided_at: asDate(m.decided_at),
  decided_by: m.decided_by,
  lead_id: m.lead_id,
  contact_id: m.contact_id,
  added_at: asDate(m.added_at),
});

export const CompanyOutcomeView = z.object({
  id: z.uuid(),
  job_id: z.uuid(),
  position: z
    .number()
    .int()
    .nonnegative()
    .meta({ description: 'Its place in the request (0-based, after repeats were dropped)' }),
  batch: z.number().int().nonnegative(),
  input: z.object({ name: z.string().nullable(), domain: z.string().nullable() }),
  status: z.enum(CDM_COMPANY_STATUSES),
  reason: z.enum(CDM_FAILURE_REASONS).nullable().meta({ description: 'Why it failed (status failed)' }),
  message: z.string().nullable(),
  duplicate_of: z
    .uuid()
    .nullable()
    .meta({ description: 'The earlier company of this import the source resolved it to as well (status duplicate)' }),
  resolved: z
    .object({
      name: z.string().nullable(),
      domain: z.string().nullable(),
      industry: z.string().nullable(),
      size: z.string().nullable(),
    })
    .nullable()
    .meta({ description: 'The company the source found' }),
  members_found: z.number().int().nonnegative(),
  members: MemberStatusCounts,
  attempts: z.number().int().nonnegative().meta({ description: 'Source searches of it (retries included)' }),
  searched_at: Timestamp.nullable(),
});

export const toCompanyOutcomeView = (c: CompanyRow): z.infer<typeof CompanyOutcomeView> => ({
  id: c.id,
  job_id: c.job_id,
  position: c.position,
  batch: c.batch,
  input: { name: c.input_name, domain: c.input_domain },
  status: c.status,
  reason: c.status === 'failed' ? c.reason : null,
  message: c.message,
  duplicate_of: c.duplicate_of,
  resolved:
    c.resolved_name || c.resolved_domain
      ? { name: c.resolved_name, domain: c.resolved_domain, industry: c.resolved_industry, size: c.resolved_size }
      : null,
  members_found: c.members_found,
  members: { pending: c.pending_review, approved: c.approved, rejected: c.rejected, added: c.added },
  attempts: c.attempts,
  searched_at: asDate(c.searched_at),
});

export const BatchView = z.object({
  batch: z.number().int().nonnegative(),
  batches_total: z.number().int().nonnegative(),
  ready: z.boolean().meta({ description: 'Every company of the batch has been searched; false: ask again shortly' }),
  companies: z.array(CompanyOutcomeView.extend({ people: z.array(MemberView) })),
});

export const toBatchView = (b: BatchData, total: number): z.infer<typeof BatchView> => ({
  batch: b.batch,
  batches_total: total,
  ready: b.ready,
  companies: b.companies.map((c) => ({ ...toCompanyOutcomeView(c), people: c.members.map(toMemberView) })),
});

export const PreviewView = z.object({ job: JobView, batch: BatchView });
export const BatchPreviewView = z.object({
  job: JobView,
  batch: BatchView.nullable().meta({ description: 'Null once every batch was shown' }),
});

const DecisionFields = {
  result: z.enum(['approved', 'rejected', 'unchanged', 'not_found', 'invalid_transition']),
  members_changed: z.number().int().nonnegative(),
  members_unchanged: z.number().int().nonnegative(),
};
const decisionFields = (o: DecisionOutcome) => ({
  result: o.result,
  members_changed: o.membersChanged,
  members_unchanged: o.membersUnchanged,
});

export const ApprovalView = z.object({
  job: JobView,
  results: z.array(z.object({ kind: z.enum(['member', 'company']), id: z.uuid(), ...DecisionFields })),
});

export const toApprovalView = (o: {
  job: JobWithCounts;
  results: ({ kind: 'member' | 'company'; id: string } & DecisionOutcome)[];
}): z.infer<typeof ApprovalView> => ({
  job: toJobView(o.job),
  results: o.results.map((r) => ({ kind: r.kind, id: r.id, ...decisionFields(r) })),
});

export const EventsView = z.object({
  results: z.array(
    z.object({
      id: z.string(),
      job_id: z.uuid(),
      duplicate: z.boolean().meta({ description: 'The id was seen before: this event was ignored' }),
      ...DecisionFields,
      first: z
        .object({
          result: DecisionFields.result,
          members_changed: z.number().int().nonnegative(),
          recorded_at: Timestamp,
        })
        .nullable()
        .meta({ description: 'For a repeated id: what the first event with it did' }),
    }),
  ),
});

export const toEventsView = (outcomes: EventOutcome[]): z.infer<typeof EventsView> => ({
  results: outcomes.map((o) => ({
    id: o.id,
    job_id: o.jobId,
    duplicate: o.duplicate !== null,
    ...decisionFields(o),
    first: o.duplicate && {
      result: o.duplicate.result,
      members_changed: o.duplicate.membersChanged,
      recorded_at: o.duplicate.recordedAt.toISOString(),
    },
  })),
});

export const MemberPage = pageSchema(MemberView);
export const CompanyOutcomePage = pageSchema(CompanyOutcomeView);
export const ApprovedMembersPage = pageSchema(MemberView).extend({
  counts: z.object({ approved: z.number().int().nonnegative(), added: z.number().int().nonnegative() }),
});

export const RetryView = z.object({
  job: JobView,
  retried: z.number().int().positive().meta({ description: 'Failed companies put back to search' }),
});

export const ResultsView = pageSchema(
  MemberView.extend({
    lead_created: z
      .boolean()
      .meta({ description: 'Confirm created the lead (false: the contact was already in the list)' }),
    contact_created: z
      .boolean()
      .meta({ description: 'Confirm created the contact (false: the workspace had it, by email or profile URL)' }),
    credits_charged: z.number().int().nonnegative(),
  }),
).extend({
  job_id: z.uuid(),
  state: z.enum(CDM_STATES),
  list_id: z.uuid().nullable(),
  completed_at: Timestamp.nullable(),
  summary: z.object({
    added: z.number().int().nonnegative(),
    leads_created: z.number().int().nonnegative(),
    already_in_list: z.number().int().nonnegative(),
    contacts_created: z.number().int().nonnegative(),
    contacts_reused: z.number().int().nonnegative(),
    credits_charged: z.number().int().nonnegative(),
    awaiting_confirm: z.number().int().nonnegative().meta({ description: 'Approved people not added yet' }),
  }),
});

export const toResultItem = (m: MemberRow) => ({
  ...toMemberView(m),
  lead_created: m.lead_created === true,
  contact_created: m.contact_created === true,
  credits_charged: m.credits_charged,
});

export const MetricsView = z.object({
  job_id: z.uuid(),
  state: z.enum(CDM_STATES),
  companies: CompanyStatusCounts.extend({
    total: z.number().int().nonnegative(),
    failure_reasons: z.object(
      Object.fromEntries(CDM_FAILURE_REASONS.map((r) => [r, z.number().int().nonnegative()])) as Record<
        (typeof CDM_FAILURE_REASONS)[number],
        z.ZodNumber
      >,
    ),
    source_searches: z
      .number()
      .int()
      .nonnegative()
      .meta({ description: 'Searches of companies at the source, retries included' }),
    retried: z.number().int().nonnegative().meta({ description: 'Companies searched more than once' }),
  }),
  members: MemberStatusCounts.extend({
    found: z.number().int().nonnegative(),
    by_seniority: z.record(z.string(), z.number().int().nonnegative()),
    per_company: z
      .number()
      .nonnegative()
      .nullable()
      .meta({ description: 'People found per company found (null before any)' }),
    approval_rate: z
      .number()
      .min(0)
      .max(1)
      .nullable()
      .meta({ description: 'Approved (or added) out of decided (null before any decision)' }),
  }),
  leads: z.object({
    created: z.number().int().nonnegative(),
    already_in_list: z.number().int().nonnegative(),
    contacts_created: z.number().int().nonnegative(),
  }),
  credits: z.object({
    charged: z.number().int().nonnegative(),
    per_member: z.number().int().positive(),
    pending_max: z
      .number()
      .int()
      .nonnegative()
      .meta({ description: 'The most confirming the approved people not added yet can cost' }),
  }),
  timing: z.object({
    search_seconds: z.number().nonnegative().nullable(),
    companies_per_second: z.number().nonnegative().nullable(),
    confirm_seconds: z.number().nonnegative().nullable(),
  }),
});

const seconds = (from: Date | null | undefined, to: Date | null | undefined) =>
  from && to ? Math.max(0, (to.getTime() - from.getTime()) / 1000) : null;

export function toMetricsView(m: Metrics): z.infer<typeof MetricsView> {
  const c: Counts = m.counts;
  const found = Object.values(c.members).reduce((a, b) => a + b, 0);
  const decided = c.members.approved + c.members.added + c.members.rejected;
  const searched = c.companies.done + c.companies.failed + c.companies.duplicate;
  const searchSeconds = seconds(m.job.searchStartedAt, m.job.searchFinishedAt);
  return {
    job_id: m.job.id,
    state: m.job.state as z.infer<typeof MetricsView>['state'],
    companies: {
      total: m.job.companyCount,
      ...c.companies,
      failure_reasons: m.failureReasons,
      source_searches: m.sourceSearches,
      retried: m.companiesRetried,
    },
    members: {
      found,
      ...c.members,
      by_seniority: m.bySeniority,
      per_company: c.companies.done ? Math.round((found / c.companies.done) * 100) / 100 : null,
      approval_rate: decided ? Math.round(((c.members.approved + c.members.added) / decided) * 1000) / 1000 : null,
    },
    leads: { created: m.leadsCreated, already_in_list: m.alreadyInList, contacts_created: m.contactsCreated },
    credits: {
      charged: m.job.creditsCharged,
      per_member: CREDITS_PER_MEMBER,
      pending_max: c.members.approved * CREDITS_PER_MEMBER,
    },
    timing: {
      search_seconds: searchSeconds,
      companies_per_second: searchSeconds ? Math.round((searched / searchSeconds) * 100) / 100 : null,
      confirm_seconds: seconds(m.job.confirmStartedAt, m.job.completedAt),
    },
  };
}
