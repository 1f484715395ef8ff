import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { Campaign } from './Campaign.js';

// The chosen A/B variant of a step (docs/campaigns.md "A/B variants"), kept apart from the step so a
// choice makes no new step version: a step keeps its id across versions, and new sends of any version
// use the winner from the moment it is recorded.
export const StepWinner = defineEntity({
  name: 'StepWinner',
  tableName: 'step_winners',
  properties: (p) => ({
    stepId: p.uuid().primary(),
    campaign: p.manyToOne(Campaign).ref().deleteRule('cascade').index(),
    workspaceId: p.uuid(),
    variantId: p.uuid(),
    /** `manual` (a person, or the Operator with confirmation) or `auto` (the step's winner rule). */
    chosenBy: p.string().length(10),
    userId: p.uuid().nullable(),
    /** The figures the choice rested on (the rule's test, or the stats at a manual choice). */
    evidence: p.json<Record<string, unknown>>().nullable(),
    chosenAt: p.datetime(),
  }),
});
export type IStepWinner = InferEntity<typeof StepWinner>;
