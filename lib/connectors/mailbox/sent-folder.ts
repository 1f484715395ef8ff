// The mailbox's Sent folder over IMAP: where a send's copy goes (mail clients file what they send
// there; SMTP alone does not), and where a retry looks for the first attempt by its Message-ID.
import type { ImapFlow } from 'imapflow';

/** Names a server without SPECIAL-USE may give its Sent folder (imapflow also matches localized names). */
const SENT_NAMES = /^(sent|sent items|sent messages|sent mail)$/i;

/** The Sent folder's path: the \Sent special-use folder, else one named like it, else (create) a new "Sent". */
export async function sentFolder(client: ImapFlow, opts: { create: boolean }): Promise<string | null> {
  const find = async () => {
    const folders = await client.list();
    return (
      (folders.find((f) => f.specialUse === '\\Sent') ?? folders.find((f) => SENT_NAMES.test(f.name)))?.path ?? null
    );
  };
  const found = await find();
  if (found || !opts.create) return found;
  try {
    return (await client.mailboxCreate('Sent')).path;
  } catch (err) {
    // A concurrent send of the same account made it first (some servers answer NO rather than ALREADYEXISTS).
    const made = await find();
    if (made) return made;
    throw err;
  }
}

/** The Date of the message with this Message-ID in `path`, or null when there is none. */
export async function findByMessageId(client: ImapFlow, path: string, messageId: string): Promise<Date | null> {
  const lock = await client.getMailboxLock(path, { readOnly: true });
  try {
    // HEADER search is a substring match: the id without its brackets is unique (it holds the action id).
    const uids = await client.search({ header: { 'message-id': messageId.replace(/^<|>$/g, '') } }, { uid: true });
    if (!uids || !uids.length) return null;
    const msg = await client.fetchOne(String(uids[0]), { envelope: true, internalDate: true }, { uid: true });
    const date = msg ? (msg.envelope?.date ?? msg.internalDate) : null;
    return date ? new Date(date) : new Date();
  } finally {
    lock.release();
  }
}

/** Files `raw` in the Sent folder as read, unless the server filed it itself (Gmail does for SMTP sends). */
export async function appendToSent(
  client: ImapFlow,
  path: string,
  raw: Buffer,
  messageId: string,
  sentAt: Date,
): Promise<'appended' | 'present'> {
  if (await findByMessageId(client, path, messageId)) return 'present';
  await client.append(path, raw, ['\\Seen'], sentAt);
  return 'appended';
}
