import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';
import { CdmImport } from './CdmImport.js';

export const CDM_COMPANY_STATUSES = ['pending', 'done', 'failed', 'duplicate'] as const;
export type CdmCompanyStatus = (typeof CDM_COMPANY_STATUSES)[number];
export const CDM_FAILURE_REASONS = [
  'company_not_found',
  'source_unavailable',
  'source_error',
  'search_failed',
] as const;
export type CdmFailureReason = (typeof CDM_FAILURE_REASONS)[number];

// One company of an import, in the order given (`position`, 0-based; `batch` = position / batch
// size). pending → done | failed | duplicate (the source resolved it to a company an earlier entry
// already found); failed → pending on retry. `attempts` counts source searches of it.
export const CdmImportCompany = defineEntity({
  name: 'CdmImportCompany',
  tableName: 'cdm_import_companies',
  uniques: [{ properties: ['job', 'position'] }],
  indexes: [
    { properties: ['job', 'batch', 'position'] },
    { properties: ['job', 'status'] },
    { properties: ['job', 'resolvedKey'] },
  ],
  properties: (p) => ({
    id: p
      .uuid()
      .primary()
      .onCreate(() => uuidv7()),
    job: p.manyToOne(CdmImport).ref().deleteRule('cascade'),
    position: p.integer(),
    batch: p.integer(),
    inputName: p.string().length(200).nullable(),
    inputDomain: p.string().length(255).nullable(),
    status: p.string().length(20).default('pending'),
    reason: p.string().length(40).nullable(),
    message: p.string().length(500).nullable(),
    duplicateOf: p.uuid().nullable(),
    resolvedName: p.string().length(300).nullable(),
    resolvedDomain: p.string().length(255).nullable(),
    resolvedIndustry: p.string().length(200).nullable(),
    resolvedSize: p.string().length(20).nullable(),
    /** The resolved company's identity within the job (domain, else lower-case name): duplicates share it. */
    resolvedKey: p.string().length(320).nullable(),
    membersFound: p.integer().default(0),
    attempts: p.integer().default(0),
    searchedAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  }),
});
export type ICdmImportCompany = InferEntity<typeof CdmImportCompany>;
