import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';
import { Campaign } from './Campaign.js';
import { Enrollment } from './Enrollment.js';
import { Workspace } from './Workspace.js';

export const ACTION_STATES = [
  'planned',
  'awaiting_approval',
  'approved',
  'executing',
  'executed',
  'skipped',
  'failed',
  'canceled',
] as const;
export type ActionState = (typeof ACTION_STATES)[number];
/** The send step types an action carries out. */
export const SCHEDULED_ACTION_TYPES = ['email', 'invitation', 'message'] as const;
export type ScheduledActionType = (typeof SCHEDULED_ACTION_TYPES)[number];

// One planned step of one enrollment. The send activity is idempotent by this id: it moves the row
// to `executing` with the connector's idempotency key = the action id, and records the connector's
// message id when done, so a retried activity never sends twice.
export const ScheduledAction = defineEntity({
  name: 'ScheduledAction',
  tableName: 'scheduled_actions',
  indexes: [
    { properties: ['campaign', 'state', 'dueAt'] },
    { properties: ['enrollment', 'createdAt'] },
    { properties: ['workspace', 'leadId'] },
    // Inbound connector events find their action by the connector's ids (partial: only sent actions have them).
    {
      name: 'scheduled_actions_connector_thread_id_index',
      expression:
        'create index "scheduled_actions_connector_thread_id_index" on "scheduled_actions" ("connector_thread_id") where connector_thread_id is not null',
    },
    {
      name: 'scheduled_actions_connector_message_id_index',
      expression:
        'create index "scheduled_actions_connector_message_id_index" on "scheduled_actions" ("connector_message_id") where connector_message_id is not null',
    },
  ],
  properties: (p) => ({
    id: p
      .uuid()
      .primary()
      .onCreate(() => uuidv7()),
    workspace: p.manyToOne(Workspace).ref().deleteRule('cascade'),
    campaign: p.manyToOne(Campaign).ref().deleteRule('cascade'),
    enrollment: p.manyToOne(Enrollment).ref().deleteRule('cascade'),
    leadId: p.uuid(),
    stepId: p.uuid(),
    stepPosition: p.integer(),
    stepVersion: p.integer(),
    type: p.string().length(20),
    state: p.string().length(20).default('planned'),
    /** When it is planned to go out (inside the campaign's sending window). */
    dueAt: p.datetime(),
    /** The earliest time the step allows (its delay after the previous step), before windows and caps: a re-plan may move the action back to it. Null on rows planned before it was kept. */
    notBefore: p.datetime().nullable(),
    accountId: p.uuid().nullable(),
    /** The rendered message: subject/body/note. */
    content: p.json<Record<string, unknown>>().nullable(),
    /** Why it is not done yet, as the executor last saw it (window, governor reason, review…). */
    waitingReason: p.string().length(60).nullable(),
    /** Until when it waits, when the executor knows (the governor's retry time, a window's opening); null: see due_at or no known end. */
    waitingUntil: p.datetime().nullable(),
    approvedAt: p.datetime().nullable(),
    approvedBy: p.uuid().nullable(),
    executedAt: p.datetime().nullable(),
    /** When the send-time rule let this send through (the claim, clock time inside its transaction): a stop committed before it would have held it. */
    claimedAt: p.datetime().nullable(),
    connectorMessageId: p.string().length(200).nullable(),
    connectorThreadId: p.string().length(200).nullable(),
    /** The recipient's own id at the connector (a LinkedIn member id), when it named it: acceptances are matched on it. */
    connectorRecipientId: p.string().length(200).nullable(),
    errorCode: p.string().length(60).nullable(),
    errorMessage: p.string().length(500).nullable(),
    attempts: p.integer().default(0),
    /** An invitation's acceptance (inbound `invitation.accepted`), read by `accepted` condition steps. */
    acceptedAt: p.datetime().nullable(),
    /** The email was first opened by a person (the connector's `message.opened`, or a tracking pixel load classified human). */
    openedAt: p.datetime().nullable(),
    /** The first click a person made (machine clicks are not counted: domain/tracking/classify.ts). */
    clickedAt: p.datetime().nullable(),
    /** The A/B variant this send uses (null: the step has none). */
    variantId: p.uuid().nullable(),
    /** When the governor granted this action's slot (cleared when it is given back): a re-run of the slot request reuses it. */
    slotGrantedAt: p.datetime().nullable(),
    /** A reply received in this action's conversation (reply routing), read by `replied` condition steps. */
    repliedAt: p.datetime().nullable(),
    /** A bounce (a non-delivery report) received in this send's conversation: counted once as `bounced`. */
    bouncedAt: p.datetime().nullable(),
    /** `hard` (5.x.x: stopped, suppressed) or `soft` (4.x.x) from the delivery status notification; null before a bounce. */
    bounceClass: p.string().length(10).nullable(),
    /** A delivery-delay warning (a DSN's `Action: delayed`) came back for this send: the first one's time. Not a bounce. */
    delayedAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  }),
});
export type IScheduledAction = InferEntity<typeof ScheduledAction>;
