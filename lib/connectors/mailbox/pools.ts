// One pooled SMTP transport per mail account, so a campaign's sends reuse open, authenticated
// connections instead of a TCP + TLS + AUTH handshake each. Keyed by the account and a hash of its
// SMTP settings: a reconnect with new credentials gets a new pool (the old one is closed).
import type { SmtpTransport } from './clients.js';
import { endpointKey, type MailEndpoint } from './settings.js';

interface Entry {
  key: string;
  transport: Promise<SmtpTransport>;
}

export class SmtpPools {
  private readonly pools = new Map<string, Entry>();
  /** How many transports were made (tests read it to see a pool reused). */
  created = 0;

  /** The account's pool for `endpoint`, made with `make` (host resolution, then the transport) when there is none for these settings. */
  get(accountId: string, endpoint: MailEndpoint, make: () => Promise<SmtpTransport>): Promise<SmtpTransport> {
    const key = endpointKey(endpoint);
    const current = this.pools.get(accountId);
    if (current?.key === key) return current.transport;
    if (current) this.drop(accountId);
    const transport = make();
    this.created++;
    const entry = { key, transport };
    this.pools.set(accountId, entry);
    // A failed make is forgotten, so the next send tries again.
    transport.catch(() => (this.pools.get(accountId) === entry ? this.pools.delete(accountId) : undefined));
    return transport;
  }

  /** Closes and forgets the account's pool (idempotent): a disconnect, or a network failure (the next send resolves the host again). */
  drop(accountId: string): void {
    const entry = this.pools.get(accountId);
    if (!entry) return;
    this.pools.delete(accountId);
    entry.transport.then((t) => t.close()).catch(() => undefined);
  }

  has(accountId: string): boolean {
    return this.pools.has(accountId);
  }

  closeAll(): void {
    for (const id of [...this.pools.keys()]) this.drop(id);
  }
}
