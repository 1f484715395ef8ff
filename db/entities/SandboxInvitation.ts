import { defineEntity, type InferEntity } from '@mikro-orm/core';

// An invitation sent through the sandbox network; unique per account and idempotency key, so a
// repeated send returns the first one.
export const SandboxInvitation = defineEntity({
  name: 'SandboxInvitation',
  tableName: 'sandbox_invitations',
  indexes: [{ properties: ['connectorAccountId', 'state', 'id'] }],
  uniques: [{ properties: ['connectorAccountId', 'idempotencyKey'] }],
  properties: (p) => ({
    id: p.string().length(200).primary(),
    connectorAccountId: p.string().length(200),
    recipient: p.string().length(2048),
    idempotencyKey: p.string().length(200),
    body: p.text(),
    /** pending | accepted | withdrawn */
    state: p.string().length(20),
    sentAt: p.datetime(),
    acceptedAt: p.datetime().nullable(),
  }),
});
export type ISandboxInvitation = InferEntity<typeof SandboxInvitation>;
