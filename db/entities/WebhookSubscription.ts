import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';
import { Workspace } from './Workspace.js';
import { Integration } from './Integration.js';

// An outbound webhook subscription. The signing secret is stored AES-256-GCM encrypted
// (lib/crypto.ts encrypt, key = config.encryptionKey) because every delivery must sign with it.
// After a rotation with an overlap (POST …/{id}/rotate-secret), the secret it replaced is kept, sealed
// the same way, until `previousSecretExpiresAt`: deliveries until then carry a signature with each.
export const WebhookSubscription = defineEntity({
  name: 'WebhookSubscription',
  tableName: 'webhook_subscriptions',
  properties: (p) => ({
    id: p
      .uuid()
      .primary()
      .onCreate(() => uuidv7()),
    workspace: p.manyToOne(Workspace).ref().deleteRule('cascade').index(),
    integration: p.manyToOne(Integration).ref().nullable().deleteRule('set null').index(),
    url: p.string().length(2048),
    events: p.json<string[]>(),
    active: p.boolean().default(true),
    secretEncrypted: p.text().hidden(),
    /** Last 4 characters of the secret, for the masked view. */
    secretLast4: p.string().length(4),
    /** The secret a rotation replaced, sealed like `secretEncrypted`; unused from `previousSecretExpiresAt` on. */
    previousSecretEncrypted: p.text().nullable().default(null).hidden(),
    previousSecretExpiresAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  }),
});
export type IWebhookSubscription = InferEntity<typeof WebhookSubscription>;
