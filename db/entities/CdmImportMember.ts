import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';
import { CdmImport } from './CdmImport.js';
import { CdmImportCompany } from './CdmImportCompany.js';

export const CDM_MEMBER_STATUSES = ['pending', 'approved', 'rejected', 'added'] as const;
export type CdmMemberStatus = (typeof CDM_MEMBER_STATUSES)[number];

// A person the source found at a company of an import (once per job: unique on the source's id).
// pending ↔ approved ↔ rejected while the job is reviewable; approved → added by confirm, with the
// lead and contact it became (terminal). Ordered by (company_position, rank): the companies' order,
// then the source's (most senior first).
export const CdmImportMember = defineEntity({
  name: 'CdmImportMember',
  tableName: 'cdm_import_members',
  uniques: [{ properties: ['job', 'externalId'] }],
  indexes: [
    { properties: ['job', 'companyPosition', 'rank'] },
    { properties: ['job', 'status'] },
    { properties: ['company'] },
  ],
  properties: (p) => ({
    id: p
      .uuid()
      .primary()
      .onCreate(() => uuidv7()),
    job: p.manyToOne(CdmImport).ref().deleteRule('cascade'),
    company: p.manyToOne(CdmImportCompany).ref().deleteRule('cascade'),
    companyPosition: p.integer(),
    batch: p.integer(),
    rank: p.integer(),
    externalId: p.string().length(200),
    profileUrl: p.string().length(2048).nullable(),
    email: p.string().length(320).nullable(),
    fullName: p.string().length(400),
    firstName: p.string().length(200).nullable(),
    lastName: p.string().length(200).nullable(),
    title: p.string().length(300).nullable(),
    headline: p.string().length(300).nullable(),
    seniority: p.string().length(20).nullable(),
    country: p.string().length(100).nullable(),
    companyName: p.string().length(300).nullable(),
    companyDomain: p.string().length(255).nullable(),
    status: p.string().length(20).default('pending'),
    decidedAt: p.datetime().nullable(),
    decidedBy: p.uuid().nullable(),
    leadId: p.uuid().nullable(),
    contactId: p.uuid().nullable(),
    /** Confirm created the lead (false: the contact was already in the list) / the contact. */
    leadCreated: p.boolean().nullable(),
    contactCreated: p.boolean().nullable(),
    creditsCharged: p.integer().default(0),
    addedAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  }),
});
export type ICdmImportMember = InferEntity<typeof CdmImportMember>;
