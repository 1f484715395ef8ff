// `mailbox-sync:<accountId>` (docs/email.md "Receiving"): follows a mail-connector account's INBOX for
// as long as it is connected. (Skeleton: the follow loop lands with the mailbox sync.)
export interface MailboxSyncInput {
  accountId: string;
  workspaceId: string;
}

export async function mailboxSync(_input: MailboxSyncInput): Promise<void> {
  // Filled in by the mailbox sync (activities/mailbox.ts).
}
