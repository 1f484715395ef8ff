// Inbound email classification (lib/connectors/mailbox/classify.ts, dsn.ts, return-date.ts, parse.ts):
// fixture messages as a mail server delivers them, read with mailparser like the mailbox sync does.
import test from 'ava';
import { simpleParser } from 'mailparser';
import { classifyMail, isAutoReply, messageIds, normaliseMessageId } from '../../lib/connectors/mailbox/classify.js';
import { parseDeliveryReport } from '../../lib/connectors/mailbox/dsn.js';
import { readMail, replyText } from '../../lib/connectors/mailbox/parse.js';
import { extractReturnDate } from '../../lib/connectors/mailbox/return-date.js';

const ACCOUNT = 'ana@sender.test';
const SENT = new Date('2026-11-20T10:00:00Z'); // a Friday
const OURS = '<0193a1b2-0000-7000-8000-000000000001@sender.test>';

/** A raw message: headers, a blank line, the body (CRLF). */
const raw = (headers: Record<string, string>, body: string) =>
  [
    ...Object.entries({
      From: 'Grace <grace@prospect.test>',
      To: ACCOUNT,
      Subject: 'Re: Hello',
      'Message-ID': '<r1@prospect.test>',
      Date: SENT.toUTCString(),
      ...headers,
    })
      .filter(([, v]) => v !== '')
      .map(([k, v]) => `${k}: ${v}`),
    '',
    body,
  ].join('\r\n');

const classify = async (source: string) =>
  classifyMail(await simpleParser(source), source, { accountAddress: ACCOUNT, sentAt: SENT });

function dsn(opts: {
  status: string;
  action: string;
  recipient?: string;
  original?: 'rfc822' | 'headers' | 'none';
  from?: string;
}) {
  const b = 'b-report';
  const original = opts.original ?? 'rfc822';
  return [
    `From: Mail Delivery System <${opts.from ?? 'MAILER-DAEMON@mx.prospect.test'}>`,
    `To: ${ACCOUNT}`,
    'Subject: Undelivered Mail Returned to Sender',
    'Message-ID: <dsn1@mx.prospect.test>',
    `Date: ${SENT.toUTCString()}`,
    'MIME-Version: 1.0',
    `Content-Type: multipart/report; report-type=delivery-status;\r\n\tboundary="${b}"`,
    '',
    'This is a MIME-encapsulated message.',
    '',
    `--${b}`,
    'Content-Type: text/plain; charset=us-ascii',
    '',
    'I am sorry to have to inform you that your message could not be delivered.',
    '',
    `--${b}`,
    'Content-Type: message/delivery-status',
    '',
    'Reporting-MTA: dns; mx.prospect.test',
    'Arrival-Date: Fri, 20 Nov 2026 09:59:58 +0000',
    '',
    `Final-Recipient: rfc822; ${opts.recipient ?? 'Grace@Prospect.test'}`,
    `Original-Recipient: rfc822;${opts.recipient ?? 'grace@prospect.test'}`,
    `Action: ${opts.action}`,
    `Status: ${opts.status}`,
    `Diagnostic-Code: smtp; 550 ${opts.status} mailbox problem`,
    '',
    ...(original === 'none'
      ? []
      : [
          `--${b}`,
          original === 'rfc822' ? 'Content-Type: message/rfc822' : 'Content-Type: text/rfc822-headers',
          '',
          `From: ${ACCOUNT}`,
          'To: grace@prospect.test',
          'Subject: Hello',
          `Message-ID: ${OURS}`,
          '',
          ...(original === 'rfc822' ? ['Hi Grace', ''] : []),
        ]),
    `--${b}--`,
    '',
  ].join('\r\n');
}

test('a reply: threading ids read, normalised with angle brackets', async (t) => {
  const f = await classify(
    raw({ 'In-Reply-To': OURS, References: `<root@sender.test>\r\n ${OURS}` }, 'Sounds good, let us talk Tuesday.'),
  );
  t.deepEqual(f, { kind: 'reply', subject: 'Re: Hello', inReplyTo: OURS, references: ['<root@sender.test>', OURS] });
  t.deepEqual(messageIds('<a@x> <b@x>'), ['<a@x>', '<b@x>']);
  t.is(normaliseMessageId('bare@x'), '<bare@x>');
  t.regex(normaliseMessageId(`<${'x'.repeat(300)}@y>`)!, /^<[0-9a-f]{64}@long-id\.invalid>$/);
});

test('auto-replies: RFC 3834 headers, X-Autoreply, Precedence and the usual subjects; X-Auto-Response-Suppress alone is not one', async (t) => {
  const kind = async (headers: Record<string, string>, body = 'Thanks, I will read it.') =>
    (await classify(raw(headers, body))).kind;
  t.is(await kind({ 'Auto-Submitted': 'auto-replied' }), 'auto_reply');
  t.is(await kind({ 'Auto-Submitted': 'auto-generated' }), 'auto_reply');
  t.is(await kind({ 'Auto-Submitted': 'no' }), 'reply');
  t.is(await kind({ 'X-Autoreply': 'yes' }), 'auto_reply');
  t.is(await kind({ 'X-Autorespond': 'Out of office' }), 'auto_reply');
  for (const p of ['bulk', 'junk', 'list', 'auto_reply']) t.is(await kind({ Precedence: p }), 'auto_reply', p);
  t.is(await kind({ Precedence: 'first-class' }), 'reply');
  t.is(await kind({ 'X-Auto-Response-Suppress': 'All' }), 'reply');
  for (const s of [
    'Automatic reply: Hello',
    'Out of Office: Hello',
    'Abwesenheitsnotiz: Hello',
    'Réponse automatique : Hello',
    'Autoreply: Hello',
  ])
    t.is(await kind({ Subject: s }), 'auto_reply', s);
  t.is(await kind({}, 'I am currently out of the office with limited access to email.'), 'auto_reply');
  t.false(
    isAutoReply(await simpleParser(raw({}, 'I will be back on Monday with the numbers you asked for.'))),
    'a person naming a day is not an automatic answer',
  );
});

test('out-of-office return dates: English forms, numeric and ISO, year-less ones resolved to the next occurrence, only within ~6 months', (t) => {
  const at = (text: string, sent = SENT) => extractReturnDate(text, sent);
  t.is(at('I am out of the office and will be back on Monday 7 December.'), '2026-12-07');
  t.is(at('I will return on 12/07/2026.'), '2026-12-07', 'month first when day first would be in the past');
  t.is(at('I will return on 25/11/2026.'), '2026-11-25', 'day first when the month cannot be 25');
  t.is(at('Back in the office on 2026-12-07.'), '2026-12-07');
  t.is(at('I am away until December 7th.'), '2026-12-07');
  t.is(at('Returning 7 Dec, limited access until then.'), '2026-12-07');
  t.is(at('I will be back on the 7th of December, 2026'), '2026-12-07');
  t.is(
    at('Away from 23 November until 4 December, back in the office on 7 December.'),
    '2026-12-07',
    'the latest named return',
  );
  t.is(at('Back on Monday.'), '2026-11-23', 'a weekday alone: the next one after the message');
  t.is(at('I am back on 5 January.'), '2027-01-05', 'a year-less date already past this year is next year’s');
  t.is(at('Back on 1 November 2026.'), null, 'a past date');
  t.is(at('Back on 1 November 2027.'), null, 'too far ahead');
  t.is(at('Back on 3 August.'), null, 'next year’s 3 August is more than 6 months away');
  t.is(at('I am on vacation. Meeting notes from 7 December are attached.'), null, 'a date without a return word');
  t.is(at('Ich bin ab dem 7. Dezember wieder im Büro. Bis zum 4. Dezember bin ich nicht erreichbar.'), '2026-12-07');
  t.is(at('Je serai de retour le 7 décembre.'), '2026-12-07');
  t.is(at('Zurück am 07.12.2026'), '2026-12-07');
});

test('an auto-reply carries its return date', async (t) => {
  const f = await classify(
    raw(
      { Subject: 'Automatic reply: Hello', 'Auto-Submitted': 'auto-replied', 'In-Reply-To': OURS },
      'I am out of the office and will be back on Monday 7 December.',
    ),
  );
  t.like(f, { kind: 'auto_reply', returnDate: '2026-12-07', inReplyTo: OURS });
});

test('delivery status notifications: 5.x.x hard, a failed 4.x.x soft, Action: delayed a delay (never a bounce), the recipient and the original Message-ID from message/rfc822 or text/rfc822-headers', async (t) => {
  t.deepEqual((await classify(dsn({ status: '5.1.1', action: 'failed' }))).bounce, {
    class: 'hard',
    status: '5.1.1',
    recipient: 'grace@prospect.test',
    originalMessageId: OURS,
  });
  // "THIS IS A WARNING ONLY": the server still tries; the message may yet be delivered.
  t.deepEqual((await classify(dsn({ status: '4.2.2', action: 'delayed', original: 'headers' }))).bounce, {
    class: 'delayed',
    status: '4.2.2',
    recipient: 'grace@prospect.test',
    originalMessageId: OURS,
  });
  t.like((await classify(dsn({ status: '4.4.7', action: 'failed' }))).bounce, { class: 'soft', status: '4.4.7' });
  t.like((await classify(dsn({ status: '', action: 'failed', original: 'none' }))).bounce, {
    class: 'hard',
    status: null,
    originalMessageId: null,
  });
  t.like((await classify(dsn({ status: '', action: 'delayed' }))).bounce, { class: 'delayed' });
  t.like((await classify(dsn({ status: '4.4.1', action: 'delayed' }))).bounce, { class: 'delayed', status: '4.4.1' });
  // A report whose recipient was delivered is not a bounce, and not a person's reply either.
  t.is(parseDeliveryReport(dsn({ status: '2.0.0', action: 'delivered' })), 'no_failure');
  t.is((await classify(dsn({ status: '2.0.0', action: 'delivered' }))).kind, 'auto_reply');
  t.is(parseDeliveryReport(raw({}, 'no report here')), null);
});

test('a report inside multipart/mixed and a base64 status part are read too', async (t) => {
  const inner = dsn({ status: '5.7.1', action: 'failed' });
  const innerHead = inner.split('\r\n\r\n')[0];
  const innerType = /Content-Type: (multipart\/report;[\s\S]*?boundary="[^"]+")/.exec(innerHead)![1];
  const wrapped = [
    'From: postmaster@prospect.test',
    `To: ${ACCOUNT}`,
    'Subject: Delivery report',
    'MIME-Version: 1.0',
    'Content-Type: multipart/mixed; boundary="outer"',
    '',
    '--outer',
    `Content-Type: ${innerType}`,
    '',
    inner.slice(inner.indexOf('\r\n\r\n') + 4),
    '--outer--',
    '',
  ].join('\r\n');
  t.like(parseDeliveryReport(wrapped), { class: 'hard', status: '5.7.1', originalMessageId: OURS });
  const b64 = dsn({ status: '5.1.1', action: 'failed' }).replace(
    /Content-Type: message\/delivery-status\r\n\r\n([\s\S]*?)\r\n--b-report/,
    (_, body: string) =>
      `Content-Type: message/delivery-status\r\nContent-Transfer-Encoding: base64\r\n\r\n${Buffer.from(body).toString('base64')}\r\n--b-report`,
  );
  t.like(parseDeliveryReport(b64), { class: 'hard', status: '5.1.1', recipient: 'grace@prospect.test' });
});

test('classic bounces from a mail daemon: an SMTP code 5xx hard, 4xx or delay wording soft; the original id from the quoted headers', async (t) => {
  const hard = await classify(
    raw(
      { From: 'MAILER-DAEMON@mx.prospect.test', Subject: 'failure notice' },
      `Hi. This is the qmail-send program.\n<grace@prospect.test>:\n550 sorry, no mailbox here by that name\n\n--- Below this line is a copy of the message.\n\nFrom: ${ACCOUNT}\nMessage-ID: ${OURS}\n`,
    ),
  );
  t.deepEqual(hard.bounce, { class: 'hard', status: null, recipient: 'grace@prospect.test', originalMessageId: OURS });
  t.like(
    (
      await classify(
        raw(
          { From: 'postmaster@prospect.test', Subject: 'Delivery delayed' },
          'Your message to grace@prospect.test has been delayed. We will retry.',
        ),
      )
    ).bounce,
    { class: 'soft' },
  );
  t.like(
    (
      await classify(
        raw({ From: 'mailer-daemon@x.test', Subject: 'Undeliverable' }, 'Remote server said: 452 4.2.2 Mailbox full'),
      )
    ).bounce,
    { class: 'soft', status: '4.2.2' },
  );
  t.is(
    (await classify(raw({ From: 'grace@prospect.test' }, 'The delivery of your parcel failed, ha.'))).kind,
    'reply',
    'a person mentioning delivery is not a bounce',
  );
});

test('unsubscribe: the mailto’s subject, sent to the account’s address', async (t) => {
  t.is((await classify(raw({ Subject: 'unsubscribe' }, ''))).kind, 'unsubscribe');
  t.is(
    (await classify(raw({ Subject: 'Unsubscribe me please', 'Auto-Submitted': 'auto-generated' }, ''))).kind,
    'unsubscribe',
  );
  t.is((await classify(raw({ Subject: 'unsubscribe', To: 'someone-else@sender.test' }, ''))).kind, 'reply');
  t.is((await classify(raw({ Subject: 'Re: unsubscribe?' }, 'How do I unsubscribe?'))).kind, 'reply');
});

test('readMail: own messages, the reply without its quote, a digest id when none is given, attachments listed', async (t) => {
  const reply = await readMail(
    Buffer.from(
      raw(
        {},
        'Yes, Tuesday works.\r\n\r\nOn Fri, 20 Nov 2026 at 10:00, Ana <ana@sender.test> wrote:\r\n> Hi Grace\r\n> a question',
      ),
    ),
    { accountAddress: ACCOUNT, receivedAt: new Date('2026-11-20T10:00:05Z') },
  );
  t.like(reply, {
    messageId: '<r1@prospect.test>',
    from: 'grace@prospect.test',
    to: [ACCOUNT],
    text: 'Yes, Tuesday works.',
    own: false,
  });
  t.is(reply.sentAt.toISOString(), SENT.toISOString());
  const own = await readMail(
    Buffer.from(raw({ From: `Ana <${ACCOUNT.toUpperCase()}>`, 'Message-ID': '' }, 'note to self')),
    { accountAddress: ACCOUNT, receivedAt: null },
  );
  t.true(own.own);
  t.regex(own.messageId, /^<[0-9a-f]{64}@no-message-id\.invalid>$/);
  const future = await readMail(Buffer.from(raw({ Date: 'Fri, 20 Nov 2099 10:00:00 +0000' }, 'x')), {
    accountAddress: ACCOUNT,
    receivedAt: SENT,
  });
  t.is(future.sentAt.toISOString(), SENT.toISOString(), 'a Date far ahead of the receipt is not believed');
  const withFile = await readMail(
    Buffer.from(
      [
        'From: grace@prospect.test',
        `To: ${ACCOUNT}`,
        'Subject: deck',
        'MIME-Version: 1.0',
        'Content-Type: multipart/mixed; boundary="m"',
        '',
        '--m',
        'Content-Type: text/plain',
        '',
        'Attached.',
        '--m',
        'Content-Type: application/pdf; name="deck.pdf"',
        'Content-Disposition: attachment; filename="deck.pdf"',
        'Content-Transfer-Encoding: base64',
        '',
        Buffer.from('%PDF-1.4 tiny').toString('base64'),
        '--m--',
        '',
      ].join('\r\n'),
    ),
    { accountAddress: ACCOUNT, receivedAt: SENT },
  );
  t.deepEqual(withFile.attachments, [{ id: '1', name: 'deck.pdf', size: 13 }]);
  t.is(replyText('> only a quote'), '> only a quote', 'nothing but a quote: kept whole');
});
