// The Unipile connector (issue 44): what the rest of the code imports from it.
export { UnipileConnector, type UnipileConnectorOptions } from './connector.js';
export {
  ACCOUNT_LOST_REASONS,
  LIMIT_EXCEEDED_WAIT_SECONDS,
  UNIPILE,
  accountLostReason,
  unipileClient,
  unipileErrorOf,
} from './client.js';
export {
  hostedNotifyToken,
  isProvisional,
  parseHostedNotify,
  provisionalAccountId,
  UNIPILE_NOTIFY_PATH,
  type HostedNotify,
  type UnipileConnectInput,
} from './accounts.js';
export { checkWebhookSecret, parseUnipileWebhook, UNIPILE_SECRET_HEADER } from './events.js';
export { INVITATION_NOTE_MAX } from './invitations.js';
export { UNIPILE_WEBHOOK_PATH, WEBHOOK_SOURCES, webhookName, type EnsuredWebhooks } from './webhooks.js';
