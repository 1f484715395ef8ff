import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';
import { Workspace } from './Workspace.js';

export const SUPPRESSION_KINDS = ['address', 'domain'] as const;
export const SUPPRESSION_REASONS = ['unsubscribe', 'hard_bounce', 'complaint', 'manual', 'import'] as const;
export type SuppressionReason = (typeof SUPPRESSION_REASONS)[number];

// An address or a whole domain of the workspace that no email is sent to (docs/email.md
// "Suppression"): the send-time rule and the enrollment checks read it. `value` is normalised
// (lower-case address, or a domain without a leading @).
export const Suppression = defineEntity({
  name: 'Suppression',
  tableName: 'suppressions',
  indexes: [{ properties: ['workspace', 'createdAt', 'id'] }],
  uniques: [{ properties: ['workspace', 'kind', 'value'] }],
  properties: (p) => ({
    id: p
      .uuid()
      .primary()
      .onCreate(() => uuidv7()),
    workspace: p.manyToOne(Workspace).ref().deleteRule('cascade'),
    kind: p.enum([...SUPPRESSION_KINDS]).columnType('varchar(10)'),
    value: p.string().length(320),
    reason: p.enum([...SUPPRESSION_REASONS]).columnType('varchar(20)'),
    /** Where it came from: `api`, `csv`, `one_click`, `link`, `mailto`, `dsn:<action id>`… */
    source: p.string().length(200).nullable(),
    /** The user who added it by hand or by import; null for the system. */
    createdBy: p.uuid().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
  }),
});
export type ISuppression = InferEntity<typeof Suppression>;
