// The mail host rule (lib/connectors/mailbox/settings.ts isMailHost): what a connect accepts as an SMTP or
// IMAP host before any connection — IP literals in their strict forms, DNS names of LDH labels not
// ending in a number (an IPv4 form to URL parsers and resolvers).
import test from 'ava';
import { isMailHost, parseMailCredentials } from '../../lib/connectors/mailbox/settings.js';

test('valid hosts: DNS names and strict IPv4 / IPv6 literals', (t) => {
  for (const host of [
    'smtp.gmail.com',
    'outlook.office365.com',
    'mail.example.com.',
    'localhost',
    'xn--bcher-kva.example',
    'a-b.c1',
    '1.2.3.4',
    '0.0.0.0',
    '255.255.255.255',
    '127.0.0.1',
    '::1',
    '[::1]',
    '2001:db8::25',
    '::ffff:1.2.3.4',
  ]) {
    t.true(isMailHost(host), host);
  }
});

test('malformed hosts: numeric dotted forms that are not IPv4, octets over 255, leading zeros, empty labels, spaces, bad labels, zones', (t) => {
  const long = `${'a'.repeat(64)}.example`;
  const tooLong = `${Array.from({ length: 64 }, () => 'abc').join('.')}.com`;
  for (const host of [
    '08.0.0.1',
    '1.2.3.999',
    '256.1.1.1',
    '01.2.3.4',
    '1.2.3',
    '1.2.3.4.5',
    '1.2.3.4.',
    '0x7f000001',
    'example.123',
    'a.0x10',
    'mail..example.com',
    '.example.com',
    'mail example.com',
    ' ',
    '',
    '-a.example',
    'a-.example',
    'a_b.example',
    long,
    tooLong,
    'fe80::1%eth0',
    '[::1',
    '::1]',
    '[1.2.3.4]',
    '1:2:3',
  ]) {
    t.false(isMailHost(host), JSON.stringify(host));
  }
});

test('parseMailCredentials names the field of a malformed host', (t) => {
  const base = {
    email: 'ana@example.com',
    password: 'x',
    smtp_host: 'smtp.example.com',
    imap_host: 'imap.example.com',
  };
  for (const side of ['smtp', 'imap']) {
    const err = t.throws(() => parseMailCredentials({ ...base, [`${side}_host`]: '1.2.3.999' }));
    t.like(err, { reason: 'invalid_credentials', side: null });
    t.true(err!.message.includes(`${side}_host must be a host name or an IP address`), err!.message);
  }
  t.like(parseMailCredentials({ ...base, smtp_host: ' [2001:DB8::25] ' }).smtp, { host: '2001:db8::25' });
});
