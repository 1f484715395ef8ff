// Tracking in the composed message (lib/connectors/mailbox/compose.ts, docs/tracking.md): the HTML
// part's body links point at their redirects in `linksOf` order with their text unchanged, the
// footer's links and the unsubscribe URL stay direct, the pixel closes the HTML, the text part is
// sent as written, and composing stays deterministic.
import test from 'ava';
import { simpleParser } from 'mailparser';
import { composeMessage, linksOf, toHtml } from '../../lib/connectors/mailbox/compose.js';
import type { SendEmailInput } from '../../lib/connectors/types.js';

const UNSUBSCRIBE = 'https://api.example/unsubscribe/AAAA.BBBB';
const BODY = [
  'Hi Ada,',
  '',
  'Our docs: https://docs.example.com/start?x=1&y=2. And the pricing (https://example.com/pricing)!',
  'A second line with http://example.org/a',
  '',
  `Not interested? ${UNSUBSCRIBE}`,
].join('\r\n');
const FOOTER = 'Example Ltd, 1 Main St — https://example.com/legal';
const click = (i: number) => `https://t.example/t/TOKEN/l/${i}`;
const tracking: SendEmailInput['tracking'] = { openUrl: 'https://t.example/t/TOKEN/open.gif', clickUrl: click };

const hrefs = (html: string) =>
  [...html.matchAll(/<a href="([^"]*)">([^<]*)<\/a>/g)].map((m) => ({
    href: m[1].replace(/&amp;/g, '&'),
    text: m[2].replace(/&amp;/g, '&'),
  }));

test('linksOf: the body’s URLs in order, without closing punctuation', (t) => {
  t.deepEqual(linksOf(BODY), [
    'https://docs.example.com/start?x=1&y=2',
    'https://example.com/pricing',
    'http://example.org/a',
    UNSUBSCRIBE,
  ]);
  t.deepEqual(linksOf('no links here'), []);
});

test('HTML: body links rewritten in linksOf order with their text unchanged; footer and unsubscribe links direct; the pixel last', (t) => {
  const html = toHtml(BODY, FOOTER, tracking, UNSUBSCRIBE);
  const links = linksOf(BODY);
  t.deepEqual(hrefs(html), [
    { href: click(0), text: links[0] },
    { href: click(1), text: links[1] },
    { href: click(2), text: links[2] },
    { href: UNSUBSCRIBE, text: UNSUBSCRIBE },
    { href: 'https://example.com/legal', text: 'https://example.com/legal' },
  ]);
  t.regex(
    html,
    /<img src="https:\/\/t\.example\/t\/TOKEN\/open\.gif" width="1" height="1" alt="" style="display:block;border:0">\n<\/body><\/html>\n$/,
  );
  t.is(html.indexOf('<img'), html.lastIndexOf('<img'), 'one pixel');

  // Each part alone; none: the untracked HTML.
  t.false(toHtml(BODY, FOOTER, { openUrl: null, clickUrl: click }).includes('<img'));
  t.deepEqual(
    hrefs(toHtml(BODY, FOOTER, { openUrl: tracking.openUrl, clickUrl: null })).map((l) => l.href),
    [...links, 'https://example.com/legal'],
  );
  t.is(toHtml(BODY, FOOTER, { openUrl: null, clickUrl: null }), toHtml(BODY, FOOTER));
});

test('the message: the text part as written, the HTML tracked, the same bytes for the same input', async (t) => {
  const sender = { address: 'ana@sender.example', name: 'Ana' };
  const input: SendEmailInput = {
    idempotencyKey: '0190f843-0000-7000-8000-0000000000aa',
    to: 'ada@example.com',
    subject: 'Hello',
    body: BODY,
    footer: FOOTER,
    unsubscribeUrl: UNSUBSCRIBE,
    tracking,
  };
  const now = new Date('2026-11-27T09:00:00.000Z');
  const a = await composeMessage(sender, input, now);
  const b = await composeMessage(sender, input, now);
  // The same bytes but for nodemailer's random MIME boundary: tracking adds no randomness.
  const unbound = (raw: Buffer) => raw.toString('utf8').replace(/--_NmP-[0-9a-f]+-Part_\d+/g, 'BOUNDARY');
  t.is(unbound(a.raw), unbound(b.raw), 'deterministic');
  const plain = await composeMessage(sender, { ...input, tracking: undefined }, now);
  const [tracked, untracked] = await Promise.all([simpleParser(a.raw), simpleParser(plain.raw)]);
  t.is(tracked.text, untracked.text, 'the text part is unchanged');
  t.false((tracked.text ?? '').includes('t.example'));
  t.true((tracked.html || '').includes(click(2)));
  t.true((tracked.html || '').includes('open.gif'));
});
