// What a sender account's setup status says about deliverability beyond its domain's records
// (docs/accounts.md "Setup status"): the one-click unsubscribe URL the service puts in every email
// (RFC 8058 wants https), and what the mailbox's provider requires of a connection in 2026, inferred
// from its IMAP/SMTP hosts (Google and Microsoft no longer take a password from third-party mail apps).
import type { IPlatformAccount } from '../../db/entities/PlatformAccount.js';
import { MAIL_CONNECTOR } from '../../lib/connectors/mailbox/account.js';
import { decrypt } from '../../lib/crypto.js';

export type MailboxProvider = 'google' | 'microsoft';

/** How a mail-connector account is connected, and to whose servers. */
export interface MailboxSetup {
  /** Google (Gmail, Google Workspace) or Microsoft (Microsoft 365, Outlook.com); null for any other host. */
  provider: MailboxProvider | null;
  /** `password` (SMTP/IMAP credentials) or `oauth` (a provider's grant). */
  auth: 'password' | 'oauth';
  smtp_host: string | null;
  imap_host: string | null;
}

export interface SetupWarning {
  code: 'unsubscribe_url_not_https' | 'provider_requires_oauth';
  message: string;
}

const under = (host: string, domains: string[]) => domains.some((d) => host === d || host.endsWith(`.${d}`));

/** The provider behind a mail host: imap.gmail.com, smtp.gmail.com → google; outlook.office365.com, smtp.office365.com, smtp-mail.outlook.com → microsoft. */
export function providerOfHost(host: string | null | undefined): MailboxProvider | null {
  const h = (host ?? '').trim().toLowerCase().replace(/\.$/, '');
  if (!h) return null;
  if (under(h, ['gmail.com', 'googlemail.com', 'google.com'])) return 'google';
  if (under(h, ['office365.com', 'outlook.com', 'office.com', 'hotmail.com', 'live.com'])) return 'microsoft';
  return null;
}

/** The mailbox's hosts and how it authenticates, from its sealed credentials; null for another connector or credentials that do not unseal. */
export function mailboxSetup(account: IPlatformAccount, encryptionKey: Buffer): MailboxSetup | null {
  if (account.connector !== MAIL_CONNECTOR || !account.credentialsSealed) return null;
  let c: Record<string, unknown>;
  try {
    c = JSON.parse(decrypt(account.credentialsSealed, encryptionKey)) as Record<string, unknown>;
  } catch {
    return null;
  }
  const str = (k: string) => (typeof c[k] === 'string' ? (c[k] as string) : null);
  const smtp = str('smtp_host');
  const imap = str('imap_host');
  const auth = ['password', 'smtp_password', 'imap_password'].some((k) => str(k)) ? 'password' : 'oauth';
  return { provider: providerOfHost(imap) ?? providerOfHost(smtp), auth, smtp_host: smtp, imap_host: imap };
}

/** The warnings of an email account's setup status (none for other channels). */
export function deliverabilityWarnings(
  account: IPlatformAccount,
  mailbox: MailboxSetup | null,
  publicBaseUrl: string,
): SetupWarning[] {
  if (account.channel !== 'email') return [];
  const out: SetupWarning[] = [];
  if (!/^https:\/\//i.test(publicBaseUrl))
    out.push({
      code: 'unsubscribe_url_not_https',
      message: `the one-click unsubscribe URL of every email is on PUBLIC_BASE_URL (${publicBaseUrl}), which is not https: RFC 8058 one-click unsubscribe (List-Unsubscribe-Post), which Gmail and Yahoo require of bulk senders, needs an https URL; the service's operator must set PUBLIC_BASE_URL to its public https address`,
    });
  if (mailbox?.auth === 'password' && mailbox.provider === 'microsoft')
    out.push({
      code: 'provider_requires_oauth',
      message:
        'a Microsoft mailbox (Microsoft 365, Outlook.com) connected with a password: Microsoft 365 ended password (Basic) sign-in for IMAP in 2022 and turns it off for SMTP AUTH by default at the end of 2026 (new tenants: OAuth only), and Outlook.com requires OAuth since September 2024 — replies may never be read and sends will stop; reconnect it with Sign in with Microsoft (OAuth, docs/email.md)',
    });
  if (mailbox?.auth === 'password' && mailbox.provider === 'google')
    out.push({
      code: 'provider_requires_oauth',
      message:
        'a Google mailbox (Gmail, Google Workspace) connected with a password: Google Workspace ended password sign-in for third-party mail apps in 2025 and app passwords work only with 2-step verification and where the Workspace admin allows them; reconnect it with Sign in with Google (OAuth, docs/email.md) so it keeps working',
    });
  return out;
}
