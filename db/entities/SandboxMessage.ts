import { defineEntity, type InferEntity } from '@mikro-orm/core';
import type { SandboxAttachment } from '../../lib/connectors/sandbox-network.js';

// One message of a sandbox conversation, sent (`out`, idempotent by key) or received (`in`: a
// simulated reply or an injected message).
export const SandboxMessage = defineEntity({
  name: 'SandboxMessage',
  tableName: 'sandbox_messages',
  indexes: [{ properties: ['connectorAccountId', 'threadId', 'sentAt'] }],
  uniques: [{ properties: ['connectorAccountId', 'idempotencyKey'] }],
  properties: (p) => ({
    id: p.string().length(200).primary(),
    connectorAccountId: p.string().length(200),
    threadId: p.string().length(200),
    /** in | out */
    direction: p.string().length(3),
    /** email | message */
    kind: p.string().length(10),
    /** The other party: an email address or a profile URL / provider id. */
    counterpart: p.string().length(2048),
    fromAddress: p.string().length(2048),
    subject: p.text().nullable(),
    body: p.text(),
    /** Null for received messages. */
    idempotencyKey: p.string().length(200).nullable(),
    sentAt: p.datetime(),
    attachments: p.json<SandboxAttachment[]>().default('[]'),
  }),
});
export type ISandboxMessage = InferEntity<typeof SandboxMessage>;
