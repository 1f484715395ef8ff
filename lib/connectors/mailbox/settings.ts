// An SMTP + IMAP mailbox as the user gives it at connect time (POST /api/platform-accounts/{id}/connect
// `credentials`, all strings; docs/email.md "Connecting a mailbox"), checked and completed with
// defaults. Sealed at rest with the account (lib/crypto.ts); read back by the mail connector per use.
import { createHash } from 'node:crypto';
import { isIPv4, isIPv6 } from 'node:net';
import { ConnectorError } from '../types.js';

export type MailSecurity = 'tls' | 'starttls' | 'none';

export interface MailEndpoint {
  host: string;
  port: number;
  /** `tls`: implicit TLS (465, 993); `starttls`: upgrade required (587, 143); `none`: only for allow-listed local servers. */
  security: MailSecurity;
  user: string;
  pass: string;
  /**
   * An OAuth mailbox (docs/email.md "Connecting with Google or Microsoft"): SASL XOAUTH2 with this
   * access token instead of the password (`pass` is empty). Never part of a pool's or session's key.
   */
  accessToken?: string;
  /** When it expires (nodemailer asks `renew` for a new one before). */
  accessTokenExpiresAt?: Date;
  /** A new access token for a connection made later (an SMTP pool's next login); `rejected`: the one a server just refused. */
  renew?: (rejected?: string) => Promise<{ accessToken: string; expiresAt: Date }>;
}

export interface MailSettings {
  /** The mailbox address messages are sent from (and replies come to). */
  address: string;
  /** The display name of the From header (the account's display name when not given). */
  fromName: string | null;
  smtp: MailEndpoint;
  imap: MailEndpoint;
  /** Connected with Google or Microsoft OAuth: the endpoints authenticate with XOAUTH2 (lib/connectors/mailbox/oauth.ts). */
  oauth?: { provider: string };
}

/**
 * Why a mailbox cannot be connected: the API answers 400 with `reason` as its code. `oauth_revoked`:
 * the OAuth grant was revoked or has expired for good (`invalid_grant`).
 */
export type MailConnectReason =
  'invalid_credentials' | 'auth_failed' | 'host_unreachable' | 'tls_failed' | 'blocked_destination' | 'oauth_revoked';

export class MailConnectError extends ConnectorError {
  constructor(
    readonly reason: MailConnectReason,
    readonly side: 'smtp' | 'imap' | null,
    message: string,
  ) {
    super('mail', reason === 'host_unreachable' ? 'unavailable' : 'invalid_request', message);
    this.name = 'MailConnectError';
  }
}

/**
 * The status reason a failed check of a connected mailbox disconnects it with, or null when the
 * failure is retried (docs/email.md "What each failure means"). Final: the server refused the
 * credentials (`auth_failed` → `credentials_invalid`), the stored credentials no longer read (a field
 * error, `side` null), the OAuth grant was revoked. Everything else is retried: an unreachable host, a
 * TLS failure, a host the outbound policy now refuses (`blocked_destination`, or `none` security on a
 * host no longer allow-listed: an `invalid_credentials` naming its side), which an operator may undo.
 */
export function finalReason(err: MailConnectError): 'credentials_invalid' | 'oauth_revoked' | null {
  if (err.reason === 'auth_failed') return 'credentials_invalid';
  if (err.reason === 'oauth_revoked') return 'oauth_revoked';
  if (err.reason === 'invalid_credentials' && err.side === null) return 'credentials_invalid';
  return null;
}

/**
 * What identifies an endpoint's connections (an SMTP pool, a kept IMAP session): its settings, without
 * the OAuth access token of the moment — a refreshed token is not a new mailbox, and a pool logged in
 * with the old one goes on sending.
 */
export function endpointKey(e: MailEndpoint): string {
  const { accessToken: _token, accessTokenExpiresAt: _expires, renew: _renew, ...stable } = e;
  return createHash('sha256')
    .update(JSON.stringify({ ...stable, oauth: e.accessToken !== undefined }))
    .digest('hex');
}

/** Credentials meant for the mail connector: they name an SMTP or an IMAP host. */
export const isMailCredentials = (c: Record<string, string> | undefined | null): c is Record<string, string> =>
  !!c && ('smtp_host' in c || 'imap_host' in c);

const KNOWN = new Set([
  'email',
  'from_name',
  'username',
  'password',
  ...['smtp', 'imap'].flatMap((s) => [`${s}_host`, `${s}_port`, `${s}_security`, `${s}_username`, `${s}_password`]),
]);
const LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/i;

/**
 * A host a mail client can be pointed at: an IP literal — IPv4 as four decimal parts 0–255 without
 * leading zeros, or IPv6 (bracketed or not, no zone) — or a DNS name of letter-digit-hyphen labels.
 * A name whose last label is a number (`08.0.0.1`, `1.2.3.999`, `1.2.3`, `a.0x10`) is an IPv4 form
 * to URL parsers and resolvers, so it is accepted only as a valid IPv4 literal.
 */
export function isMailHost(host: string): boolean {
  if (isIPv4(host)) return true;
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  if (bare.includes(':')) return !bare.includes('%') && isIPv6(bare);
  if (bare !== host) return false;
  const name = host.endsWith('.') ? host.slice(0, -1) : host;
  if (!name || name.length > 253) return false;
  const labels = name.split('.');
  return labels.every((l) => LABEL.test(l)) && !/^(\d+|0x[0-9a-f]*)$/i.test(labels[labels.length - 1]);
}
const ADDRESS = /^[^\s@<>()",;:]+@[^\s@<>()",;:]+\.[^\s@<>()",;:]+$|^[^\s@<>()",;:]+@[a-z0-9-]+$/i;

function invalid(message: string): never {
  throw new MailConnectError('invalid_credentials', null, message);
}

function endpoint(c: Record<string, string>, side: 'smtp' | 'imap'): MailEndpoint {
  const host = (c[`${side}_host`] ?? '').trim().toLowerCase();
  // Before any connection: a malformed host is the caller's field error, never an unreachable server.
  if (!isMailHost(host))
    invalid(`${side}_host must be a host name or an IP address (${JSON.stringify(host.slice(0, 100))} is neither)`);
  const implicit = side === 'smtp' ? 465 : 993;
  const upgrade = side === 'smtp' ? 587 : 143;
  const rawSecurity = c[`${side}_security`]?.trim().toLowerCase();
  if (rawSecurity !== undefined && !['tls', 'starttls', 'none'].includes(rawSecurity))
    invalid(`${side}_security must be tls, starttls or none`);
  const rawPort = c[`${side}_port`]?.trim();
  const port = rawPort === undefined ? (rawSecurity === 'tls' ? implicit : upgrade) : Number(rawPort);
  if (!Number.isInteger(port) || port < 1 || port > 65535) invalid(`${side}_port must be a port number`);
  const security = (rawSecurity ??
    (port === implicit || port === 465 || port === 993 ? 'tls' : 'starttls')) as MailSecurity;
  const user = c[`${side}_username`] ?? c.username ?? c.email;
  const pass = c[`${side}_password`] ?? c.password;
  if (!user) invalid(`username (or ${side}_username) is required`);
  if (!pass) invalid(`password (or ${side}_password) is required`);
  return { host: host.replace(/^\[|\]$/g, ''), port, security, user, pass };
}

/**
 * The stored settings of an OAuth mailbox (`auth: "oauth"`, written by the OAuth callback, never given
 * by a user): the address and the provider's hosts; the endpoints get their access token per use.
 */
export function parseOAuthMailSettings(c: Record<string, string>): MailSettings {
  const { auth, oauth_provider: provider, ...rest } = c;
  if (auth !== 'oauth' || !provider) invalid('not the settings of an OAuth mailbox');
  const s = parseMailCredentials({ ...rest, username: rest.email ?? '', password: '-' });
  return { ...s, oauth: { provider }, smtp: { ...s.smtp, pass: '' }, imap: { ...s.imap, pass: '' } };
}

/** Reads and checks mail credentials; throws MailConnectError `invalid_credentials` naming the field. */
export function parseMailCredentials(c: Record<string, string>): MailSettings {
  const unknown = Object.keys(c).filter((k) => !KNOWN.has(k));
  if (unknown.length) invalid(`unknown credential field(s): ${unknown.join(', ')}`);
  const address = (c.email ?? '').trim().toLowerCase();
  if (!ADDRESS.test(address)) invalid('email must be the mailbox address (name@example.com)');
  if (!c.smtp_host || !c.imap_host) invalid('both smtp_host and imap_host are required');
  return { address, fromName: c.from_name?.trim() || null, smtp: endpoint(c, 'smtp'), imap: endpoint(c, 'imap') };
}
