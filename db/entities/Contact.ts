import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';
import { Workspace } from './Workspace.js';

// A person in a workspace, deduplicated on the normalised email and the normalised professional-
// network profile URL (each unique per workspace when present).
export const Contact = defineEntity({
  name: 'Contact',
  tableName: 'contacts',
  uniques: [{ properties: ['workspace', 'emailNormalised'] }, { properties: ['workspace', 'profileUrlNormalised'] }],
  // The workspace's contacts are listed and exported by id (keyset pages).
  indexes: [{ name: 'contacts_workspace_id_id_index', properties: ['workspace', 'id'] }],
  // The checks of Migration20261122144441_contacts, declared so that `migration:create` diffs clean.
  // Its `contacts_fit_label_values` check (label in good | maybe | bad) is the enum of `fitLabel`
  // below: MikroORM reads a column's `in (...)` check as that column's enum items.
  // (PostgreSQL keeps the score's `between 0 and 100` as the two comparisons written here.)
  checks: [{ name: 'contacts_fit_score_range', expression: 'fit_score >= 0 and fit_score <= 100' }],
  properties: (p) => ({
    id: p
      .uuid()
      .primary()
      .onCreate(() => uuidv7()),
    workspace: p.manyToOne(Workspace).ref().deleteRule('cascade'),
    email: p.string().length(320).nullable(),
    emailNormalised: p.string().length(320).nullable(),
    profileUrl: p.string().length(2048).nullable(),
    profileUrlNormalised: p.string().length(2048).nullable(),
    firstName: p.string().length(200).nullable(),
    lastName: p.string().length(200).nullable(),
    fullName: p.string().length(400).nullable(),
    title: p.string().length(300).nullable(),
    headline: p.string().length(300).nullable(),
    phone: p.string().length(40).nullable(),
    company: p.string().length(300).nullable(),
    companyDomain: p.string().length(255).nullable(),
    country: p.string().length(100).nullable(),
    /** IANA time zone given for the contact; null: derived from the country when it has one zone (domain/contacts/time-zone.ts). */
    timeZone: p.string().length(64).nullable(),
    /** Field provenance: names of fields a person edited, never overwritten by enrichment. */
    editedFields: p.json<string[]>().default('[]'),
    /** Fields enrichment filled (docs/enrichment.md), when it last completed, the connector's id of the profile. */
    enrichedFields: p.json<string[]>().default('[]'),
    enrichedAt: p.datetime().nullable(),
    networkProviderId: p.string().length(200).nullable(),
    /** Fit (docs/contacts.md): a person's score 0..100 and label (good | maybe | bad), each optional. */
    fitScore: p.smallint().nullable(),
    fitLabel: p.enum(['good', 'maybe', 'bad']).columnType('varchar(10)').nullable(), // FIT_LABELS, domain/contacts/contacts.ts
    fitUpdatedAt: p.datetime().nullable(),
    /** Pinned when set (PUT /api/contacts/{id}/pin), for the whole workspace. */
    pinnedAt: p.datetime().nullable(),
    /** Asked not to be contacted again (docs/contacts.md): no campaign enrolls it, running enrollments stop before the next send. */
    unsubscribedAt: p.datetime().nullable(),
    /** Who or what recorded it: `user` (PATCH /api/leads/{id} with `unsubscribed`); later sources (an opt-out reply) add theirs. */
    unsubscribeSource: p.string().length(20).nullable(),
    /** A campaign email to its current address bounced: no email-first campaign enrolls it; a new address clears it. */
    emailBouncedAt: p.datetime().nullable(),
    /** Soft bounces (4.x.x) of its address in a row; the third counts as a hard bounce (docs/email.md "Bounces"). */
    emailSoftBounces: p.smallint().default(0),
    /** An out-of-office reply named a return date: every enrollment of the contact holds until this (the day after it). */
    outOfOfficeUntil: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  }),
});
export type IContact = InferEntity<typeof Contact>;
