// One raw inbound email (an INBOX message's source, cut at the size bound) read into what the
// mailbox sync hands the inbound pipeline: ids, addresses, the reply's own text and the facts
// lib/connectors/mailbox/classify.ts finds.
import { createHash } from 'node:crypto';
import { simpleParser } from 'mailparser';
import type { InboundMailFacts } from '../types.js';
import { addressesOf, classifyMail, isOwnMessage, normaliseMessageId } from './classify.js';

/** The inbox stores bodies up to this many characters. */
const MAX_TEXT = 50_000;
/** A Date header this far ahead of the receipt is wrong: the receipt time is used. */
const CLOCK_SKEW_MS = 86_400_000;

export interface InboundMail {
  /** The Message-ID (`<…>`); a digest of the source when the message has none. */
  messageId: string;
  from: string | null;
  to: string[];
  text: string;
  sentAt: Date;
  attachments: { id: string; name: string; size: number }[];
  /** Sent from the account's own address. */
  own: boolean;
  facts: InboundMailFacts;
}

// Where the quoted conversation starts in a reply: "On … wrote:", Outlook's header block, a separator.
const QUOTE_START =
  /^(On\s[\s\S]{0,300}?wrote:|Le\s[\s\S]{0,300}?a écrit\s?:|Am\s[\s\S]{0,300}?schrieb[\s\S]{0,200}?:|-{2,}\s*Original Message\s*-{2,}|From:\s.+\r?\n(Sent|Date):\s)/im;

/** The text a person wrote, without the conversation they quoted (the whole text when that leaves nothing). */
export function replyText(text: string): string {
  const cut = QUOTE_START.exec(text);
  const own = (cut ? text.slice(0, cut.index) : text)
    .split(/\r?\n/)
    .filter((l) => !l.startsWith('>'))
    .join('\n')
    .trim();
  return (own || text.trim()).slice(0, MAX_TEXT);
}

export async function readMail(
  source: Buffer,
  opts: { accountAddress: string; receivedAt: Date | null },
): Promise<InboundMail> {
  const mail = await simpleParser(source, { skipTextToHtml: true, skipTextLinks: true, skipImageLinks: true });
  const received = opts.receivedAt ?? new Date();
  const dated =
    mail.date && !Number.isNaN(mail.date.getTime()) && mail.date.getTime() < received.getTime() + CLOCK_SKEW_MS
      ? mail.date
      : null;
  const sentAt = dated ?? received;
  const raw = source.toString('utf8');
  const facts = classifyMail(mail, raw, { accountAddress: opts.accountAddress, sentAt });
  return {
    messageId:
      normaliseMessageId(mail.messageId) ??
      `<${createHash('sha256').update(source.subarray(0, 65_536)).digest('hex')}@no-message-id.invalid>`,
    from: addressesOf(mail.from)[0] ?? null,
    to: [...addressesOf(mail.to), ...addressesOf(mail.cc)],
    text: facts.kind === 'bounce' ? (mail.text ?? '').trim().slice(0, MAX_TEXT) : replyText(mail.text ?? ''),
    sentAt,
    // Numbered in the parser's order, so the connector can find one again by re-reading the message.
    attachments: mail.attachments.flatMap((a, i) =>
      a.related ? [] : [{ id: String(i + 1), name: a.filename ?? `attachment-${i + 1}`, size: a.size }],
    ),
    own: isOwnMessage(mail, opts.accountAddress),
    facts,
  };
}
