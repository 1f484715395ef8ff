// Company decision-maker imports (docs/company-imports.md): create a job and see its first batch,
// review batch by batch, decide per person or per company (or as an idempotent batch of client
// events), confirm into the list, retry failed companies, and read the job five ways.
import { confirmCdmImport, createCdmImport, retryCdmImport } from '../../domain/cdm-imports/cdm-imports.js';
import { decideCdmImport, recordCdmEvents } from '../../domain/cdm-imports/decisions.js';
import { requireCdmImportWithCounts } from '../../domain/cdm-imports/job.js';
import {
  approvedMembers,
  cdmMetrics,
  cdmResults,
  listCompanies,
  listMembers,
  previewBatch,
} from '../../domain/cdm-imports/review.js';
import { page } from '../../lib/pagination.js';
import { defineOperation, reply } from '../operation.js';
import {
  ApprovalBody,
  ApprovalView,
  ApprovedMembersPage,
  BatchPreviewBody,
  BatchPreviewView,
  CompanyOutcomePage,
  EventsBody,
  EventsView,
  JobParams,
  JobView,
  MemberPage,
  MetricsView,
  OutcomesQuery,
  PageOnlyQuery,
  PreviewBody,
  PreviewView,
  ProgressView,
  ResultsView,
  RetryView,
  RowsQuery,
  toApprovalView,
  toBatchView,
  toCompanyOutcomeView,
  toEventsView,
  toJobView,
  toMemberView,
  toMetricsView,
  toProgressView,
  toResultItem,
} from './schemas.js';

const tag = 'company-imports';
const base = '/api/company-decision-maker-imports';
const read = { 400: ['invalid_id', 'invalid_user'], 401: ['unauthorized'], 403: ['not_assigned'], 404: ['not_found'] };
const readPage = { ...read, 400: ['invalid_id', 'invalid_query', 'invalid_user'] };
const write = { 401: ['unauthorized'], 403: ['not_assigned', 'demo_read_only'], 404: ['not_found'] };

/** A page of rows ordered by position: the cursor is the last row's position, not its id. */
const byPosition = <T extends { cursor_id: string }, R>(rows: T[], limit: number, map: (row: T) => R) =>
  page(
    rows.map((row) => ({ id: row.cursor_id, row })),
    limit,
    (x) => map(x.row),
  );

export const previewOp = defineOperation({
  method: 'POST',
  path: `${base}/preview`,
  ids: { body: { app_id: 'app', list_id: { kind: 'list', missing: [400, 'invalid_list_id'] } } },
  summary:
    'Create an import of decision-makers at up to 1,000 companies (names and/or domains) in the given roles, start its search, and show its first batch',
  description:
    'Creates the job (`searching`) and starts the workflow `cdm-import:<id>`, which searches the companies batch by batch. The answer waits (up to 5 s) for the first batch; `batch.ready` is false if it is still being searched (ask `batch-preview` with `batch: 0` again). Nothing is charged until confirm.',
  tag,
  auth: 'user',
  body: PreviewBody,
  responses: { 201: PreviewView },
  errors: { 400: ['invalid_body', 'invalid_list_id', 'invalid_user'], ...write },
  handler: async ({ em, actor, services, body }) => {
    const job = await createCdmImport(em, actor, services.jobs, {
      appId: body.app_id,
      listId: body.list_id,
      companies: body.companies,
      titles: body.roles.titles,
      seniorities: body.roles.seniorities,
      maxPerCompany: body.max_per_company,
      batchSize: body.batch_size,
    });
    const shown = await previewBatch(em.fork(), actor, job.id);
    return reply(201, { job: toJobView(shown.job), batch: toBatchView(shown.batch!, shown.job.job.batchCount) });
  },
});

export const batchPreviewOp = defineOperation({
  method: 'POST',
  path: `${base}/{jobID}/batch-preview`,
  ids: { path: { jobID: 'cdm_import' } },
  summary: 'The next batch to review (or the batch named), with each company’s outcome and the people found there',
  description:
    'Without `batch`: the batch after the last one shown, waiting up to 5 s if it is still being searched; a ready batch moves the review cursor on, so the next call shows the one after (a retry moves it back to the first batch with a retried company). `batch: null` once every batch was shown.',
  tag,
  auth: 'user',
  params: JobParams,
  body: BatchPreviewBody,
  responses: { 200: BatchPreviewView },
  errors: { 400: ['invalid_id', 'invalid_body', 'invalid_user'], ...write, 422: ['batch_out_of_range'] },
  handler: async ({ em, actor, params, body }) => {
    const shown = await previewBatch(em, actor, params.jobID, { batch: body.batch });
    return { job: toJobView(shown.job), batch: shown.batch && toBatchView(shown.batch, shown.job.job.batchCount) };
  },
});

export const approvalOp = defineOperation({
  method: 'POST',
  path: `${base}/{jobID}/approval`,
  ids: {
    path: { jobID: 'cdm_import' },
    body: {
      member_ids: {
        each: 'cdm_member',
        within: 'jobID',
        why: 'each person is answered in its own result; one not of this import is not_found',
      },
      company_ids: {
        each: 'cdm_company',
        within: 'jobID',
        why: 'each company is answered in its own result; one not of this import is not_found',
      },
    },
  },
  summary: 'Approve or reject people of the import, by id and/or by company (every person found there not added yet)',
  description:
    'Allowed while the import is `searching` or `ready_for_review` (409 `invalid_transition` otherwise). A decision can be changed until confirm. Per item: `approved` / `rejected` (something changed), `unchanged`, `not_found` (not of this import), `invalid_transition` (a person already added).',
  tag,
  auth: 'user',
  params: JobParams,
  body: ApprovalBody,
  responses: { 200: ApprovalView },
  errors: { 400: ['invalid_id', 'invalid_body', 'invalid_user'], ...write, 409: ['invalid_transition'] },
  handler: async ({ em, actor, params, body }) =>
    toApprovalView(
      await decideCdmImport(em, actor, params.jobID, {
        decision: body.decision,
        memberIds: body.member_ids,
        companyIds: body.company_ids,
      }),
    ),
});

export const approvedMembersOp = defineOperation({
  method: 'GET',
  path: `${base}/{jobID}/approved-members`,
  ids: { path: { jobID: 'cdm_import' } },
  summary: 'The people approved (and those already added by confirm), in review order',
  tag,
  auth: 'user',
  params: JobParams,
  query: PageOnlyQuery,
  responses: { 200: ApprovedMembersPage },
  errors: readPage,
  handler: async ({ em, actor, params, query }) => {
    const r = await approvedMembers(em, actor, params.jobID, { limit: query.limit, after: query.cursor });
    return { ...byPosition(r.rows, query.limit, toMemberView), counts: r.counts };
  },
});

export const confirmOp = defineOperation({
  method: 'POST',
  path: `${base}/{jobID}/confirm`,
  ids: { path: { jobID: 'cdm_import' } },
  summary: 'Add the approved people to the import’s list as leads (1 credit per lead created), once',
  description:
    '`ready_for_review` → `confirming`: 202, and the workflow adds the approved people in chunks (contacts created or reused on normalised email, then profile URL; a person already in the list costs nothing), then `completed`. Refused before anything is added: 409 `invalid_transition` while searching, 409 `nothing_approved`, 409 `list_deleted`, 402 `insufficient_credits` when the balance is below the number of approved people. Repeating it while confirming joins the run (202); once completed it answers 200 and adds nothing.',
  tag,
  auth: 'user',
  params: JobParams,
  responses: { 202: JobView, 200: JobView },
  errors: {
    400: ['invalid_id', 'invalid_user'],
    401: ['unauthorized'],
    402: ['insufficient_credits'],
    403: ['not_assigned', 'demo_read_only'],
    404: ['not_found'],
    409: ['invalid_transition', 'nothing_approved', 'list_deleted', 'import_busy'],
  },
  handler: async ({ em, actor, services, params }) => {
    const { job } = await confirmCdmImport(em, actor, services.jobs, params.jobID);
    return reply(job.job.state === 'completed' ? 200 : 202, toJobView(job));
  },
});

export const progressOp = defineOperation({
  method: 'GET',
  path: `${base}/{jobID}/progress`,
  ids: { path: { jobID: 'cdm_import' } },
  summary: 'Exact progress: companies searched by outcome, people found by review status, batches, credits',
  tag,
  auth: 'user',
  params: JobParams,
  responses: { 200: ProgressView },
  errors: read,
  handler: async ({ em, actor, params }) => toProgressView(await requireCdmImportWithCounts(em, actor, params.jobID)),
});

export const metricsOp = defineOperation({
  method: 'GET',
  path: `${base}/{jobID}/metrics`,
  ids: { path: { jobID: 'cdm_import' } },
  summary:
    'Figures of the import: failure reasons, source searches and retries, people by seniority, approval rate, leads and credits, timings',
  tag,
  auth: 'user',
  params: JobParams,
  responses: { 200: MetricsView },
  errors: read,
  handler: async ({ em, actor, params }) => toMetricsView(await cdmMetrics(em, actor, params.jobID)),
});

export const resultsOp = defineOperation({
  method: 'GET',
  path: `${base}/{jobID}/results`,
  ids: { path: { jobID: 'cdm_import' } },
  summary: 'What confirm did: counts, and the people added with the lead and contact each became',
  tag,
  auth: 'user',
  params: JobParams,
  query: PageOnlyQuery,
  responses: { 200: ResultsView },
  errors: readPage,
  handler: async ({ em, actor, params, query }) => {
    const r = await cdmResults(em, actor, params.jobID, { limit: query.limit, after: query.cursor });
    return {
      job_id: r.job.id,
      state: r.job.state as 'completed',
      list_id: r.job.list?.id ?? null,
      completed_at: r.job.completedAt ? r.job.completedAt.toISOString() : null,
      summary: r.summary,
      ...byPosition(r.rows, query.limit, toResultItem),
    };
  },
});

export const rowsOp = defineOperation({
  method: 'GET',
  path: `${base}/{jobID}/rows`,
  ids: { path: { jobID: 'cdm_import' }, query: { company_id: { within: 'jobID', child: 'cdm_company' } } },
  summary:
    'The people found, in review order (company order, then most senior first), optionally of one status, company or batch',
  tag,
  auth: 'user',
  params: JobParams,
  query: RowsQuery,
  responses: { 200: MemberPage },
  errors: readPage,
  handler: async ({ em, actor, params, query }) =>
    byPosition(
      await listMembers(
        em,
        actor,
        params.jobID,
        { status: query.status ? [query.status] : undefined, companyId: query.company_id, batch: query.batch },
        { limit: query.limit, after: query.cursor },
      ),
      query.limit,
      toMemberView,
    ),
});

export const companyOutcomesOp = defineOperation({
  method: 'GET',
  path: `${base}/{jobID}/company-outcomes`,
  ids: { path: { jobID: 'cdm_import' } },
  summary:
    'Each company in the order given: pending, done (people found), duplicate, or failed with its reason; with its people by review status',
  tag,
  auth: 'user',
  params: JobParams,
  query: OutcomesQuery,
  responses: { 200: CompanyOutcomePage },
  errors: readPage,
  handler: async ({ em, actor, params, query }) =>
    byPosition(
      await listCompanies(
        em,
        actor,
        params.jobID,
        { status: query.status, batch: query.batch },
        { limit: query.limit, after: query.cursor },
      ),
      query.limit,
      toCompanyOutcomeView,
    ),
});

export const retryOp = defineOperation({
  method: 'POST',
  path: `${base}/{jobID}/retry`,
  ids: { path: { jobID: 'cdm_import' } },
  summary: 'Search the failed companies again (only them): ready_for_review → searching',
  tag,
  auth: 'user',
  params: JobParams,
  responses: { 202: RetryView },
  errors: {
    400: ['invalid_id', 'invalid_user'],
    ...write,
    409: ['invalid_transition', 'nothing_to_retry', 'import_busy'],
  },
  handler: async ({ em, actor, services, params }) => {
    const r = await retryCdmImport(em, actor, services.jobs, params.jobID);
    return reply(202, { job: toJobView(r.job), retried: r.retried });
  },
});

export const eventsOp = defineOperation({
  method: 'POST',
  path: `${base}/events`,
  ids: {
    body: {
      'events[].job_id': {
        each: 'cdm_import',
        why: 'each event is answered in its own result; one naming an import the caller may not see is not_found',
      },
      'events[].target_id': {
        value: 'a member or company of the event’s import, looked up inside it (another’s is not_found)',
      },
      'events[].id': { value: 'the client’s event id, scoped to the workspace' },
    },
  },
  summary:
    'Record a batch of the reviewer’s decisions (up to 500), each under the client’s id: a repeated id is ignored; one result per event',
  description:
    'Events are applied in order (a later decision on the same person wins). An event whose id was seen before — in an earlier request or earlier in this one — changes nothing: `duplicate: true`, and `first` says what that first event did. Per event: `approved` / `rejected`, `unchanged`, `not_found` (no such import or target in the workspace), `invalid_transition` (the import is confirming or completed, or the person is already added).',
  tag,
  auth: 'user',
  body: EventsBody,
  responses: { 200: EventsView },
  errors: { 400: ['invalid_body', 'invalid_user'], 401: ['unauthorized'], 403: ['demo_read_only'] },
  handler: async ({ em, actor, body, refused }) =>
    toEventsView(
      await recordCdmEvents(
        em,
        actor,
        body.events.map((e) => ({
          id: e.id,
          jobId: e.job_id,
          type: e.type,
          targetId: e.target_id,
          occurredAt: e.occurred_at,
        })),
        refused,
      ),
    ),
});
