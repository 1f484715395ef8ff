import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';
import { Workspace } from './Workspace.js';

// A connected third-party integration of a workspace (docs/integrations.md): the partner CRM
// (installed through OAuth, synced by `partner-sync:<id>`) or a generic destination (a Slack-style
// incoming webhook, a JSON webhook). Credentials (tokens, destination URL and secret) are sealed with
// lib/crypto.ts and only shown masked (`credentialHint`). Webhook subscriptions may reference one by
// `integration_id`; deleting it detaches them (the foreign key sets null), they keep delivering.
export const Integration = defineEntity({
  name: 'Integration',
  tableName: 'integrations',
  properties: (p) => ({
    id: p
      .uuid()
      .primary()
      .onCreate(() => uuidv7()),
    workspace: p.manyToOne(Workspace).ref().deleteRule('cascade').index(),
    /** The kind: `partner`, `slack_webhook`, `json_webhook` (older rows may carry another provider name). */
    provider: p.string().length(100),
    name: p.string().length(200),
    /** active | disabled (by a person) | invalid_credentials (refused by the provider). */
    status: p.string().length(30).default('active'),
    statusReason: p.string().length(300).nullable(),
    /** JSON of the kind's credentials, sealed (AES-256-GCM). */
    credentialsSealed: p.text().nullable(),
    /** What the API shows of the credentials (e.g. `https://hooks.example.com/…/ab12`, `pat_…wxyz`). */
    credentialHint: p.string().length(300).nullable(),
    /** The partner account the tokens belong to. */
    accountId: p.string().length(200).nullable(),
    accountName: p.string().length(300).nullable(),
    createdByUserId: p.uuid().nullable(),
    lastVerifiedAt: p.datetime().nullable(),
    lastTestedAt: p.datetime().nullable(),
    lastTestOk: p.boolean().nullable(),
    lastSyncAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  }),
});
export type IIntegration = InferEntity<typeof Integration>;
