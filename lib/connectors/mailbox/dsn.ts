// Delivery status notifications (RFC 3464) read from a message's raw source: mailparser folds the
// `message/delivery-status` part into the text and keeps no per-recipient structure, so the report
// is walked here with a small MIME splitter (bounded depth and parts; the source is already capped).
// A classic bounce without a report (a mailer daemon's prose with an SMTP code) is read from its text.
export interface DeliveryReport {
  /** `delayed`: a warning only (RFC 3464 `Action: delayed`): the server still tries, so no bounce. */
  class: 'hard' | 'soft' | 'delayed';
  status: string | null;
  recipient: string | null;
  originalMessageId: string | null;
}

interface Part {
  headers: Map<string, string>;
  body: string;
}

const MAX_DEPTH = 4;
const MAX_PARTS = 50;

/** Header fields of a block (unfolded; the first of a repeated field), keys lower-cased. */
export function headerFields(block: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of block.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const i = line.indexOf(':');
    if (i <= 0) continue;
    const key = line.slice(0, i).trim().toLowerCase();
    if (!out.has(key)) out.set(key, line.slice(i + 1).trim());
  }
  return out;
}

function split(raw: string): Part {
  const m = /\r?\n\r?\n/.exec(raw);
  return m
    ? { headers: headerFields(raw.slice(0, m.index)), body: raw.slice(m.index + m[0].length) }
    : { headers: headerFields(raw), body: '' };
}

/** `type/subtype` and its parameters. */
export function contentType(value: string | undefined): { type: string; params: Record<string, string> } {
  const [type, ...rest] = (value ?? 'text/plain').split(';');
  const params: Record<string, string> = {};
  for (const p of rest) {
    const i = p.indexOf('=');
    if (i > 0)
      params[p.slice(0, i).trim().toLowerCase()] = p
        .slice(i + 1)
        .trim()
        .replace(/^"(.*)"$/, '$1');
  }
  return { type: type.trim().toLowerCase(), params };
}

function decode(p: Part): string {
  const cte = (p.headers.get('content-transfer-encoding') ?? '').toLowerCase();
  if (cte === 'base64') return Buffer.from(p.body.replace(/\s+/g, ''), 'base64').toString('utf8');
  if (cte === 'quoted-printable')
    return p.body
      .replace(/=\r?\n/g, '')
      .replace(/=([0-9a-f]{2})/gi, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
  return p.body;
}

/** The leaf parts of a message (multiparts opened, up to MAX_DEPTH levels and MAX_PARTS parts). */
function leaves(raw: string, depth = 0, out: Part[] = []): Part[] {
  const part = split(raw);
  const ct = contentType(part.headers.get('content-type'));
  if (!ct.type.startsWith('multipart/') || !ct.params.boundary || depth >= MAX_DEPTH) {
    if (depth > 0) out.push(part);
    return out;
  }
  const delimiter = `--${ct.params.boundary}`;
  const chunks = part.body.split(new RegExp(`(?:^|\\r?\\n)${delimiter.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
  for (const chunk of chunks.slice(1)) {
    if (chunk.startsWith('--') || out.length >= MAX_PARTS) break;
    leaves(chunk.replace(/^[ \t]*\r?\n/, ''), depth + 1, out);
  }
  return out;
}

const address = (v: string | undefined) => {
  const a = v
    ?.replace(/^[^;]*;/, '')
    .trim()
    .replace(/^<|>$/g, '')
    .toLowerCase();
  return a && a.includes('@') ? a : null;
};
const messageIdOf = (v: string | undefined) => /<[^<>\s]+>/.exec(v ?? '')?.[0] ?? null;
/** A failed delivery's class: 5.x.x hard, 4.x.x soft, no code hard. */
const classOf = (status: string | null) => (status?.startsWith('4') ? 'soft' : 'hard');

/**
 * The report of a multipart/report (report-type=delivery-status): the first recipient that failed
 * (else one delayed) with its class: `failed` with 5.x.x (or no code) hard, with 4.x.x soft;
 * `delayed` (a warning only, whatever its code) a delay. `no_failure`: a report whose recipients were
 * all delivered, relayed or expanded; null: no delivery-status part.
 */
export function parseDeliveryReport(source: string): DeliveryReport | 'no_failure' | null {
  const parts = leaves(source);
  const status = parts.find((p) =>
    /^message\/(global-)?delivery-status$/.test(contentType(p.headers.get('content-type')).type),
  );
  if (!status) return null;
  const blocks = decode(status)
    .split(/\r?\n[ \t]*\r?\n/)
    .map(headerFields)
    .filter((b) => b.has('action') || b.has('status'));
  const pick =
    blocks.find((b) => b.get('action')?.toLowerCase() === 'failed') ??
    blocks.find((b) => b.get('action')?.toLowerCase() === 'delayed');
  if (!pick) return 'no_failure';
  const code = /[245]\.\d{1,3}\.\d{1,3}/.exec(pick.get('status') ?? '')?.[0] ?? null;
  const original = parts.find((p) =>
    /^(message\/(rfc822|global|global-headers|rfc822-headers)|text\/rfc822-headers)$/.test(
      contentType(p.headers.get('content-type')).type,
    ),
  );
  return {
    class: pick.get('action')!.toLowerCase() === 'delayed' ? 'delayed' : classOf(code),
    status: code,
    recipient: address(pick.get('final-recipient')) ?? address(pick.get('original-recipient')),
    originalMessageId: original ? messageIdOf(split(decode(original)).headers.get('message-id')) : null,
  };
}

const DAEMON = /^(mailer-daemon|postmaster|mail-daemon|mailer|bounces?|mdaemon|double-bounce)([+@.-]|$)/i;
const BOUNCE_SUBJECT =
  /(undeliver|undelivered mail|delivery status notification|delivery (has )?failed|mail delivery failed|failure notice|returned mail|delivery failure|non remis|unzustellbar|nicht zustellbar)/i;
const DELAY = /(delayed|will (continue to )?(retry|try)|still trying|not yet been delivered|temporar(y|ily))/i;

/** Whether a message without a report is a mail system's bounce: a daemon sender or a bounce subject. */
export function looksLikeBounce(from: string | null, subject: string | null): boolean {
  return (!!from && DAEMON.test(from)) || BOUNCE_SUBJECT.test(subject ?? '');
}

/** A classic bounce's class from its prose: a 5.x.x (or 5xx) code hard, 4.x.x (or 4xx) or delay wording soft, else hard. */
export function classicBounce(
  text: string,
  opts: { exclude: string[]; originalMessageId: string | null },
): DeliveryReport {
  const head = text.slice(0, 20_000);
  const enhanced = head.match(/\b[45]\.\d{1,3}\.\d{1,3}\b/g) ?? [];
  const basic = /\b([45][0-5]\d)[ -]/.exec(head)?.[1] ?? null;
  const status = enhanced.find((c) => c.startsWith('5')) ?? enhanced[0] ?? null;
  const cls = status
    ? classOf(status)
    : basic
      ? basic.startsWith('5')
        ? 'hard'
        : 'soft'
      : DELAY.test(head)
        ? 'soft'
        : 'hard';
  const skip = new Set(opts.exclude.map((a) => a.toLowerCase()));
  const finalRecipient = address(/^\s*final-recipient:\s*(.+)$/im.exec(head)?.[1]);
  const mentioned = [...head.matchAll(/[\w.+'-]+@[\w-]+(\.[\w-]+)+/g)]
    .map((m) => m[0].toLowerCase())
    .find((a) => !skip.has(a) && !DAEMON.test(a));
  return {
    class: cls,
    status,
    recipient: finalRecipient ?? mentioned ?? null,
    originalMessageId: opts.originalMessageId ?? messageIdOf(/^\s*message-id:\s*(.+)$/im.exec(head)?.[1]),
  };
}
