import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';
import { Campaign } from './Campaign.js';

// An example message of a campaign (docs/message-review.md): written or accepted by a person, for one
// step or (step null) the whole campaign. Generation follows the step's examples first.
export const MessageExample = defineEntity({
  name: 'MessageExample',
  tableName: 'message_examples',
  properties: (p) => ({
    id: p
      .uuid()
      .primary()
      .onCreate(() => uuidv7()),
    workspaceId: p.uuid().index(),
    campaign: p.manyToOne(Campaign).ref().deleteRule('cascade').index(),
    /** The step it is for (a campaign_steps id); null: any step of the campaign. */
    stepId: p.uuid().nullable(),
    subject: p.string().length(200).nullable(),
    body: p.text(),
    /** `user` (written) or `generated` (proposed by examples/generate and accepted). */
    source: p.string().length(20).default('user'),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  }),
});
export type IMessageExample = InferEntity<typeof MessageExample>;
