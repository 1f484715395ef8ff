import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';
import { ScheduledAction } from './ScheduledAction.js';

// One load of an email's open pixel or one follow of a tracked link (docs/tracking.md), classified
// `human` or `machine` when it arrives (a burst may reclassify earlier clicks). No IP address or user
// agent is stored: only the class, why, and the proxy or scanner network it came from.
export const TrackingEvent = defineEntity({
  name: 'TrackingEvent',
  tableName: 'tracking_events',
  properties: (p) => ({
    id: p
      .uuid()
      .primary()
      .onCreate(() => uuidv7()),
    workspaceId: p.uuid(),
    campaignId: p.uuid().index('tracking_events_campaign_idx'),
    action: p.manyToOne(ScheduledAction).ref().deleteRule('cascade'),
    /** `open` or `click`. */
    kind: p.string().length(10),
    /** The link's 0-based place in the body (clicks only). */
    linkIndex: p.smallint().nullable(),
    /** `human` or `machine`. */
    class: p.string().length(10),
    reason: p.string().length(40).nullable(),
    source: p.string().length(40).nullable(),
    occurredAt: p.datetime(),
  }),
});
export type ITrackingEvent = InferEntity<typeof TrackingEvent>;
