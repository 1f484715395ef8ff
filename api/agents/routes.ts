// Discovery agents: CRUD with the status machine, signals and sources (docs/discovery.md).
import { defineOperation, reply } from '../operation.js';
import { page, toPageRequest } from '../../lib/pagination.js';
import { requireApp } from '../../domain/apps/apps.js';
import {
  activeAgents,
  createAgent,
  deleteAgent,
  listAgents,
  listSignals,
  listSources,
  replaceSignals,
  requireAgent,
  setSource,
  syncAgentSchedule,
  updateAgent,
} from '../../domain/agents/agents.js';
import {
  ActiveAgentView,
  AgentPage,
  AgentParams,
  AgentView,
  AppParams,
  CreateAgentBody,
  DemoSimulation,
  ListAgentsQuery,
  PutSignalsBody,
  PutSourceBody,
  SignalView,
  SourceParams,
  SourceView,
  UpdateAgentBody,
  toAgentView,
  toDemoSimulation,
  toSignalView,
  toSourceView,
} from './schemas.js';
import { z } from 'zod';
import { Timestamp } from '../schemas.js';

const tag = 'agents';
const common = { 401: ['unauthorized'], 403: ['not_assigned'], 404: ['not_found'] };

export const listAgentsOp = defineOperation({
  method: 'GET',
  path: '/api/apps/{appId}/agents',
  ids: { path: { appId: 'app' } },
  summary: 'Discovery agents of a product (optionally by status)',
  tag,
  auth: 'user',
  params: AppParams,
  query: ListAgentsQuery,
  responses: { 200: AgentPage },
  errors: { 400: ['invalid_id', 'invalid_query', 'invalid_user'], ...common },
  handler: async ({ em, actor, params, query }) => {
    await requireApp(em, actor, params.appId);
    return page(
      await listAgents(em, actor, params.appId, { ...toPageRequest(query), status: query.status }),
      query.limit,
      toAgentView,
    );
  },
});

export const createAgentOp = defineOperation({
  method: 'POST',
  path: '/api/apps/{appId}/agents',
  operationId: 'createAgent',
  ids: { path: { appId: 'app' }, body: { list_id: { kind: 'list', missing: [400, 'invalid_list_id'] } } },
  summary: 'Create a discovery agent (status draft); counts against the plan’s agent limit',
  tag,
  auth: 'user',
  params: AppParams,
  body: CreateAgentBody,
  responses: { 201: AgentView },
  errors: {
    400: ['invalid_body', 'invalid_id', 'invalid_list_id', 'invalid_user'],
    401: ['unauthorized'],
    403: ['not_assigned', 'plan_limit_reached'],
    404: ['not_found'],
  },
  handler: async ({ em, actor, params, body }) => toAgentView(await createAgent(em, actor, params.appId, body)),
});

export const getAgentOp = defineOperation({
  method: 'GET',
  path: '/api/agents/{agentId}',
  ids: { path: { agentId: 'agent' } },
  summary: 'A discovery agent',
  tag,
  auth: 'user',
  params: AgentParams,
  responses: { 200: AgentView },
  errors: { 400: ['invalid_id', 'invalid_user'], ...common },
  handler: async ({ em, actor, params }) => toAgentView(await requireAgent(em, actor, params.agentId)),
});

export const updateAgentOp = defineOperation({
  method: 'PUT',
  path: '/api/agents/{agentId}',
  ids: { path: { agentId: 'agent' }, body: { list_id: { kind: 'list', missing: [400, 'invalid_list_id'] } } },
  summary:
    'Update a discovery agent (every field optional and nullable); needs an active subscription. Demo workspaces get a simulation.',
  tag,
  auth: 'user',
  demo: 'simulate',
  params: AgentParams,
  body: UpdateAgentBody,
  responses: { 200: z.union([AgentView, DemoSimulation]) },
  errors: {
    400: ['invalid_body', 'invalid_id', 'invalid_list_id', 'invalid_transition', 'invalid_user'],
    401: ['unauthorized'],
    403: ['not_assigned', 'subscription_required'],
    404: ['not_found'],
  },
  handler: async ({ em, actor, params, body, services }) => {
    const r = await updateAgent(em, actor, services.jobs, params.agentId, body);
    return r.simulated ? toDemoSimulation('update', r.agent, r.changes) : toAgentView(r.agent);
  },
});

export const deleteAgentOp = defineOperation({
  method: 'DELETE',
  path: '/api/agents/{agentId}',
  ids: { path: { agentId: 'agent' } },
  summary: 'Delete a discovery agent (its signals and sources go with it). Demo workspaces get a simulation (200).',
  tag,
  auth: 'user',
  demo: 'simulate',
  params: AgentParams,
  responses: { 204: null, 200: DemoSimulation },
  errors: { 400: ['invalid_id', 'invalid_user'], ...common },
  handler: async ({ em, actor, params, services }) => {
    const r = await deleteAgent(em, actor, services.jobs, params.agentId);
    return r.simulated ? reply(200, toDemoSimulation('delete', r.agent, [])) : reply(204);
  },
});

export const getSignalsOp = defineOperation({
  method: 'GET',
  path: '/api/agents/{agentId}/signals',
  ids: { path: { agentId: 'agent' } },
  summary: 'The signals of an agent (what indicates a lead), oldest first',
  tag,
  auth: 'user',
  params: AgentParams,
  responses: { 200: z.array(SignalView) },
  errors: { 400: ['invalid_id', 'invalid_user'], ...common },
  handler: async ({ em, actor, params }) => {
    const agent = await requireAgent(em, actor, params.agentId);
    return (await listSignals(em, agent.id)).map(toSignalView);
  },
});

export const putSignalsOp = defineOperation({
  method: 'PUT',
  path: '/api/agents/{agentId}/signals',
  ids: { path: { agentId: 'agent' } },
  summary: 'Replace the signals of an agent; a signal keeps its id when its key stays',
  tag,
  auth: 'user',
  params: AgentParams,
  body: PutSignalsBody,
  responses: { 200: z.array(SignalView) },
  errors: { 400: ['invalid_body', 'invalid_id', 'invalid_signal', 'invalid_transition', 'invalid_user'], ...common },
  handler: async ({ em, actor, params, body }) =>
    (await replaceSignals(em, actor, params.agentId, body.signals)).map(toSignalView),
});

export const getSourcesOp = defineOperation({
  method: 'GET',
  path: '/api/agents/{agentId}/sources',
  ids: { path: { agentId: 'agent' } },
  summary: 'Every discovery source with this agent’s settings (never configured: disabled)',
  tag,
  auth: 'user',
  params: AgentParams,
  responses: { 200: z.array(SourceView) },
  errors: { 400: ['invalid_id', 'invalid_user'], ...common },
  handler: async ({ em, actor, params }) => {
    const agent = await requireAgent(em, actor, params.agentId);
    return listSources(em, agent.id);
  },
});

export const putSourceOp = defineOperation({
  method: 'PUT',
  path: '/api/agents/{agentId}/sources/{source}',
  ids: { path: { agentId: 'agent', source: { value: 'a source name' } } },
  summary: 'Enable, disable or configure one source of an agent',
  tag,
  auth: 'user',
  params: SourceParams,
  body: PutSourceBody,
  responses: { 200: SourceView },
  errors: { 400: ['invalid_body', 'invalid_id', 'invalid_user'], ...common },
  handler: async ({ em, actor, params, body }) =>
    toSourceView(await setSource(em, actor, params.agentId, params.source, body)),
});

export const activeAgentsOp = defineOperation({
  method: 'GET',
  path: '/api/me/active-agents',
  summary: 'Active discovery agents of the effective workspace, most recently changed first (at most 200)',
  tag,
  auth: 'user',
  responses: { 200: z.array(ActiveAgentView) },
  errors: { 400: ['invalid_user'], 401: ['unauthorized'], 403: ['not_assigned'] },
  handler: async ({ em, actor }) =>
    (await activeAgents(em, actor)).map((a) => ({
      id: a.id,
      name: a.name,
      app_id: a.app.id,
      app_name: a.app.getEntity().name,
      status: a.status as 'active',
      updated_at: a.updatedAt.toISOString(),
    })),
});

export const nextLaunchesOp = defineOperation({
  method: 'GET',
  path: '/api/agents/{agentId}/next-launches',
  ids: { path: { agentId: 'agent' } },
  summary:
    'When the agent’s schedule launches next (config.schedule: hourly, daily (default), weekly or off); none while paused',
  tag,
  auth: 'user',
  params: AgentParams,
  responses: {
    200: z.object({
      agent_id: z.uuid(),
      scheduled: z.boolean(),
      interval: z.enum(['hourly', 'daily', 'weekly', 'off']),
      paused: z.boolean(),
      next_launches: z.array(Timestamp),
    }),
  },
  errors: { 400: ['invalid_id', 'invalid_user'], ...common },
  handler: async ({ em, actor, params, services }) => {
    const agent = await requireAgent(em, actor, params.agentId);
    // A Schedule out of step with the agent (a sync after a change was lost) is synced before answering.
    return services.jobs.agentNextLaunches(agent, () => syncAgentSchedule(em, services.jobs, agent.id));
  },
});
