// What an inbound email is (docs/email.md "Receiving"), read from its headers and structure before
// its words: a delivery status notification or a mail system's bounce, a mail to the List-Unsubscribe
// mailto address, an automatic answer (RFC 3834 and the usual out-of-office markers), else a person's
// reply. Pure functions over mailparser's output and the raw source; the inbound pipeline
// (domain/inbox/ingest.ts) acts on the result.
import { createHash } from 'node:crypto';
import type { AddressObject, ParsedMail } from 'mailparser';
import type { InboundMailFacts } from '../types.js';
import { classicBounce, headerFields, looksLikeBounce, parseDeliveryReport } from './dsn.js';
import { extractReturnDate } from './return-date.js';

/** Connector ids are at most 200 characters (inbox_messages, conversations, scheduled_actions). */
const MAX_ID = 200;

/** A Message-ID as stored: `<…>`, a longer one replaced by a stable digest of it. */
export function normaliseMessageId(raw: string | null | undefined): string | null {
  const v = raw?.trim();
  if (!v) return null;
  const id = v.startsWith('<') ? v : `<${v.replace(/^<|>$/g, '')}>`;
  return id.length <= MAX_ID ? id : `<${createHash('sha256').update(id).digest('hex')}@long-id.invalid>`;
}

/** Every `<…>` id in a header value (or mailparser's array of them), in order. */
export function messageIds(v: string | string[] | undefined): string[] {
  const all = (Array.isArray(v) ? v : v ? [v] : []).flatMap(
    (x) => x.match(/<[^<>\s]+>/g) ?? (x.trim() ? [x.trim()] : []),
  );
  return [...new Set(all.map(normaliseMessageId).filter((x): x is string => !!x))];
}

/** The lower-cased addresses of an address header. */
export function addressesOf(v: AddressObject | AddressObject[] | undefined): string[] {
  const walk = (list: AddressObject['value']): string[] =>
    list.flatMap((a) => (a.group ? walk(a.group) : a.address ? [a.address.trim().toLowerCase()] : []));
  return (Array.isArray(v) ? v : v ? [v] : []).flatMap((o) => walk(o.value));
}

/** A raw header's value (unfolded), or undefined. */
export function headerValue(mail: ParsedMail, name: string): string | undefined {
  const line = mail.headerLines.find((h) => h.key === name)?.line;
  return line === undefined
    ? undefined
    : line
        .slice(line.indexOf(':') + 1)
        .replace(/\r?\n[ \t]+/g, ' ')
        .trim();
}

const same = (a: string | null | undefined, b: string | null | undefined) =>
  !!a && !!b && a.trim().toLowerCase() === b.trim().toLowerCase();

/** Sent from the account's own address (a copy, a message to itself): never a reply. */
export function isOwnMessage(mail: ParsedMail, accountAddress: string): boolean {
  return same(addressesOf(mail.from)[0], accountAddress);
}

const AUTO_SUBJECT =
  /(automatic reply|auto[- ]?reply|autoreply|auto[- ]?response|out of (the )?office|abwesenheitsnotiz|automatische antwort|réponse automatique|respuesta automática|risposta automatica)/i;
const AUTO_BODY =
  /(out of (the )?office|automatic reply|auto-?reply|i am (currently )?(away|out of the office|on (annual |parental )?leave|on vacation|on holiday)|i'?m (currently )?(away|out of the office|on (annual |parental )?leave|on vacation|on holiday)|limited access to (my )?e-?mail|abwesenheitsnotiz|réponse automatique|je suis (actuellement )?absent)/i;

/**
 * An automatic answer: RFC 3834 `Auto-Submitted` other than `no`, `X-Autoreply` / `X-Autorespond`,
 * `Precedence` bulk/junk/list/auto_reply, an out-of-office subject, or out-of-office wording at the
 * start of the text. `X-Auto-Response-Suppress` alone is not one (Outlook puts it on ordinary mail).
 */
export function isAutoReply(mail: ParsedMail): boolean {
  const auto = headerValue(mail, 'auto-submitted');
  if (auto && !/^no\b/i.test(auto)) return true;
  if (headerValue(mail, 'x-autoreply') !== undefined || headerValue(mail, 'x-autorespond') !== undefined) return true;
  if (/^(bulk|junk|list|auto_reply)\b/i.test(headerValue(mail, 'precedence') ?? '')) return true;
  return AUTO_SUBJECT.test(mail.subject ?? '') || AUTO_BODY.test((mail.text ?? '').slice(0, 300));
}

/** A mail to the List-Unsubscribe mailto (`mailto:<account>?subject=unsubscribe`): that subject, to the account's address. */
export function isUnsubscribe(mail: ParsedMail, accountAddress: string): boolean {
  return (
    /^\s*unsubscribe\b/i.test(mail.subject ?? '') &&
    [...addressesOf(mail.to), ...addressesOf(mail.cc)].some((a) => same(a, accountAddress))
  );
}

/** The Message-ID of a message attached whole (message/rfc822), e.g. in a bounce. */
function attachedMessageId(mail: ParsedMail): string | null {
  const a = mail.attachments.find(
    (x) => /^message\/(rfc822|global)$/i.test(x.contentType) || /^text\/rfc822-headers$/i.test(x.contentType),
  );
  if (!a) return null;
  const raw = a.content.subarray(0, 64 * 1024).toString('utf8');
  const head = raw.split(/\r?\n\r?\n/)[0];
  return messageIds(headerFields(head).get('message-id'))[0] ?? null;
}

export interface ClassifyOptions {
  accountAddress: string;
  /** The message's date: a return date without a year is its next occurrence after it. */
  sentAt: Date;
}

/** The facts the inbound pipeline acts on. `source` is the raw message (possibly cut at the size bound). */
export function classifyMail(mail: ParsedMail, source: string, opts: ClassifyOptions): InboundMailFacts {
  const base = {
    subject: mail.subject?.slice(0, 400) ?? null,
    inReplyTo: messageIds(mail.inReplyTo)[0] ?? null,
    references: messageIds(mail.references),
  };
  const from = addressesOf(mail.from)[0] ?? null;
  const report = parseDeliveryReport(source);
  if (report === 'no_failure') return { kind: 'auto_reply', ...base }; // a "delivered" or "relayed" notice: nobody wrote it
  if (report) return { kind: 'bounce', ...base, bounce: report };
  if (looksLikeBounce(from, mail.subject ?? null)) {
    const bounce = classicBounce(mail.text ?? '', {
      exclude: [opts.accountAddress, ...(from ? [from] : [])],
      originalMessageId: attachedMessageId(mail) ?? base.inReplyTo,
    });
    return { kind: 'bounce', ...base, bounce };
  }
  if (isUnsubscribe(mail, opts.accountAddress)) return { kind: 'unsubscribe', ...base };
  if (isAutoReply(mail))
    return {
      kind: 'auto_reply',
      ...base,
      returnDate: extractReturnDate(`${mail.subject ?? ''}\n${mail.text ?? ''}`, opts.sentAt),
    };
  return { kind: 'reply', ...base };
}
