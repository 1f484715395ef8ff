import { z } from 'zod';
import type { IDiscoveryAgent } from '../../db/entities/DiscoveryAgent.js';
import { AGENT_STATUSES } from '../../db/entities/DiscoveryAgent.js';
import type { IAgentSignal } from '../../db/entities/AgentSignal.js';
import type { IAgentSource } from '../../db/entities/AgentSource.js';
import { MAX_SIGNALS_PER_AGENT, SIGNAL_KINDS, SOURCES, type AgentChange } from '../../domain/agents/agents.js';
import { pageQuery, pageSchema } from '../../lib/pagination.js';
import { JsonValue, Timestamp, text } from '../schemas.js';

// `icp_filters` and `config` are stored as sent (the spec: their shape depends on the agent).

export const AgentView = z.object({
  id: z.uuid(),
  app_id: z.uuid(),
  name: z.string(),
  status: z.enum(AGENT_STATUSES),
  b2b: z.boolean(),
  icp_description: z.string().nullable(),
  icp_filters: JsonValue.nullable(),
  config: JsonValue.nullable(),
  list_id: z.uuid().nullable(),
  max_signals: z.number().int().nullable(),
  require_current_employer: z.boolean(),
  keywords: z.string().nullable(),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const toAgentView = (a: IDiscoveryAgent): z.infer<typeof AgentView> => ({
  id: a.id,
  app_id: a.app.id,
  name: a.name,
  status: a.status as z.infer<typeof AgentView>['status'],
  b2b: a.b2b,
  icp_description: a.icpDescription ?? null,
  icp_filters: (a.icpFilters ?? null) as z.infer<typeof JsonValue> | null,
  config: (a.config ?? null) as z.infer<typeof JsonValue> | null,
  list_id: a.list?.id ?? null,
  max_signals: a.maxSignals ?? null,
  require_current_employer: a.requireCurrentEmployer,
  keywords: a.keywords ?? null,
  created_at: a.createdAt.toISOString(),
  updated_at: a.updatedAt.toISOString(),
});

const fields = {
  b2b: z.boolean().nullable().optional(),
  icp_description: text({ max: 10_000 }).nullable().optional(),
  icp_filters: JsonValue.optional(),
  config: JsonValue.optional(),
  // Any string: a value that is not a list of the agent's product is 400 invalid_list_id (the spec's code).
  list_id: text({ max: 100 }).nullable().optional(),
  max_signals: z.number().int().min(1).max(100_000).nullable().optional(),
  require_current_employer: z.boolean().nullable().optional(),
};

/** The spec's PUT body: every field optional and nullable (null clears what can be cleared). */
export const UpdateAgentBody = z
  .object({
    name: text({ min: 1, max: 200, trim: true }).nullable().optional(),
    status: z.enum(AGENT_STATUSES).nullable().optional(),
    ...fields,
  })
  .strict();

export const CreateAgentBody = z.object({ name: text({ min: 1, max: 200, trim: true }), ...fields }).strict();

export const ListAgentsQuery = z.object({ ...pageQuery, status: z.enum(AGENT_STATUSES).optional() });
export const AgentPage = pageSchema(AgentView);

/** What a Demo workspace gets instead of a change: what would have happened; nothing is written. */
export const DemoSimulation = z.object({
  simulated: z.literal(true),
  action: z.enum(['update', 'delete']),
  message: z.string(),
  agent: AgentView,
  changes: z.array(z.object({ field: z.string(), from: z.unknown(), to: z.unknown() })),
});

export const toDemoSimulation = (
  action: 'update' | 'delete',
  agent: IDiscoveryAgent,
  changes: AgentChange[],
): z.infer<typeof DemoSimulation> => ({
  simulated: true,
  action,
  message: `Demo workspace: nothing was ${action === 'update' ? 'changed' : 'deleted'}; this is what would have happened`,
  agent: toAgentView(agent),
  changes,
});

export const AgentParams = z.object({ agentId: z.uuid() });
export const AppParams = z.object({ appId: z.uuid() });

export const SignalView = z.object({
  id: z.uuid(),
  key: z.string(),
  kind: z.enum(SIGNAL_KINDS),
  name: z.string(),
  keywords: z.array(z.string()),
  filters: z.record(z.string(), z.unknown()).nullable(),
  enabled: z.boolean(),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const toSignalView = (s: IAgentSignal): z.infer<typeof SignalView> => ({
  id: s.id,
  key: s.key,
  kind: s.kind as z.infer<typeof SignalView>['kind'],
  name: s.name,
  keywords: [...s.keywords],
  filters: (s.filters ?? null) as Record<string, unknown> | null,
  enabled: s.enabled,
  created_at: s.createdAt.toISOString(),
  updated_at: s.updatedAt.toISOString(),
});

const SignalInput = z
  .object({
    key: z
      .string()
      .regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/, 'key: lower-case letters, digits and single hyphens')
      .max(100)
      .optional(),
    kind: z.enum(SIGNAL_KINDS),
    name: text({ min: 1, max: 200, trim: true }),
    keywords: z
      .array(text({ min: 1, max: 100, trim: true }))
      .max(50)
      .optional(),
    filters: z
      .record(text({ max: 100 }), JsonValue)
      .nullable()
      .optional(),
    enabled: z.boolean().optional(),
  })
  .strict();

export const PutSignalsBody = z.object({ signals: z.array(SignalInput).max(MAX_SIGNALS_PER_AGENT) }).strict();

export const SourceParams = z.object({ agentId: z.uuid(), source: z.enum(SOURCES) });
export const SourceView = z.object({
  source: z.enum(SOURCES),
  enabled: z.boolean(),
  config: z.record(z.string(), z.unknown()),
  updated_at: Timestamp.nullable(),
});
export const toSourceView = (r: IAgentSource): z.infer<typeof SourceView> => ({
  source: r.source as z.infer<typeof SourceView>['source'],
  enabled: r.enabled,
  config: r.config as Record<string, unknown>,
  updated_at: r.updatedAt.toISOString(),
});
export const PutSourceBody = z
  .object({ enabled: z.boolean().optional(), config: z.record(text({ max: 100 }), JsonValue).optional() })
  .strict();

export const ActiveAgentView = z.object({
  id: z.uuid(),
  name: z.string(),
  app_id: z.uuid(),
  app_name: z.string(),
  status: z.enum(AGENT_STATUSES),
  updated_at: Timestamp,
});
