import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';

// The local partner CRM's store (lib/partner/local.ts): what the sync would have pushed to the real
// partner, per partner account, record kind and our id (the external id). `versions` counts the
// pushes that changed the record, so tests and the Demo can see that nothing was pushed twice.
export const PartnerSandboxRecord = defineEntity({
  name: 'PartnerSandboxRecord',
  tableName: 'partner_sandbox_records',
  uniques: [{ properties: ['accountId', 'recordKind', 'externalId'] }],
  properties: (p) => ({
    id: p
      .uuid()
      .primary()
      .onCreate(() => uuidv7()),
    accountId: p.string().length(200),
    recordKind: p.string().length(20),
    externalId: p.string().length(200),
    partnerId: p.string().length(200),
    fields: p.json<Record<string, unknown>>(),
    versions: p.integer().default(1),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  }),
});
export type IPartnerSandboxRecord = InferEntity<typeof PartnerSandboxRecord>;
