import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { PlatformAccount } from './PlatformAccount.js';

// Where a mailbox's sync (workflow `mailbox-sync:<accountId>`, docs/email.md "Receiving") resumes:
// the INBOX's UIDVALIDITY and the last UID fed to the inbound pipeline. A new UIDVALIDITY means the
// server renumbered the folder: the sync reads again from `synced_at` (minus a day) by date, and the
// pipeline's idempotence by Message-ID drops what it already had.
export const MailboxCursor = defineEntity({
  name: 'MailboxCursor',
  tableName: 'mailbox_cursors',
  properties: (p) => ({
    account: p.oneToOne(PlatformAccount).owner().primary().ref().deleteRule('cascade'),
    uidValidity: p.bigint('string').nullable(),
    lastUid: p.bigint('string').default('0'),
    /** IDLE when the server offers it, else polling. */
    mode: p.string().length(10).default('idle'),
    syncedAt: p.datetime().nullable(),
    errorMessage: p.string().length(500).nullable(),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  }),
});
export type IMailboxCursor = InferEntity<typeof MailboxCursor>;
