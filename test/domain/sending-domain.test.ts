import test from 'ava';
import { DnsError, LocalDns, type DnsResolver } from '../../lib/dns.js';
import { checkSendingDomain, mailboxDomain } from '../../domain/accounts/sending-domain.js';

const selectors = ['default', 'sandbox'];
const dns = new LocalDns();

test('a well set-up domain passes all three checks, with the DKIM selector found', async (t) => {
  const c = await checkSendingDomain(dns, 'acme.example', selectors);
  t.true(c.ready);
  t.like(c.spf, { status: 'pass', fix: null });
  t.regex(c.spf.record!, /^v=spf1 /);
  t.like(c.dkim, { status: 'pass', selector: 'sandbox' });
  t.like(c.dmarc, { status: 'pass' });
});

test('missing and invalid records each say what to fix', async (t) => {
  const nospf = await checkSendingDomain(dns, 'nospf-acme.example', selectors);
  t.false(nospf.ready);
  t.like(nospf.spf, { status: 'missing', record: null });
  t.regex(nospf.spf.fix!, /add a TXT record at nospf-acme\.example: "v=spf1/);
  t.like(nospf.dkim, { status: 'pass' });

  const bad = await checkSendingDomain(dns, 'badspf.example', selectors);
  t.like(bad.spf, { status: 'invalid' });
  t.regex(bad.spf.fix!, /2 SPF records/);

  const nodkim = await checkSendingDomain(dns, 'nodkim.example', selectors);
  t.like(nodkim.dkim, { status: 'missing', selector: null });
  t.regex(nodkim.dkim.fix!, /_domainkey\.nodkim\.example \(selectors tried: default, sandbox\)/);

  const nodmarc = await checkSendingDomain(dns, 'nodmarc.example', selectors);
  t.like(nodmarc.dmarc, { status: 'missing' });
  t.regex(nodmarc.dmarc.fix!, /_dmarc\.nodmarc\.example: "v=DMARC1; p=none/);
});

test('records that exist but are wrong: +all, a revoked DKIM key, a DMARC record without a policy', async (t) => {
  const records: Record<string, string[]> = {
    'loose.example': ['v=spf1 include:x.example +all'],
    'default._domainkey.loose.example': ['v=DKIM1; k=rsa; p='],
    '_dmarc.loose.example': ['v=DMARC1; rua=mailto:x@loose.example'],
  };
  const table: DnsResolver = { name: 'table', txt: async (h) => records[h] ?? [] };
  const c = await checkSendingDomain(table, 'loose.example', selectors);
  t.like(c.spf, { status: 'invalid' });
  t.regex(c.spf.fix!, /\+all/);
  t.like(c.dkim, { status: 'invalid', selector: 'default' });
  t.regex(c.dkim.fix!, /empty \(revoked\)/);
  t.like(c.dmarc, { status: 'invalid' });
  t.false(c.ready);
});

test('a failing resolver gives `error` results, not an exception', async (t) => {
  const c = await checkSendingDomain(dns, 'dnsfail.example', selectors);
  for (const check of [c.spf, c.dkim, c.dmarc]) {
    t.is(check.status, 'error');
    t.regex(check.fix!, /failed \(ETIMEOUT\)/);
  }
  const broken: DnsResolver = { name: 'broken', txt: async () => Promise.reject(new Error('bug')) };
  await t.throwsAsync(checkSendingDomain(broken, 'acme.example', selectors), { message: 'bug' }); // not a DNS failure: a bug surfaces
  t.true(new DnsError('h', 'ESERVFAIL') instanceof Error);
});

test('mailboxDomain takes the domain of an address, or null', (t) => {
  t.is(mailboxDomain('Ana@Mail.Acme.Example'), 'mail.acme.example');
  t.is(mailboxDomain('not an address'), null);
  t.is(mailboxDomain(null), null);
  t.is(mailboxDomain('a@localhost'), null);
});
