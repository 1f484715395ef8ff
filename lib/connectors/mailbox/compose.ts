// The RFC 5322 message a mail-connector send puts on the wire, composed once with nodemailer's
// MailComposer so the bytes handed to SMTP are exactly the bytes appended to the Sent folder.
// docs/email.md "What we send and why" explains each header.
import MailComposer from 'nodemailer/lib/mail-composer';
import type { SendEmailInput } from '../types.js';

export interface Sender {
  address: string;
  /** The From display name (the mailbox's from_name, else the account's display name). */
  name: string;
}

export interface ComposedMessage {
  raw: Buffer;
  /** Exactly the Message-ID header value, angle brackets included. */
  messageId: string;
  /** The thread's first message id (the message itself when it starts one). */
  threadId: string;
  envelope: { from: string; to: string[] };
  sentAt: Date;
}

/** `<key@sender-domain>`: derived from the idempotency key, so a retry can find the first attempt in Sent. */
export function messageIdFor(idempotencyKey: string, senderAddress: string): string {
  const local = idempotencyKey.replace(/[^A-Za-z0-9._-]/g, '-') || 'message';
  return `<${local}@${senderAddress.split('@')[1] ?? 'localhost'}>`;
}

const isMessageId = (v: string | null | undefined): v is string => !!v && /^<[^<>\s]+@[^<>\s]+>$/.test(v);

/**
 * At most this many ids in `References`: the thread's first and the latest ones (RFC 5322 3.6.4 gives
 * no bound; mail software trims long chains the same way, keeping the root and the nearest parents,
 * as RFC 5537 3.4.4 does for Netnews).
 */
export const MAX_REFERENCES = 20;

/**
 * The thread a send answers, oldest first, the message it answers last (`In-Reply-To`): the given
 * references (each once, bounded to the first and the latest MAX_REFERENCES), else the thread id when
 * it is a Message-ID.
 */
export function referencesOf(input: Pick<SendEmailInput, 'references' | 'threadId'>): string[] {
  const given = (input.references ?? []).filter(isMessageId);
  const answered = given[given.length - 1];
  // Each once; the message answered stays last whatever else repeats it.
  const refs = given.length ? [...new Set(given.filter((id) => id !== answered)), answered] : [];
  if (refs.length > MAX_REFERENCES) return [refs[0], ...refs.slice(refs.length - (MAX_REFERENCES - 1))];
  if (refs.length) return refs;
  return isMessageId(input.threadId) ? [input.threadId] : [];
}

/** "Re: " + the thread's subject for a follow-up (never "Re: Re: "); the subject as given otherwise. */
export function subjectFor(input: Pick<SendEmailInput, 'subject' | 'threadSubject'>, inThread: boolean): string {
  if (!inThread) return input.subject;
  const base = (input.threadSubject ?? input.subject).trim();
  return /^re:/i.test(base) ? base : `Re: ${base}`;
}

export function composeMessage(sender: Sender, input: SendEmailInput, now = new Date()): Promise<ComposedMessage> {
  const messageId = messageIdFor(input.idempotencyKey, sender.address);
  const references = referencesOf(input);
  const footer = input.footer?.trim() || null;
  const text = footer ? `${input.body.trimEnd()}\n\n${footer}\n` : input.body;
  const headers: Record<string, { prepared: true; foldLines: true; value: string }> = {};
  // RFC 2369: a mailto target always (a message to it reaches the mailbox sync, which records the
  // opt-out); RFC 8058 one-click only with an https URL (it requires one), via List-Unsubscribe-Post.
  const mailto = `<mailto:${sender.address}?subject=unsubscribe>`;
  headers['List-Unsubscribe'] = {
    prepared: true,
    foldLines: true,
    value: input.unsubscribeUrl ? `<${cleanUrl(input.unsubscribeUrl)}>, ${mailto}` : mailto,
  };
  if (input.unsubscribeUrl)
    headers['List-Unsubscribe-Post'] = { prepared: true, foldLines: true, value: 'List-Unsubscribe=One-Click' };
  const composer = new MailComposer({
    from: { name: sender.name, address: sender.address },
    to: input.to,
    subject: subjectFor(input, references.length > 0),
    date: now,
    messageId,
    ...(references.length ? { inReplyTo: references[references.length - 1], references } : {}),
    text,
    html: toHtml(input.body, footer, input.tracking, input.unsubscribeUrl),
    headers,
    textEncoding: 'Q',
  });
  const node = composer.compile();
  // MailComposer puts Bcc in no header and we have none; the envelope is ours, not derived from headers.
  return node.build().then((raw) => ({
    raw,
    messageId,
    threadId: references[0] ?? messageId,
    envelope: { from: sender.address, to: [input.to] },
    sentAt: now,
  }));
}

/** A URL as it may stand between angle brackets in a header (no controls, spaces or brackets). */
const cleanUrl = (url: string) => url.replace(/[\x00-\x20\x7f<>]/g, '');

const escapeHtml = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
/** http(s) URLs in running text, without the sentence's closing punctuation. */
const URL_PATTERN = /\bhttps?:\/\/[^\s<>"']*[^\s<>"'.,;:!?)\]}]/gi;

/** The href of a body link: the URL itself, or its tracked redirect. */
type Href = (url: string) => string;

function linkify(line: string, href: Href = (url) => url): string {
  let out = '';
  let last = 0;
  for (const m of line.matchAll(URL_PATTERN)) {
    out += escapeHtml(line.slice(last, m.index)) + `<a href="${escapeHtml(href(m[0]))}">${escapeHtml(m[0])}</a>`;
    last = m.index + m[0].length;
  }
  return out + escapeHtml(line.slice(last));
}

const paragraphs = (text: string) =>
  text
    .replace(/\r\n?/g, '\n')
    .split(/\n{2,}/)
    .map((p) => p.trim())
    .filter(Boolean);

/**
 * The URLs of a body, in the order the HTML part numbers its links (the same paragraphs, lines and
 * pattern as `toHtml`): link i of a tracked email redirects to `linksOf(body)[i]`.
 */
export function linksOf(body: string): string[] {
  return paragraphs(body).flatMap((p) =>
    p.split('\n').flatMap((line) => [...line.matchAll(URL_PATTERN)].map((m) => m[0])),
  );
}

/**
 * The HTML alternative of a plain-text body: escaped, paragraphs and line breaks kept, links clickable, the footer small below.
 * With `tracking`: the body's links point at their redirects, numbered as `linksOf` numbers them, the
 * visible text unchanged; the open pixel closes the document. An opt-out is never routed through a
 * tracker: the footer's links, and the recipient's unsubscribe URL where the body carries it
 * (`{{unsubscribe_url}}`), stay direct (that one still takes its number, so the numbering stays `linksOf`'s).
 */
export function toHtml(
  body: string,
  footer: string | null,
  tracking?: SendEmailInput['tracking'],
  unsubscribeUrl?: string | null,
): string {
  const block = (p: string, style = '', href?: Href) =>
    `<p${style}>${p
      .split('\n')
      .map((line) => linkify(line, href))
      .join('<br>\n')}</p>`;
  const clickUrl = tracking?.clickUrl;
  let n = 0;
  // Called once per link in document order (map runs in order), so the count is the link's place.
  const tracked: Href | undefined = clickUrl
    ? (url) => {
        const i = n++;
        return url === unsubscribeUrl ? url : clickUrl(i);
      }
    : undefined;
  const main = paragraphs(body).map((p) => block(p, '', tracked));
  const foot = footer ? paragraphs(footer).map((p) => block(p, ' style="color:#6b7280;font-size:12px"')) : [];
  const pixel = tracking?.openUrl
    ? [`<img src="${escapeHtml(tracking.openUrl)}" width="1" height="1" alt="" style="display:block;border:0">`]
    : [];
  return `<!doctype html>\n<html><body>\n${[...main, ...foot, ...pixel].join('\n')}\n</body></html>\n`;
}
