import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';

// Emails "sent" by the local email adapter (lib/email.ts) when no SMTP server is configured, so the
// product runs offline and tests can read messages back.
export const OutboxEmail = defineEntity({
  name: 'OutboxEmail',
  tableName: 'sent_emails',
  properties: (p) => ({
    id: p
      .uuid()
      .primary()
      .onCreate(() => uuidv7()),
    to: p.string().length(320).index(),
    subject: p.string().length(500),
    text: p.text(),
    html: p.text().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
  }),
});
export type IOutboxEmail = InferEntity<typeof OutboxEmail>;
