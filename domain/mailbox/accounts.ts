// The mail accounts as stored, read for the mail connector: the process builds this lookup
// (api/services-factory.ts, workers/worker.ts) and hands it to the providers, and the connector
// unseals the credentials itself (lib/connectors/mailbox/account.ts).
import type { EntityManager } from '@mikro-orm/postgresql';
import { MAIL_CONNECTOR, type MailAccountLookup } from '../../lib/connectors/mailbox/account.js';

/** Each lookup on its own `em()` (a fork): the connector is called from anywhere in the process. */
export function mailAccounts(em: () => EntityManager): MailAccountLookup {
  return async (accountId) => {
    const [row] = await em().execute<
      { workspace_id: string; status: string; display_name: string; credentials_sealed: string | null }[]
    >(
      `select workspace_id, status, display_name, credentials_sealed from platform_accounts where id = ? and connector = ?`,
      [accountId, MAIL_CONNECTOR],
    );
    return row
      ? {
          workspaceId: row.workspace_id,
          status: row.status,
          displayName: row.display_name,
          credentialsSealed: row.credentials_sealed,
        }
      : null;
  };
}
