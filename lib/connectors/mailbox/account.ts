// A mail-connector account as stored: its connector id is `mail:<our account id>`, its credentials
// the sealed JSON connect stored on the account row (lib/crypto.ts). The row is the domain's: it is
// read through the lookup the process passes in (domain/mailbox/accounts.ts), and unsealed here.
import { decrypt } from '../../crypto.js';
import { ConnectorError } from '../types.js';
import type { MailTokenSource } from './oauth.js';
import { MailConnectError, parseMailCredentials, parseOAuthMailSettings, type MailSettings } from './settings.js';

export const MAIL_CONNECTOR = 'mail';
const PREFIX = 'mail:';

export const mailConnectorAccountId = (accountId: string) => `${PREFIX}${accountId}`;
export const isMailConnectorAccountId = (id: string | null | undefined): id is string => !!id && id.startsWith(PREFIX);
/** Our account id inside a `mail:` connector id. */
export const accountIdOf = (connectorAccountId: string) => connectorAccountId.slice(PREFIX.length);

export interface MailAccount {
  accountId: string;
  workspaceId: string;
  status: string;
  displayName: string;
  settings: MailSettings;
}

/** A mail account's row, its credentials still sealed. */
export interface StoredMailAccount {
  workspaceId: string;
  status: string;
  displayName: string;
  credentialsSealed: string | null;
}

/** Reads our account `accountId` when it is a mail account (null otherwise): the domain's query, handed to the mail connector. */
export type MailAccountLookup = (accountId: string) => Promise<StoredMailAccount | null>;

/**
 * The account's mail settings, unsealed; ConnectorError `auth` when it has none (never connected, or
 * deleted). An OAuth mailbox's endpoints carry a current access token from `tokens` (refreshed there
 * when it is about to expire; MailConnectError `oauth_revoked` when the grant is gone).
 */
export async function loadMailAccount(
  lookup: MailAccountLookup,
  encryptionKey: Buffer,
  connectorAccountId: string,
  tokens?: MailTokenSource,
): Promise<MailAccount> {
  const accountId = accountIdOf(connectorAccountId);
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(accountId))
    throw new ConnectorError('mail', 'invalid_request', `not a mail account id: ${connectorAccountId}`);
  const row = await lookup(accountId);
  if (!row?.credentialsSealed)
    throw new ConnectorError('mail', 'auth', `mail account ${accountId} has no stored credentials`);
  let stored: Record<string, string>;
  try {
    stored = JSON.parse(decrypt(row.credentialsSealed, encryptionKey)) as Record<string, string>;
  } catch {
    // Sealed under another key (ENCRYPTION_KEY changed) or damaged: the account needs new credentials.
    throw new MailConnectError(
      'invalid_credentials',
      null,
      `the stored credentials of mail account ${accountId} cannot be unsealed`,
    );
  }
  if (stored.auth === 'oauth') {
    const settings = parseOAuthMailSettings(stored);
    if (!tokens) throw new ConnectorError('mail', 'unavailable', 'OAuth mailboxes need the token store');
    const t = await tokens(accountId);
    const renew = (rejected?: string) => tokens(accountId, { rejected });
    const withToken = (e: MailSettings['smtp']) => ({
      ...e,
      accessToken: t.accessToken,
      accessTokenExpiresAt: t.expiresAt,
      renew,
    });
    return {
      accountId,
      workspaceId: row.workspaceId,
      status: row.status,
      displayName: row.displayName,
      settings: { ...settings, smtp: withToken(settings.smtp), imap: withToken(settings.imap) },
    };
  }
  const settings = parseMailCredentials(stored);
  return { accountId, workspaceId: row.workspaceId, status: row.status, displayName: row.displayName, settings };
}
