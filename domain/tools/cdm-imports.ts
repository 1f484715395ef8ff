// Company decision-maker imports for the Operator: start one (a change: it searches the network and
// leads to a confirm that costs credits, so it needs a person's yes) and read its progress.
import { z } from 'zod';
import { SENIORITIES } from '../../lib/sources/types.js';
import { normaliseDomain } from '../../lib/normalise.js';
import { cdmImportWorkflowIds } from '../../lib/workflow-ids.js';
import { createCdmImport } from '../cdm-imports/cdm-imports.js';
import {
  DEFAULT_PER_COMPANY,
  MAX_COMPANIES,
  MAX_PER_COMPANY,
  MAX_TITLES,
  requireCdmImportWithCounts,
  type JobWithCounts,
} from '../cdm-imports/job.js';
import { defineTool } from './registry.js';

const DOMAIN_LIKE = /^[^\s@/]+\.[a-z]{2,63}$/i;

/** A bare string is a domain when it looks like one ("acme.com"), else a company name. */
const company = z.union([
  z.string().trim().min(1).max(200),
  z
    .object({
      name: z.string().trim().min(1).max(200).optional(),
      domain: z.string().trim().min(1).max(253).optional(),
    })
    .strict()
    .refine((c) => c.name || c.domain, 'give a name and/or a domain'),
]);

const summary = ({ job, counts }: JobWithCounts) => ({
  import_id: job.id,
  state: job.state,
  workflow_id: cdmImportWorkflowIds.job(job.id),
  list_id: job.list?.id ?? null,
  companies: { total: job.companyCount, ...counts.companies },
  people: counts.members,
  batches: { total: job.batchCount, searched: counts.batchesSearched },
  credits_charged: job.creditsCharged,
  error: job.errorCode ? { code: job.errorCode, message: job.errorMessage } : null,
});

export const cdmImportTools = [
  defineTool({
    name: 'start_company_import',
    ids: { app_id: 'app', list_id: 'list' },
    domain: 'company-imports',
    description: `Find decision-makers at companies: give up to ${MAX_COMPANIES} companies (names or domains), the roles (titles and/or seniorities: ${SENIORITIES.join(', ')}), the product and the list they are for. Starts the search; the people found are then reviewed (approved or rejected) and confirmed into the list at 1 credit per lead.`,
    input: z
      .object({
        app_id: z.uuid(),
        list_id: z.uuid(),
        companies: z.array(company).min(1).max(MAX_COMPANIES),
        titles: z.array(z.string().trim().min(1).max(100)).max(MAX_TITLES).optional(),
        seniorities: z.array(z.enum(SENIORITIES)).optional(),
        max_per_company: z
          .number()
          .int()
          .min(1)
          .max(MAX_PER_COMPANY)
          .optional()
          .describe(`default ${DEFAULT_PER_COMPANY}`),
      })
      .strict()
      .refine((i) => i.titles?.length || i.seniorities?.length, 'give titles and/or seniorities'),
    risk: 'change',
    run: async ({ em, actor, jobs }, input) =>
      summary(
        await createCdmImport(em, actor, jobs, {
          appId: input.app_id,
          listId: input.list_id,
          companies: input.companies.map((c) =>
            typeof c === 'string' ? (DOMAIN_LIKE.test(c) && normaliseDomain(c) ? { domain: c } : { name: c }) : c,
          ),
          titles: input.titles,
          seniorities: input.seniorities,
          maxPerCompany: input.max_per_company,
        }),
      ),
  }),
  defineTool({
    name: 'get_company_import_progress',
    ids: { import_id: 'cdm_import' },
    domain: 'company-imports',
    description:
      'Progress of a company decision-maker import: its state, companies searched by outcome, people found by review status, credits charged.',
    input: z.object({ import_id: z.uuid() }).strict(),
    risk: 'read',
    run: async ({ em, actor }, input) => summary(await requireCdmImportWithCounts(em, actor, input.import_id)),
  }),
];
