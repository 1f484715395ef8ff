// The sending-domain check of an email account's setup status: SPF, DKIM and DMARC of the mailbox's
// domain, each with what to fix. Receivers use these to decide whether mail from the domain is
// genuine; a missing or broken record sends campaign mail to spam.
import { DnsError, type DnsResolver } from '../../lib/dns.js';

export type RecordStatus = 'pass' | 'missing' | 'invalid' | 'error';

export interface RecordCheck {
  status: RecordStatus;
  /** The record found (the first relevant one); null when none. */
  record: string | null;
  /** What to change, in one sentence; null when the record passes. */
  fix: string | null;
}

export interface DomainCheck {
  domain: string;
  spf: RecordCheck;
  dkim: RecordCheck & { selector: string | null };
  dmarc: RecordCheck;
  /** Every record passes. */
  ready: boolean;
}

const failed = (err: unknown): RecordCheck => {
  if (!(err instanceof DnsError)) throw err;
  return { status: 'error', record: null, fix: `the lookup of ${err.host} failed (${err.code}); check again later` };
};

async function spf(dns: DnsResolver, domain: string): Promise<RecordCheck> {
  const records = (await dns.txt(domain)).filter((r) => /^v=spf1(\s|$)/i.test(r.trim()));
  if (!records.length)
    return {
      status: 'missing',
      record: null,
      fix: `add a TXT record at ${domain}: "v=spf1 include:<your mail provider's SPF host> ~all"`,
    };
  if (records.length > 1)
    return {
      status: 'invalid',
      record: records[0],
      fix: `${domain} has ${records.length} SPF records; receivers reject that: merge them into one`,
    };
  if (/\s\+all\s*$/i.test(records[0]))
    return {
      status: 'invalid',
      record: records[0],
      fix: 'the record ends in +all, which lets anyone send as the domain: end it with ~all or -all',
    };
  return { status: 'pass', record: records[0], fix: null };
}

async function dkim(
  dns: DnsResolver,
  domain: string,
  selectors: string[],
): Promise<RecordCheck & { selector: string | null }> {
  // The selector is the mail provider's choice, so the usual ones are tried (DKIM_SELECTORS).
  const found = await Promise.all(
    selectors.map(async (s) => ({
      s,
      records: (await dns.txt(`${s}._domainkey.${domain}`)).filter((r) => /(^|;)\s*p=/i.test(r)),
    })),
  );
  const hit = found.find((f) => f.records.length);
  if (!hit) {
    return {
      status: 'missing',
      selector: null,
      record: null,
      fix: `publish the DKIM key your mail provider gives you as a TXT record at <selector>._domainkey.${domain} (selectors tried: ${selectors.join(', ')})`,
    };
  }
  const record = hit.records[0];
  if (/(^|;)\s*p=\s*(;|$)/i.test(record))
    return {
      status: 'invalid',
      selector: hit.s,
      record,
      fix: `the key at ${hit.s}._domainkey.${domain} is empty (revoked): publish the current key`,
    };
  return { status: 'pass', selector: hit.s, record, fix: null };
}

async function dmarc(dns: DnsResolver, domain: string): Promise<RecordCheck> {
  const records = (await dns.txt(`_dmarc.${domain}`)).filter((r) => /^v=DMARC1(\s*;|$)/i.test(r.trim()));
  if (!records.length)
    return {
      status: 'missing',
      record: null,
      fix: `add a TXT record at _dmarc.${domain}: "v=DMARC1; p=none; rua=mailto:dmarc@${domain}"`,
    };
  if (!/;\s*p=(none|quarantine|reject)\s*(;|$)/i.test(records[0]))
    return {
      status: 'invalid',
      record: records[0],
      fix: 'the DMARC record has no valid policy: add p=none, p=quarantine or p=reject',
    };
  return { status: 'pass', record: records[0], fix: null };
}

/** Checks the three records of `domain` (lookups in parallel; a failed lookup is `error`, not a throw). */
export async function checkSendingDomain(dns: DnsResolver, domain: string, selectors: string[]): Promise<DomainCheck> {
  const [s, k, d] = await Promise.all([
    spf(dns, domain).catch(failed),
    dkim(dns, domain, selectors).catch((err) => ({ ...failed(err), selector: null })),
    dmarc(dns, domain).catch(failed),
  ]);
  return {
    domain,
    spf: s,
    dkim: k,
    dmarc: d,
    ready: s.status === 'pass' && k.status === 'pass' && d.status === 'pass',
  };
}

/** The domain part of a mailbox address, lower-cased; null when it is not an address. */
export function mailboxDomain(address: string | null): string | null {
  const m = address ? /^[^@\s]+@([a-z0-9-]+(?:\.[a-z0-9-]+)+)$/i.exec(address.trim()) : null;
  return m ? m[1].toLowerCase() : null;
}
