// Discovery runs on Temporal: launch a signal, the funnel, rejections, recent runs (docs/discovery.md).
import { z } from 'zod';
import { defineOperation, reply } from '../operation.js';
import { page, pageQuery, pageSchema, toPageRequest } from '../../lib/pagination.js';
import { uuidv7 } from '../../lib/ids.js';
import { requireAgent } from '../../domain/agents/agents.js';
import {
  createRun,
  funnel,
  listRejectedProfiles,
  planRun,
  recentRuns,
  rejectionBreakdown,
} from '../../domain/agents/discovery.js';
import type { IDiscoveryRun } from '../../db/entities/DiscoveryRun.js';
import { RUN_STATUSES } from '../../db/entities/DiscoveryRun.js';
import { discoveryWorkflowIds } from '../../lib/workflow-ids.js';
import { Timestamp, text } from '../schemas.js';

const tag = 'discovery';
const common = { 401: ['unauthorized'], 403: ['not_assigned'], 404: ['not_found'] };

export const RunView = z.object({
  id: z.uuid(),
  agent_id: z.uuid(),
  app_id: z.uuid(),
  workflow_id: z.string(),
  signal_keys: z.array(z.string()),
  trigger: z.string(),
  status: z.enum(RUN_STATUSES),
  candidates: z.number().int(),
  qualified: z.number().int(),
  rejected: z.number().int(),
  duplicates: z.number().int(),
  pages: z.number().int(),
  error: z.string().nullable(),
  started_at: Timestamp,
  finished_at: Timestamp.nullable(),
});

export const toRunView = (r: IDiscoveryRun): z.infer<typeof RunView> => ({
  id: r.id,
  agent_id: r.agent.id,
  app_id: r.app.id,
  workflow_id: discoveryWorkflowIds.run(r.agent.id, r.id),
  signal_keys: [...r.signalKeys],
  trigger: r.trigger,
  status: r.status as z.infer<typeof RunView>['status'],
  candidates: r.candidates,
  qualified: r.qualified,
  rejected: r.rejected,
  duplicates: r.duplicates,
  pages: r.pages,
  error: r.error ?? null,
  started_at: r.startedAt.toISOString(),
  finished_at: r.finishedAt ? r.finishedAt.toISOString() : null,
});

export const launchSignalOp = defineOperation({
  method: 'POST',
  path: '/api/agents/{agentId}/signals/{signalId}/launch',
  ids: {
    path: { agentId: 'agent', signalId: { within: 'agentId', child: 'signal' } },
    body: { launch_id: { value: 'an idempotency key chosen by the client' } },
  },
  summary: 'Launch a discovery run for one signal (a workflow); a repeated launch_id returns the same run (200)',
  tag,
  auth: 'user',
  params: z.object({ agentId: z.uuid(), signalId: z.uuid() }),
  body: z.object({ launch_id: z.uuid().optional() }).strict(),
  responses: { 202: RunView, 200: RunView },
  errors: {
    400: ['invalid_body', 'invalid_id', 'invalid_user', 'no_enabled_source'],
    ...common,
    409: ['agent_archived', 'launch_id_in_use'],
  },
  handler: async ({ em, actor, params, body, services }) => {
    const plan = await planRun(em, actor, params.agentId, body.launch_id ?? uuidv7(), params.signalId);
    const { run, created } = await createRun(em, plan, 'manual');
    await services.jobs.start('discovery-run', plan);
    return reply(created ? 202 : 200, toRunView(run));
  },
});

const Funnel = z.object({
  window_days: z.number().int(),
  since: Timestamp,
  cohort: z.object({
    candidates: z.number().int(),
    qualified: z.number().int(),
    rejected: z.number().int(),
    pending: z.number().int(),
    duplicates: z.number().int(),
    runs: z.number().int(),
  }),
  review: z.object({ new: z.number().int(), approved: z.number().int(), rejected: z.number().int() }),
  current: z.object({
    discovered_leads: z.number().int(),
    list_leads: z.number().int(),
    in_campaigns: z.number().int(),
  }),
  by_signal: z.array(z.object({ signal_key: z.string(), qualified: z.number().int(), rejected: z.number().int() })),
});

export const funnelOp = defineOperation({
  method: 'GET',
  path: '/api/agents/{agentId}/discovery-funnel',
  ids: { path: { agentId: 'agent' } },
  summary: 'The discovery funnel: the recent qualification cohort (last 30 days) apart from current totals',
  tag,
  auth: 'user',
  params: z.object({ agentId: z.uuid() }),
  responses: { 200: Funnel },
  errors: { 400: ['invalid_id', 'invalid_user'], ...common },
  handler: ({ em, actor, params }) => funnel(em, actor, params.agentId),
});

export const rejectionsOp = defineOperation({
  method: 'GET',
  path: '/api/agents/{agentId}/rejections',
  ids: { path: { agentId: 'agent' } },
  summary: 'Rejected candidates grouped by their first failed check, most frequent first',
  tag,
  auth: 'user',
  params: z.object({ agentId: z.uuid() }),
  responses: {
    200: z.object({
      total: z.number().int(),
      reasons: z.array(z.object({ reason: z.string(), count: z.number().int() })),
    }),
  },
  errors: { 400: ['invalid_id', 'invalid_user'], ...common },
  handler: ({ em, actor, params }) => rejectionBreakdown(em, actor, params.agentId),
});

const RejectedProfileView = z.object({
  id: z.uuid(),
  run_id: z.uuid().nullable(),
  signal_key: z.string(),
  score: z.number().int(),
  reason: z.string(),
  reasons: z.array(z.string()),
  candidate: z.record(z.string(), z.unknown()),
  created_at: Timestamp,
});

export const rejectedProfilesOp = defineOperation({
  method: 'GET',
  path: '/api/agents/{agentId}/rejected-profiles',
  ids: { path: { agentId: 'agent' } },
  summary: 'Rejected candidates of an agent (not promoted), optionally for one reason',
  tag,
  auth: 'user',
  params: z.object({ agentId: z.uuid() }),
  query: z.object({ ...pageQuery, reason: text({ max: 100 }).optional() }),
  responses: { 200: pageSchema(RejectedProfileView) },
  errors: { 400: ['invalid_id', 'invalid_query', 'invalid_user'], ...common },
  handler: async ({ em, actor, params, query }) => {
    const agent = await requireAgent(em, actor, params.agentId);
    const rows = await listRejectedProfiles(em, agent.id, { ...toPageRequest(query), reason: query.reason });
    return page(rows, query.limit, (r) => ({
      id: r.id,
      run_id: r.runId ?? null,
      signal_key: r.signalKey,
      score: r.score,
      reason: r.primaryReason,
      reasons: [...r.reasons],
      candidate: r.candidate,
      created_at: r.createdAt.toISOString(),
    }));
  },
});

export const recentRunsOp = defineOperation({
  method: 'GET',
  path: '/api/me/recent-signal-runs',
  summary: 'The latest discovery runs of the effective workspace, newest first',
  tag,
  auth: 'user',
  query: z.object(pageQuery),
  responses: { 200: pageSchema(RunView) },
  errors: { 400: ['invalid_query', 'invalid_user'], 401: ['unauthorized'], 403: ['not_assigned'] },
  handler: async ({ em, actor, query }) =>
    page(await recentRuns(em, actor, toPageRequest(query)), query.limit, toRunView),
});
