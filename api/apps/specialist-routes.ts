// A product's specialist runs (the record of every AI call) and their activity over a window.
import { z } from 'zod';
import { getSpecialistRun, listSpecialistRuns, specialistActivity } from '../../domain/ai/specialist-runs.js';
import { page, toPageRequest } from '../../lib/pagination.js';
import { defineOperation } from '../operation.js';
import {
  ListSpecialistRunsQuery,
  SpecialistActivityQuery,
  SpecialistActivityView,
  SpecialistRunPage,
  SpecialistRunView,
  toSpecialistRunView,
} from './specialist-schemas.js';

const tag = 'apps';
const AppParams = z.object({ appId: z.uuid() });
const RunParams = z.object({ appId: z.uuid(), runId: z.uuid() });
const errors = {
  400: ['invalid_id', 'invalid_user'],
  401: ['unauthorized'],
  403: ['not_assigned'],
  404: ['not_found'],
};

export const specialistActivityOp = defineOperation({
  method: 'GET',
  path: '/api/apps/{appId}/specialist-activity',
  ids: { path: { appId: 'app' } },
  summary: 'AI calls of a product over the last `days` UTC days (today included): totals, by kind, by day',
  tag,
  auth: 'user',
  params: AppParams,
  query: SpecialistActivityQuery,
  responses: { 200: SpecialistActivityView },
  errors: { ...errors, 400: ['invalid_id', 'invalid_query', 'invalid_user'] },
  handler: ({ em, actor, params, query }) => specialistActivity(em, actor, params.appId, { days: query.days }),
});

export const listSpecialistRunsOp = defineOperation({
  method: 'GET',
  path: '/api/apps/{appId}/specialist-runs',
  ids: { path: { appId: 'app' }, query: { agent_id: 'agent' } },
  summary: 'AI calls (specialist runs) of a product, newest first; filters kind, status, agent_id',
  tag,
  auth: 'user',
  params: AppParams,
  query: ListSpecialistRunsQuery,
  responses: { 200: SpecialistRunPage },
  errors: { ...errors, 400: ['invalid_id', 'invalid_query', 'invalid_user'] },
  handler: async ({ em, actor, params, query }) =>
    page(
      await listSpecialistRuns(
        em,
        actor,
        { appId: params.appId, agentId: query.agent_id, kind: query.kind, status: query.status },
        toPageRequest(query),
      ),
      query.limit,
      toSpecialistRunView,
    ),
});

export const getSpecialistRunOp = defineOperation({
  method: 'GET',
  path: '/api/apps/{appId}/specialist-runs/{runId}',
  ids: { path: { appId: 'app', runId: { within: 'appId', child: 'specialist_run' } } },
  summary: 'One AI call of a product: input summary, status, timings, tokens, cost and result',
  tag,
  auth: 'user',
  params: RunParams,
  responses: { 200: SpecialistRunView },
  errors,
  handler: async ({ em, actor, params }) =>
    toSpecialistRunView(await getSpecialistRun(em, actor, params.appId, params.runId)),
});
