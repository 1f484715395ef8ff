import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';
import { App } from './App.js';
import { Workspace } from './Workspace.js';

export const SPECIALIST_RUN_STATUSES = ['running', 'succeeded', 'failed'] as const;
export type SpecialistRunStatus = (typeof SPECIALIST_RUN_STATUSES)[number];

// One row per AI call (domain/ai/specialist-runs.ts): inserted as `running` before the call, completed
// after it. `agentId` has no foreign key yet (discovery agents come later). `inputSummary` and
// `result` are bounded summaries, not the full prompt or answer.
export const SpecialistRun = defineEntity({
  name: 'SpecialistRun',
  tableName: 'specialist_runs',
  indexes: [{ properties: ['app', 'id'] }, { properties: ['workspace', 'id'] }],
  properties: (p) => ({
    id: p
      .uuid()
      .primary()
      .onCreate(() => uuidv7()),
    workspace: p.manyToOne(Workspace).ref().deleteRule('cascade'),
    app: p.manyToOne(App).ref().nullable().deleteRule('cascade'),
    agentId: p.uuid().nullable(),
    kind: p.string().length(100),
    model: p.string().length(200),
    inputSummary: p.string().length(500),
    status: p.enum([...SPECIALIST_RUN_STATUSES]),
    errorCode: p.string().length(40).nullable(),
    errorMessage: p.text().nullable(),
    startedAt: p.datetime(),
    finishedAt: p.datetime().nullable(),
    durationMs: p.integer().nullable(),
    inputTokens: p.integer().default(0),
    outputTokens: p.integer().default(0),
    costMicros: p.integer().default(0),
    result: p.json<unknown>().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
  }),
});
export type ISpecialistRun = InferEntity<typeof SpecialistRun>;
