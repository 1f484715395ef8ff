// Response views of specialist runs and activity (domain/ai/specialist-runs.ts), for the product
// routes GET /api/apps/{appId}/specialist-runs[/{runId}] and /specialist-activity.
import { z } from 'zod';
import { SPECIALIST_RUN_STATUSES, type ISpecialistRun } from '../../db/entities/SpecialistRun.js';
import { ACTIVITY_MAX_DAYS } from '../../domain/ai/specialist-runs.js';
import { pageQuery, pageSchema } from '../../lib/pagination.js';
import { Timestamp, text } from '../schemas.js';

export const SpecialistRunView = z.object({
  id: z.uuid(),
  workspace_id: z.uuid(),
  app_id: z.uuid().nullable(),
  agent_id: z.uuid().nullable(),
  kind: z.string(),
  model: z.string(),
  input_summary: z.string(),
  status: z.enum(SPECIALIST_RUN_STATUSES),
  error_code: z.string().nullable(),
  error_message: z.string().nullable(),
  started_at: Timestamp,
  finished_at: Timestamp.nullable(),
  duration_ms: z.int().nullable(),
  input_tokens: z.int(),
  output_tokens: z.int(),
  cost_micros: z.int(),
  /** The answer, or `{truncated, chars, preview}` when it was large; null while running or after a failure. */
  result: z.unknown(),
  created_at: Timestamp,
});

export const toSpecialistRunView = (r: ISpecialistRun): z.infer<typeof SpecialistRunView> => ({
  id: r.id,
  workspace_id: r.workspace.id,
  app_id: r.app?.id ?? null,
  agent_id: r.agentId ?? null,
  kind: r.kind,
  model: r.model,
  input_summary: r.inputSummary,
  status: r.status,
  error_code: r.errorCode ?? null,
  error_message: r.errorMessage ?? null,
  started_at: r.startedAt.toISOString(),
  finished_at: r.finishedAt?.toISOString() ?? null,
  duration_ms: r.durationMs ?? null,
  input_tokens: r.inputTokens,
  output_tokens: r.outputTokens,
  cost_micros: r.costMicros,
  result: r.result ?? null,
  created_at: r.createdAt.toISOString(),
});

export const ListSpecialistRunsQuery = z.object({
  ...pageQuery,
  kind: text({ min: 1, max: 100 }).optional(),
  status: z.enum(SPECIALIST_RUN_STATUSES).optional(),
  agent_id: z.uuid().optional(),
});
export const SpecialistRunPage = pageSchema(SpecialistRunView);

const Counts = {
  runs: z.int(),
  succeeded: z.int(),
  failed: z.int(),
  running: z.int(),
  input_tokens: z.int(),
  output_tokens: z.int(),
  cost_micros: z.int(),
};
export const SpecialistActivityQuery = z.object({
  days: z
    .string()
    .regex(/^[0-9]{1,2}$/, 'must be an integer')
    .transform(Number)
    .pipe(z.number().int().min(1).max(ACTIVITY_MAX_DAYS))
    .optional()
    .meta({ jsonSchema: { type: 'integer', minimum: 1, maximum: ACTIVITY_MAX_DAYS, default: 30 } }),
});
export const SpecialistActivityView = z.object({
  app_id: z.uuid(),
  days: z.int(),
  from: Timestamp,
  to: Timestamp,
  totals: z.object(Counts),
  by_kind: z.array(z.object({ kind: z.string(), ...Counts })),
  by_day: z.array(z.object({ day: z.string().regex(/^\d{4}-\d{2}-\d{2}$/), ...Counts })),
});
