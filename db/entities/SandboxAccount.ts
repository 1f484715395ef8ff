import { defineEntity, type InferEntity } from '@mikro-orm/core';

// The sandbox network's own record of an account (lib/connectors/sandbox-network.ts): what a real
// connector would hold on its side. Kept in PostgreSQL so the API and worker processes see one network.
export const SandboxAccount = defineEntity({
  name: 'SandboxAccount',
  tableName: 'sandbox_accounts',
  properties: (p) => ({
    /** The connector account id handed out by `connect` (`sbx_acc_…`). */
    id: p.string().length(200).primary(),
    channel: p.string().length(20),
    /** Our platform account id, as given at connect time (echoed like a real connector would). */
    accountId: p.string().length(200),
    displayName: p.string().length(200),
    /** pending | connected | disconnected */
    state: p.string().length(20),
    reason: p.string().length(100).nullable(),
    address: p.string().length(2048).nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  }),
});
export type ISandboxAccount = InferEntity<typeof SandboxAccount>;
