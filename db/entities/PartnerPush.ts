import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';
import { Integration } from './Integration.js';

// What the partner holds of one of our records: the SHA-256 of the fields last pushed (a version
// already pushed is never sent again) and the partner's id for it.
export const PartnerPush = defineEntity({
  name: 'PartnerPush',
  tableName: 'partner_pushes',
  uniques: [{ properties: ['integration', 'recordKind', 'recordId'] }],
  properties: (p) => ({
    id: p
      .uuid()
      .primary()
      .onCreate(() => uuidv7()),
    integration: p.manyToOne(Integration).ref().deleteRule('cascade'),
    recordKind: p.string().length(20),
    recordId: p.uuid(),
    hash: p.string().length(64),
    partnerId: p.string().length(200).nullable(),
    pushedAt: p.datetime(),
  }),
});
export type IPartnerPush = InferEntity<typeof PartnerPush>;
