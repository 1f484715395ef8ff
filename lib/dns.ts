// DNS lookups for sending-domain checks (SPF, DKIM, DMARC of a mailbox's domain). Behind an interface
// so that everything runs offline: the local resolver answers by documented rules (docs/accounts.md),
// the system one asks the servers in DNS_SERVERS.
import { Resolver } from 'node:dns/promises';
import type { Config } from './config.js';

export interface DnsResolver {
  readonly name: string;
  /** The TXT records of `host`, each joined from its strings; [] when there are none (NXDOMAIN, NODATA). */
  txt(host: string): Promise<string[]>;
}

/** A lookup that failed for a reason other than "no such record" (timeout, refused, server failure). */
export class DnsError extends Error {
  constructor(
    readonly host: string,
    readonly code: string,
  ) {
    super(`DNS lookup of ${host} failed: ${code}`);
    this.name = 'DnsError';
  }
}

const NO_RECORD = new Set(['ENOTFOUND', 'ENODATA', 'ENONAME']);

/** Real DNS through the given servers, with a timeout and one retry per server. */
export class SystemDns implements DnsResolver {
  readonly name = 'system';
  private readonly resolver: Resolver;

  constructor(servers: string[], timeoutMs: number) {
    this.resolver = new Resolver({ timeout: timeoutMs, tries: 2 });
    this.resolver.setServers(servers);
  }

  async txt(host: string): Promise<string[]> {
    try {
      return (await this.resolver.resolveTxt(host)).map((parts) => parts.join(''));
    } catch (err) {
      const code = (err as { code?: string }).code ?? 'EUNKNOWN';
      if (NO_RECORD.has(code)) return [];
      throw new DnsError(host, code);
    }
  }
}

/**
 * The local default. Every domain is set up correctly (SPF including the sandbox network, a DKIM key
 * under the `sandbox` selector, DMARC p=none), except that a domain whose first label contains
 * `nospf`, `nodkim` or `nodmarc` lacks that record, and one containing `badspf` has two SPF records
 * (invalid). `dnsfail` makes every lookup fail (a resolver outage).
 */
export class LocalDns implements DnsResolver {
  readonly name = 'local';

  async txt(host: string): Promise<string[]> {
    const name = host.toLowerCase().replace(/\.$/, '');
    const match = /^(?:(_dmarc)\.|([a-z0-9-]+)\._domainkey\.)?(.+)$/.exec(name)!;
    const [, dmarc, selector, domain] = match;
    const first = domain.split('.')[0];
    if (first.includes('dnsfail')) throw new DnsError(host, 'ETIMEOUT');
    if (dmarc) return first.includes('nodmarc') ? [] : [`v=DMARC1; p=none; rua=mailto:dmarc@${domain}`];
    if (selector)
      return selector === 'sandbox' && !first.includes('nodkim')
        ? ['v=DKIM1; k=rsa; p=MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAsandbox']
        : [];
    const spf = 'v=spf1 include:_spf.sandbox.invalid ~all';
    if (first.includes('nospf')) return ['google-site-verification=sandbox'];
    if (first.includes('badspf')) return [spf, 'v=spf1 -all'];
    return [spf, 'google-site-verification=sandbox'];
  }
}

export const createDns = (config: Config['dns']): DnsResolver =>
  config.servers.length ? new SystemDns(config.servers, config.timeoutMs) : new LocalDns();
