import { defineEntity, type InferEntity } from '@mikro-orm/core';

// An inbound event the sandbox network will push once `dueAt` has passed (a simulated acceptance or
// reply, an injected message, a status change). `deliverDue` claims due rows, applies them and
// hands them to the inbound pipeline, then sets `deliveredAt`; a row is handed over once.
export const SandboxEvent = defineEntity({
  name: 'SandboxEvent',
  tableName: 'sandbox_events',
  indexes: [
    {
      name: 'sandbox_events_due_idx',
      expression: 'create index "sandbox_events_due_idx" on "sandbox_events" ("due_at") where "delivered_at" is null',
    },
  ],
  properties: (p) => ({
    /** The event id the pipeline sees (`sbx_evt_…`). */
    id: p.string().length(200).primary(),
    connectorAccountId: p.string().length(200),
    type: p.string().length(40),
    /** What to apply at delivery (e.g. the reply to insert, the invitation to accept). */
    payload: p.json<Record<string, unknown>>(),
    dueAt: p.datetime(),
    deliveredAt: p.datetime().nullable(),
    /** Null when handed over; else why it was dropped (e.g. the invitation was withdrawn). */
    dropped: p.string().length(100).nullable(),
  }),
});
export type ISandboxEvent = InferEntity<typeof SandboxEvent>;
