import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';
import { Workspace } from './Workspace.js';

// A person in a workspace, deduplicated on the normalised email and the normalised professional-
// network profile URL (each unique per workspace when present).
export const Contact = defineEntity({
  name: 'Contact',
  tableName: 'contacts',
  uniques: [
    { properties: ['workspace', 'emailNormalised'] },
    { properties: ['workspace', 'profileUrlNormalised'] },
  ],
  // The workspace's contacts are listed and exported by id (keyset pages).
  indexes: [{ name: 'contacts_workspace_id_id_index', properties: ['workspace', 'id'] }],
  properties: (p) => ({
    id: p.uuid().primary().onCreate(() => uuidv7()),
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
    /** Field provenance: names of fields a person edited, never overwritten by enrichment. */
    editedFields: p.json<string[]>().default('[]'),
    /** Fields enrichment filled (docs/enrichment.md), when it last completed, the connector's id of the profile. */
    enrichedFields: p.json<string[]>().default('[]'),
    enrichedAt: p.datetime().nullable(),
    networkProviderId: p.string().length(200).nullable(),
    /** Fit (docs/contacts.md): a person's score 0..100 and label (good | maybe | bad), each optional. */
    fitScore: p.smallint().nullable(),
    fitLabel: p.string().length(10).nullable(),
    fitUpdatedAt: p.datetime().nullable(),
    /** Pinned when set (PUT /api/contacts/{id}/pin), for the whole workspace. */
    pinnedAt: p.datetime().nullable(),
    /** Asked not to be contacted again (docs/contacts.md): no campaign enrolls it, running enrollments stop before the next send. */
    unsubscribedAt: p.datetime().nullable(),
    /** Who or what recorded it: `user` (PATCH /api/leads/{id} with `unsubscribed`); later sources (an opt-out reply) add theirs. */
    unsubscribeSource: p.string().length(20).nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  }),
});
export type IContact = InferEntity<typeof Contact>;
